import tensorflow as tf

NUM_TAGS = 5


@tf.function(input_signature=[
    tf.TensorSpec([None, None, NUM_TAGS], tf.float32, name="emissions"),
    tf.TensorSpec([NUM_TAGS, NUM_TAGS], tf.float32, name="transitions"),
])
def best_path_scores(emissions, transitions):
    # one step of Viterbi-style max-plus recursion over the first two positions
    first = emissions[:, 0, :]
    scores = tf.expand_dims(first, 2) + tf.expand_dims(transitions, 0)
    return tf.reduce_max(scores, axis=1) + emissions[:, 1, :]


trans = tf.random.normal([NUM_TAGS, NUM_TAGS])
em = tf.random.normal([3, 7, NUM_TAGS])
s = best_path_scores(em, trans)
