import tensorflow as tf


class LazyDense(tf.Module):
    """Sonnet-style module: the kernel is created on the first call, once."""

    def __init__(self, units, name=None):
        super().__init__(name=name)
        self.units = units
        self.kernel = None

    def __call__(self, x):
        if self.kernel is None:
            init = tf.random.normal([x.shape[-1], self.units], stddev=0.05)
            self.kernel = tf.Variable(init, name="kernel")
        return tf.matmul(x, self.kernel)


layer = LazyDense(3)
y = layer(tf.ones([2, 5]))
y2 = layer(tf.ones([4, 5]))
