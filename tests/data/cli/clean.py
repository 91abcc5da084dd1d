"""The same training script written correctly (CLI fixture): no findings."""

import tensorflow as tf

learning_rate = 0.01
weights = tf.Variable(tf.random.normal([3, 1]), name="weights")
features = tf.random.normal([8, 3])
targets = tf.random.normal([8, 1])


@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def predict(batch):
    tf.print("predicting a batch of", tf.shape(batch)[0])
    return tf.matmul(batch, weights)


for step in tf.range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((predict(features) - targets) ** 2)
    gradient = tape.gradient(loss, weights)
    weights.assign_sub(learning_rate * gradient)

with tf.GradientTape(persistent=True) as tape:
    loss = tf.reduce_sum(predict(features))
first = tape.gradient(loss, weights)
second = tape.gradient(loss, weights)
del tape
