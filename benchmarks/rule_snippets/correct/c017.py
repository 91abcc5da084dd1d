import numpy as np
import tensorflow as tf

FREQS = np.arange(1, 4, dtype="float32")


@tf.function
def fourier_features(t):
    t = tf.expand_dims(t, -1)
    angles = 2.0 * np.pi * t * FREQS
    scale = np.float32(0.5)
    return scale * tf.concat([tf.sin(angles), tf.cos(angles)], axis=-1)


feats = fourier_features(tf.linspace(0.0, 1.0, 8))
