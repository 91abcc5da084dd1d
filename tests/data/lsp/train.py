# Entraînement 🚀 — a training step with two classic pitfalls.
import tensorflow as tf

w = tf.Variable(1.0)
lr = 0.1
x = tf.constant(2.0)

with tf.GradientTape() as tape:
    y = w * x
g = tape.gradient(y, w)
label = "é🚀ü"; w = w - lr * g  # the emoji and accents come first on this line


@tf.function
def step(x):
    note = "🚀"; print("tracing", note, x)
    return x * 2
