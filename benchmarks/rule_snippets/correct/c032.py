import numpy as np
import tensorflow as tf


@tf.function
def clipped_update(weights, grads, max_norm=1.0):
    if tf.executing_eagerly():
        print("grad norm (numpy):", np.linalg.norm(grads.numpy()))
    norm = tf.norm(grads)
    factor = tf.minimum(1.0, max_norm / (norm + 1e-12))
    return weights - factor * grads


new_w = clipped_update(tf.ones([3]), tf.constant([3.0, 4.0, 0.0]))
