import numpy as np
import tensorflow as tf

xs = tf.constant(np.linspace(-3.0, 3.0, 61), dtype=tf.float32)

with tf.GradientTape() as tape:
    ys = tf.nn.softplus(xs)

slopes = tape.gradient(ys, xs)
for x_val, s_val in zip(xs.numpy()[::10], slopes.numpy()[::10]):
    print(f"x={x_val:+.1f}  d softplus/dx={s_val:.3f}")
