import tensorflow as tf

NUM_BLOCKS = 3


@tf.function
def top_eigenvector(matrix):
    n = tf.shape(matrix)[0]
    v = tf.ones([n, 1]) / tf.sqrt(tf.cast(n, tf.float32))
    for _ in range(NUM_BLOCKS * 4):
        v = tf.matmul(matrix, v)
        v = v / tf.norm(v)
    return tf.squeeze(v, axis=1)


a = tf.random.normal([6, 6])
sym = a + tf.transpose(a)
print(top_eigenvector(sym))
