import tensorflow as tf


def upsample_nearest(images):
    h = tf.shape(images)[1] * 2
    w = tf.shape(images)[2] * 2
    return tf.image.resize(images, tf.stack([h, w]), method="nearest")


imgs = tf.random.uniform([2, 8, 8, 3])
big = upsample_nearest(imgs)
brighter = imgs * 2
centered = imgs - 1
