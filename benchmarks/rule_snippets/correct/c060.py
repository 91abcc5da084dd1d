import numpy as np
import keras
from keras import layers


class StepCountingModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(1)
        self.steps_run = keras.Variable(0, trainable=False, dtype="int64")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.steps_run.assign_add(1)
        return super().train_step(data)


class EpochCounter(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs_seen = 0

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_seen += 1


model = StepCountingModel()
model.compile(optimizer="sgd", loss="mse")
counter = EpochCounter()
model.fit(np.random.rand(40, 2), np.random.rand(40, 1), epochs=2, batch_size=10,
          callbacks=[counter], verbose=0)
