import tensorflow as tf

NUM_HEADS = 8
HEAD_DIM = 4


@tf.function
def split_heads_attention(q, k, v):
    outputs = []
    for h in range(NUM_HEADS):
        sl = slice(h * HEAD_DIM, (h + 1) * HEAD_DIM)
        scores = tf.matmul(q[..., sl], k[..., sl], transpose_b=True) / 2.0
        outputs.append(tf.matmul(tf.nn.softmax(scores, axis=-1), v[..., sl]))
    return tf.concat(outputs, axis=-1)


x = tf.random.normal([2, 5, NUM_HEADS * HEAD_DIM])
y = split_heads_attention(x, x, x)
