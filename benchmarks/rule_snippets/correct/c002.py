import tensorflow as tf

vocab_proj = tf.keras.layers.Dense(100)


@tf.function(input_signature=[tf.TensorSpec([1, 20, 32], tf.float32)])
def next_token_logits(hidden_states):
    states = tf.squeeze(hidden_states, axis=0)
    return vocab_proj(states[-1:])


logits = next_token_logits(tf.random.normal([1, 20, 32]))
