import numpy as np
import keras
from keras import layers, ops


class MaskedDense(layers.Layer):
    """Dense layer whose kernel is multiplied by a fixed autoregressive mask."""

    def __init__(self, units, mask, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.mask = mask

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="kernel"
        )
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def call(self, x):
        kernel = self.kernel
        kernel = kernel * self.mask
        return ops.matmul(x, kernel) + self.bias


mask = np.tril(np.ones((8, 8), dtype="float32"), k=-1)
model = keras.Sequential([keras.Input((8,)), MaskedDense(8, mask)])
model.compile(optimizer="adam", loss="mse")
