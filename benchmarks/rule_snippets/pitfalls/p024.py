import keras
from keras import ops


class LayerScale(keras.layers.Layer):
    def __init__(self, init_value=1e-4, **kwargs):
        super().__init__(**kwargs)
        self.init_value = init_value

    def call(self, x):
        gamma = keras.Variable(ops.full((x.shape[-1],), self.init_value))
        return x * gamma


inputs = keras.Input((32,))
outputs = LayerScale()(keras.layers.Dense(32)(inputs))
model = keras.Model(inputs, outputs)
