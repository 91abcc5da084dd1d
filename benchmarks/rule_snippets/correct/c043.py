import tensorflow as tf
import tensorflow.experimental.numpy as tnp

tnp.experimental_enable_numpy_behavior(prefer_float32=True)

counts = tf.constant([3, 5, 2])
weights = tf.constant([0.2, 0.5, 0.3])
weighted = counts * weights
per_item = tf.reduce_sum(weighted) / tf.size(counts)
print(per_item)
