import numpy as np
import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.layers.Dense(8)])


@tf.function
def center_and_encode(features):
    centered = features - np.mean(features, axis=0)
    return encoder(centered)


x = tf.random.normal([32, 5])
codes = center_and_encode(x)
