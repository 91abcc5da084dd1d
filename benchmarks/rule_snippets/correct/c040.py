import tensorflow as tf


class Linear(tf.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.w = tf.Variable(tf.random.normal([in_dim, out_dim]) * 0.1, name="w")
        self.b = tf.Variable(tf.zeros([out_dim]), name="b")

    @tf.function
    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


lin = Linear(4, 2)
y = lin(tf.random.normal([3, 4]))
