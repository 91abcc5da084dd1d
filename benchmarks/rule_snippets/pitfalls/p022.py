import tensorflow as tf


class FeatureNormalizer(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.mean = None

    @tf.function
    def adapt(self, batch):
        self.mean = tf.Variable(tf.reduce_mean(batch, axis=0), trainable=False)
        return self.mean

    def __call__(self, x):
        return x - self.mean


norm = FeatureNormalizer()
data = tf.random.normal([100, 4], mean=3.0)
norm.adapt(data)
