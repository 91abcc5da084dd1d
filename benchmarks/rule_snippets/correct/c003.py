import tensorflow as tf


@tf.function
def soft_threshold(x, lam):
    return tf.sign(x) * tf.maximum(tf.abs(x) - lam, 0.0)


signal = tf.random.normal([100])
sparsity = {}
for lam in [0.1, 0.5, 1.0, 2.0]:
    shrunk = soft_threshold(signal, tf.constant(lam, tf.float32))
    sparsity[lam] = tf.reduce_mean(tf.cast(shrunk == 0.0, tf.float32))
