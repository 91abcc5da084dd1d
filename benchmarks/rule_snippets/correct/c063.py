import numpy as np
import keras
from keras import layers, ops


class Projection(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        print(f"Projection layer configured with {units} units")

    def build(self, input_shape):
        print("building projection for input shape", input_shape)
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="he_normal")

    def call(self, x):
        return ops.relu(ops.matmul(x, self.w))


model = keras.Sequential([keras.Input((6,)), Projection(8), layers.Dense(1)])
model.compile(optimizer="rmsprop", loss="mse")
