"""A training script with classic TensorFlow pitfalls (CLI fixture).

Each offending line ends with an ``expect:`` comment naming the rule the CLI
must report there; tests read these markers instead of repeating line numbers.
"""

import tensorflow as tf

learning_rate = 0.01
weights = tf.Variable(tf.random.normal([3, 1]), name="weights")
features = tf.random.normal([8, 3])
targets = tf.random.normal([8, 1])


@tf.function
def predict(batch):
    print("tracing predict for", batch.shape)  # expect: TFC002
    return tf.matmul(batch, weights)


for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((predict(features) - targets) ** 2)
    gradient = tape.gradient(loss, weights)
    weights = weights - learning_rate * gradient  # expect: TFC001

with tf.GradientTape() as tape:
    loss = tf.reduce_sum(predict(features))
first = tape.gradient(loss, weights)
second = tape.gradient(loss, weights)  # expect: TFC006
message = "précision: ok"
