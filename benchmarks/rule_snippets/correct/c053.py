import tensorflow as tf

logits = tf.random.normal([10, 5])
labels = tf.constant([0, 1, 2, 3, 4, 0, 1, 2, 3, 4])

predicted = tf.argmax(logits, axis=1)
matches = tf.equal(predicted, tf.cast(labels, tf.int64))
n_correct = tf.reduce_sum(tf.cast(matches, tf.int32))
n_batches = tf.size(labels) // 4
remainder = tf.size(labels) % 4
