import tensorflow as tf


def mean_squared_error(y_true, y_pred):
    sq_err = tf.square(tf.cast(y_true, tf.float32) - y_pred)
    return tf.reduce_sum(sq_err) / tf.size(sq_err)


y_true = tf.constant([1.0, 2.0, 3.0])
y_pred = tf.constant([1.1, 1.9, 3.4])
print(mean_squared_error(y_true, y_pred))
