"""Dtype-correct metrics and shape arithmetic: every int/float mix goes through tf.cast."""

import tensorflow as tf


def accuracy(logits, labels):
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
    correct = tf.cast(tf.equal(predictions, tf.cast(labels, tf.int32)), tf.float32)
    batch_size = tf.cast(tf.shape(labels)[0], tf.float32)
    return tf.reduce_sum(correct) / batch_size


def top_class_share(logits):
    top = tf.argmax(logits, axis=1)  # int64 indices
    counts = tf.math.bincount(tf.cast(top, tf.int32))
    return tf.cast(counts, tf.float32) / tf.cast(tf.size(top), tf.float32)


def mean_squared_error(y_true, y_pred):
    squared = tf.square(tf.cast(y_true, tf.float32) - y_pred)
    return tf.reduce_sum(squared) / tf.cast(tf.size(squared), tf.float32)


def split_batch(x):
    batch = tf.shape(x)[0]
    half = batch // 2  # int32 // int: still int32
    rest = batch - half
    return x[:half], x[half:], rest * 2


def flatten_per_example(x):
    shape = tf.shape(x)
    return tf.reshape(x, [shape[0], tf.reduce_prod(shape[1:])])


def positions_and_decay(length, rate=0.96):
    steps = tf.range(length)
    positions = tf.cast(steps, tf.float32) / tf.cast(length, tf.float32)
    decay = tf.constant(rate) ** tf.cast(tf.range(length), tf.float32)
    frequencies = tf.range(0.0, 1.0, 0.25)  # a float argument: float32 range
    return positions * decay, frequencies * 2.0


def masked_mean(values, mask):
    hits = tf.where(mask)  # int64 indices of the true entries
    count = tf.cast(tf.shape(hits)[0], values.dtype)
    return tf.reduce_sum(tf.boolean_mask(values, mask)) / tf.maximum(count, 1.0)


def normalise(x):
    x = tf.convert_to_tensor(x, dtype=tf.float32)
    centred = x - tf.reduce_mean(x, axis=0)
    scale = tf.sqrt(tf.reduce_mean(tf.square(centred), axis=0)) + 1e-6
    return centred / scale


class RunningMean(tf.Module):
    def __init__(self):
        self.total = tf.Variable(0.0)
        self.count = tf.Variable(0, dtype=tf.int64)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def update(self, values):
        self.total.assign_add(tf.reduce_sum(values))
        self.count.assign_add(tf.cast(tf.size(values), tf.int64))
        return self.total / tf.cast(self.count, tf.float32)


logits = tf.random.normal([8, 3])
labels = tf.random.uniform([8], 0, 3, dtype=tf.int64)
acc = accuracy(logits, labels)
halves = split_batch(logits)
ranks_scaled = tf.cast(tf.rank(logits), tf.float32) * 0.5
offsets = tf.range(tf.shape(logits)[0]) * 3 + tf.shape(logits)[1]
per_row = tf.reduce_sum(logits, axis=1) / tf.cast(tf.shape(logits)[1], tf.float32)
tracker = RunningMean()
running = tracker.update(tf.reduce_max(logits, axis=1))
