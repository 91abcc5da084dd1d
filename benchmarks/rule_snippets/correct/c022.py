import tensorflow as tf


def sensitivities(w, b, x):
    with tf.GradientTape(persistent=True) as tape:
        out = tf.nn.sigmoid(tf.reduce_sum(w * x) + b)
        log_out = tf.math.log(out)
    return {
        "dout_dw": tape.gradient(out, w),
        "dout_db": tape.gradient(out, b),
        "dlog_dw": tape.gradient(log_out, w),
    }


w = tf.Variable([0.2, -0.4, 0.1])
b = tf.Variable(0.05)
s = sensitivities(w, b, tf.constant([1.0, 2.0, 3.0]))
