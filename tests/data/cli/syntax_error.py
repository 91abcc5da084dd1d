import tensorflow as tf


def broken(:
    return tf.constant(1)
