import numpy as np
import keras
from keras import layers, ops


class LearnedPositionalBias(layers.Layer):
    def build(self, input_shape):
        self.bias = self.add_weight(
            shape=(input_shape[1], input_shape[2]), initializer="zeros", name="pos_bias"
        )

    def call(self, x):
        return x + self.bias


inputs = keras.Input(shape=(10, 8))
h = LearnedPositionalBias()(inputs)
outputs = layers.Dense(1)(layers.Flatten()(h))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
