import numpy as np
import keras
from keras import layers


class ShapeProbe(layers.Layer):
    def call(self, x):
        print("probe got shape", x.shape)
        return x


# quick sanity check of the probe on sample data
ShapeProbe()(np.ones((2, 3), dtype="float32"))

model = keras.Sequential([keras.Input((3,)), layers.Dense(4, activation="relu"), layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(32, 3), np.random.rand(32, 1), epochs=1, verbose=0)
