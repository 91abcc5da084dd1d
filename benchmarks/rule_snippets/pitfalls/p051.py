import numpy as np
import keras
from keras import layers


class TinyRegressor(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.body = layers.Dense(16, activation="relu")
        self.out_layer = layers.Dense(1)

    def call(self, inputs):
        self.output_scale = self.add_weight(shape=(1,), initializer="ones")
        return self.out_layer(self.body(inputs)) * self.output_scale


reg = TinyRegressor()
preds = reg(np.random.rand(4, 3).astype("float32"))
