import tensorflow as tf


@tf.function
def cumulative_decay(signal):
    out = tf.TensorArray(tf.float32, size=1000)
    acc = tf.constant(0.0)
    for i in tf.range(1000):
        acc = 0.95 * acc + signal[i]
        out = out.write(i, acc)
    return out.stack()


smoothed = cumulative_decay(tf.random.normal([1000]))
