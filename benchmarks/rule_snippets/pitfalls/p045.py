import tensorflow as tf


def describe(name, t):
    print(name, "mean", tf.reduce_mean(t), "max", tf.reduce_max(t))


@tf.function
def attention(q, k, v):
    depth = tf.cast(tf.shape(k)[-1], tf.float32)
    scores = tf.matmul(q, k, transpose_b=True) / tf.sqrt(depth)
    describe("scores", scores)
    weights = tf.nn.softmax(scores, axis=-1)
    return tf.matmul(weights, v)


q = tf.random.normal([2, 5, 8])
k = tf.random.normal([2, 7, 8])
v = tf.random.normal([2, 7, 8])
context = attention(q, k, v)
