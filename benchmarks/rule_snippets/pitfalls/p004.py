import tensorflow as tf

vocab = ["good", "bad", "movie"]
# bag-of-words counts for two reviews
counts = tf.constant([[2, 0, 1],
                      [0, 3, 1]])

weights = tf.Variable([[0.8, -0.1],
                       [-0.9, 0.2],
                       [0.05, 0.05]], name="word_weights")

scores = counts @ weights
sentiment = tf.nn.softmax(scores, axis=-1)
