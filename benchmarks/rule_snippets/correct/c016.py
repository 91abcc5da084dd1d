import tensorflow as tf


class CountingScaler(tf.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = tf.Variable(scale, trainable=False)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False)

    @tf.function
    def __call__(self, x):
        self.calls.assign_add(1)
        return x * self.scale


scaler = CountingScaler(2.0)
for batch in tf.data.Dataset.range(5).map(lambda i: tf.cast(i, tf.float32)):
    scaler(batch)
print("calls:", int(scaler.calls))
