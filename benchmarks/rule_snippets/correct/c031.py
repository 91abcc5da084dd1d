import tensorflow as tf

x = tf.random.normal([8, 3])
mean = tf.reduce_sum(x) / tf.cast(tf.shape(x)[0] * tf.shape(x)[1], tf.float32)
decay = tf.constant(0.96) ** tf.cast(tf.range(10), tf.float32)


def accuracy(logits, labels):
    predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
    correct = tf.reduce_sum(tf.cast(tf.equal(predicted, labels), tf.float32))
    return correct / tf.cast(tf.size(labels), tf.float32)


acc = accuracy(tf.random.normal([6, 4]), tf.constant([0, 1, 2, 3, 0, 1]))
