import keras
from keras import layers, ops


class LayerScale(layers.Layer):
    def __init__(self, dim, init_value=1e-4, **kwargs):
        super().__init__(**kwargs)
        self.gamma = self.add_weight(
            shape=(dim,), initializer=keras.initializers.Constant(init_value), name="gamma"
        )

    def call(self, x):
        return x * self.gamma


inputs = keras.Input((32,))
outputs = LayerScale(32)(layers.Dense(32)(inputs))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
