"""A tiny training loop with two TensorFlow pitfalls that tfcoach explains."""

import tensorflow as tf

w = tf.Variable(3.0)
lr = 0.1


@tf.function
def predict(x):
    print("tracing predict with", x)
    return w * x


for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.square(predict(tf.constant(2.0)))
    g = tape.gradient(loss, w)
    w = w - lr * g
