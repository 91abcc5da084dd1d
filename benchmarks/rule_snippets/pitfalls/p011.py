import numpy as np
import tensorflow as tf


def minibatches(n_batches, batch_size=8):
    for _ in range(n_batches):
        yield np.random.rand(batch_size, 4).astype("float32")


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.SGD(0.1)
stream = minibatches(5)


@tf.function
def train_on_stream():
    total = tf.constant(0.0)
    for xb in stream:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb) - 1.0))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        total += loss
    return total


train_on_stream()
