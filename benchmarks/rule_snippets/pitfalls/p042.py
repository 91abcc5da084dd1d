import tensorflow as tf


class Scorer(tf.Module):
    def __init__(self, n_features):
        super().__init__()
        self.w = tf.Variable(tf.random.normal([n_features, 1]), name="w")
        self.b = tf.Variable(tf.zeros([1]), name="b")

    @tf.function(input_signature=[tf.TensorSpec(shape=[8, 10], dtype=tf.float32)])
    def score(self, x):
        return tf.sigmoid(tf.matmul(x, self.w) + self.b)


scorer = Scorer(10)
result = scorer.score(tf.random.normal([8, 10]))
