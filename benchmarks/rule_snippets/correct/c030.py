import tensorflow as tf


class Affine(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")
        self.shift = self.add_weight(shape=(input_shape[-1],), initializer="zeros", name="shift")

    def call(self, x):
        return x * self.scale + self.shift


affine = Affine()
opt = tf.keras.optimizers.SGD(0.1)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(affine(x) - y))
    grads = tape.gradient(loss, affine.trainable_variables)
    opt.apply_gradients(zip(grads, affine.trainable_variables))
    return loss


affine.build((None, 3))
step(tf.random.normal([8, 3]), tf.random.normal([8, 3]))
