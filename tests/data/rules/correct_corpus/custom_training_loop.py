"""A hand-written training loop: GradientTape, apply_gradients, metrics, tf.data."""

import numpy as np
import tensorflow as tf
from tensorflow import keras

BATCH_SIZE = 64
EPOCHS = 3
LEARNING_RATE = 1e-3

(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
x_test = x_test.reshape(-1, 784).astype("float32") / 255.0

train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, y_train))
    .shuffle(10_000)
    .map(lambda x, y: (tf.cast(x, tf.float32), tf.cast(y, tf.int64)),
         num_parallel_calls=tf.data.AUTOTUNE)
    .batch(BATCH_SIZE)
    .prefetch(tf.data.AUTOTUNE)
)
test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH_SIZE)

model = keras.Sequential(
    [
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(10),
    ]
)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(LEARNING_RATE)
train_loss = keras.metrics.Mean(name="train_loss")
train_acc = keras.metrics.SparseCategoricalAccuracy(name="train_acc")
test_acc = keras.metrics.SparseCategoricalAccuracy(name="test_acc")


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        loss += sum(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss.update_state(loss)
    train_acc.update_state(y, logits)
    return loss


@tf.function
def test_step(x, y):
    logits = model(x, training=False)
    test_acc.update_state(y, logits)


@tf.function
def train_epoch(dataset):
    # AutoGraph turns a loop over a dataset into a graph loop.
    total = tf.constant(0.0)
    for x, y in dataset:
        total += train_step(x, y)
    return total


step = 0
history = []
for epoch in range(EPOCHS):
    train_loss.reset_state()
    train_acc.reset_state()
    test_acc.reset_state()
    for batch, (x, y) in enumerate(train_ds):
        loss = train_step(x, y)
        step += 1
        if step % 100 == 0:
            print(f"step {step}: loss={loss.numpy():.4f}")
    for x, y in test_ds:
        test_step(x, y)
    history.append(float(train_loss.result()))
    print(
        f"epoch {epoch}: loss={train_loss.result().numpy():.4f} "
        f"acc={train_acc.result().numpy():.3f} test_acc={test_acc.result().numpy():.3f}"
    )
    print("optimizer steps:", int(optimizer.iterations.numpy()))

np.save("history.npy", np.array(history))
