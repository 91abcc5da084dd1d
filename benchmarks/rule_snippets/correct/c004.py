import numpy as np
import tensorflow as tf

raw = np.random.rand(500, 4).astype("float32") * 10.0
feature_mean = raw.mean(axis=0)
feature_std = raw.std(axis=0) + 1e-6
normalized = (raw - feature_mean) / feature_std


@tf.function
def standardize(x):
    mean = tf.reduce_mean(x, axis=0)
    std = tf.math.reduce_std(x, axis=0)
    return (x - mean) / (std + 1e-6)


batch_stats = standardize(tf.constant(normalized))
