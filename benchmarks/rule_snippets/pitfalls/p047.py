import numpy as np
import keras
from keras import layers, ops


class GatedResidual(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.proj = layers.Dense(units)
        self.gate = layers.Dense(units, activation="sigmoid")

    def call(self, x):
        g = self.gate(x)
        print("gate openness:", ops.mean(g))
        return x + g * self.proj(x)


model = keras.Sequential([
    keras.Input(shape=(16,)),
    GatedResidual(16),
    layers.Dense(1),
])
model.compile(optimizer="adam", loss="mse")

x_train = np.random.rand(128, 16).astype("float32")
y_train = x_train.sum(axis=1, keepdims=True)
model.fit(x_train, y_train, epochs=2, batch_size=32, verbose=0)
