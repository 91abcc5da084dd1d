import numpy as np
import keras
from keras import layers


class AuditedClassifier(keras.Model):
    def __init__(self, num_classes=3, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(32, activation="relu")
        self.head = layers.Dense(num_classes, activation="softmax")
        self.eval_batches = 0

    def call(self, inputs):
        return self.head(self.hidden(inputs))

    def test_step(self, data):
        self.eval_batches += 1
        return super().test_step(data)


clf = AuditedClassifier()
clf.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
x = np.random.rand(90, 8).astype("float32")
y = np.random.randint(0, 3, size=(90,))
clf.fit(x, y, epochs=1, verbose=0)
clf.evaluate(x, y, verbose=0)
