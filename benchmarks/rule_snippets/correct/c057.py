import tensorflow as tf


@tf.function
def noisy_identity(x):
    def log_on_host(value):
        print("host received", value.shape)
        return value

    y = tf.py_function(log_on_host, [x], tf.float32)
    y.set_shape(x.shape)
    return y + tf.random.normal(tf.shape(x), stddev=0.01)


out = noisy_identity(tf.ones([2, 3]))
