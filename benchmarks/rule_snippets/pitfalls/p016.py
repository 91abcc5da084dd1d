import tensorflow as tf

MAX_LEN = 128
VOCAB = 5000

SIG = [
    tf.TensorSpec(shape=(16, MAX_LEN), dtype=tf.int32, name="token_ids"),
]

embedding = tf.keras.layers.Embedding(VOCAB, 64)
pool = tf.keras.layers.GlobalAveragePooling1D()
head = tf.keras.layers.Dense(2)


@tf.function(input_signature=SIG)
def classify_tokens(token_ids):
    return tf.nn.softmax(head(pool(embedding(token_ids))))


ids = tf.random.uniform([16, MAX_LEN], maxval=VOCAB, dtype=tf.int32)
probs = classify_tokens(ids)
