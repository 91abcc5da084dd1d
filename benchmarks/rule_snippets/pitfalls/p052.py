import tensorflow as tf


class ScaledResidual(tf.keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = tf.keras.layers.Dense(units)

    def call(self, inputs):
        alpha = tf.Variable(0.1, trainable=True, name="alpha")
        return inputs + alpha * self.dense(inputs)


block = ScaledResidual(4)
out = block(tf.random.normal([2, 4]))
