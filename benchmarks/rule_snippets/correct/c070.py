import numpy as np
import keras
from keras import layers, ops


class RunningCenter(layers.Layer):
    def __init__(self, momentum=0.9, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def build(self, input_shape):
        self.running_mean = self.add_weight(
            shape=(input_shape[-1],), initializer="zeros", trainable=False, name="running_mean"
        )

    def call(self, x, training=False):
        if training:
            batch_mean = ops.mean(x, axis=0)
            self.running_mean.assign(
                self.momentum * self.running_mean + (1.0 - self.momentum) * batch_mean
            )
            return x - batch_mean
        return x - self.running_mean


model = keras.Sequential([keras.Input((5,)), RunningCenter(), layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(64, 5), np.random.rand(64, 1), epochs=1, verbose=0)
