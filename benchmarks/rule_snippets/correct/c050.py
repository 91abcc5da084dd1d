import numpy as np
import tensorflow as tf

xs = tf.constant(np.linspace(-2.0, 2.0, 41), dtype=tf.float32)

with tf.GradientTape() as tape:
    tape.watch(xs)
    ys = tf.nn.gelu(xs)

slopes = tape.gradient(ys, xs)
print(slopes.numpy()[:5])
