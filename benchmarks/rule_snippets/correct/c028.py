import tensorflow as tf


@tf.function
def multi_scale_features(images):
    feats = []
    for size in (32, 64, 96):
        resized = tf.image.resize(images, (size, size))
        feats.append(tf.reduce_mean(resized, axis=[1, 2]))
    return tf.concat(feats, axis=-1)


batch = tf.random.uniform([2, 128, 128, 3])
features = multi_scale_features(batch)
