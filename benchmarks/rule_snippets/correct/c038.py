import numpy as np
import tensorflow as tf

_class_weights = None


def class_weights():
    global _class_weights
    if _class_weights is None:
        counts = np.array([500, 120, 30], dtype="float32")
        _class_weights = counts.sum() / (len(counts) * counts)
    return _class_weights


@tf.function
def weighted_xent(labels, logits):
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    weights = tf.gather(tf.constant(class_weights()), labels)
    return tf.reduce_mean(per_example * weights)


loss = weighted_xent(tf.constant([0, 2, 1]), tf.random.normal([3, 3]))
