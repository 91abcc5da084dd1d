import numpy as np
import keras
from keras import layers


def batch_generator(batch_size=16):
    while True:
        x = np.random.rand(batch_size, 10).astype("float32")
        y = (x.sum(axis=1, keepdims=True) > 5).astype("float32")
        yield x, y


model = keras.Sequential([keras.Input((10,)), layers.Dense(8, activation="relu"),
                          layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(batch_generator(), steps_per_epoch=5, epochs=2, verbose=0)
