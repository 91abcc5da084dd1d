import numpy as np
import keras
from keras import layers, ops


class LearnedPositionalBias(layers.Layer):
    def call(self, x):
        self.bias = self.add_weight(
            shape=(x.shape[1], x.shape[2]), initializer="zeros", name="pos_bias"
        )
        return x + self.bias


inputs = keras.Input(shape=(10, 8))
h = LearnedPositionalBias()(inputs)
outputs = layers.Dense(1)(layers.Flatten()(h))
model = keras.Model(inputs, outputs)
