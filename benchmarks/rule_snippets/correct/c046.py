import tensorflow as tf


def positional_angles(max_len, d_model):
    positions = tf.range(max_len, dtype=tf.float32)[:, tf.newaxis]
    dims = tf.range(d_model, dtype=tf.float32)[tf.newaxis, :]
    rates = 1.0 / tf.pow(10000.0, (2.0 * tf.floor(dims / 2.0)) / d_model)
    return positions * rates * 0.5


angles = positional_angles(50, 16)
