import numpy as np
import tensorflow as tf


def input_sensitivity(model, batch):
    x = tf.convert_to_tensor(batch, dtype=tf.float32)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        out = tf.reduce_sum(model(x))
    return tape.gradient(out, x)


net = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
sens = input_sensitivity(net, np.random.rand(3, 6))
