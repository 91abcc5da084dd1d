import tensorflow as tf

SEQ_LEN = 50
HIDDEN = 32
cell = tf.keras.layers.SimpleRNNCell(HIDDEN)


@tf.function
def encode(sequence):
    state = [tf.zeros([tf.shape(sequence)[0], HIDDEN])]
    last = tf.zeros([tf.shape(sequence)[0], HIDDEN])
    for t in range(SEQ_LEN):
        last, state = cell(sequence[:, t, :], state)
    return last


batch = tf.random.normal([4, SEQ_LEN, 3])
summary = encode(batch)
