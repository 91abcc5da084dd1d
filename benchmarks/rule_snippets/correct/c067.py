import numpy as np
import keras
from keras import layers, ops


class DebugActivations(layers.Layer):
    def call(self, x):
        print("activation mean:", ops.mean(x), "std:", ops.std(x))
        return x


model = keras.Sequential([
    keras.Input((12,)),
    layers.Dense(24, activation="relu"),
    DebugActivations(),
    layers.Dense(1),
])
model.compile(optimizer="adam", loss="mse", run_eagerly=True)
model.fit(np.random.rand(64, 12), np.random.rand(64, 1), epochs=1, batch_size=32, verbose=0)
