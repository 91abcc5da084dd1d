import numpy as np
import keras
from keras import layers, ops


class TemperatureScaled(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.body = layers.Dense(16, activation="relu")
        self.logits = layers.Dense(4)

    def build(self, input_shape):
        self.log_temperature = keras.Variable(0.0, name="log_temperature")
        super().build(input_shape)

    def call(self, inputs):
        return self.logits(self.body(inputs)) / ops.exp(self.log_temperature)


model = TemperatureScaled()
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(np.random.rand(64, 6), np.random.randint(0, 4, 64), epochs=1, verbose=0)
