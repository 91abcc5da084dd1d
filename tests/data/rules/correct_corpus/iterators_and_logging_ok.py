# Feeding a tf.function from iterators, and reading training values back without a copy per step.
import itertools

import numpy as np
import tensorflow as tf

EPOCHS = 3
features = np.random.rand(512, 8).astype(np.float32)
labels = np.random.randint(0, 2, size=(512,)).astype(np.int64)

train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(512).batch(64)
model = tf.keras.Sequential(
    [tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2)]
)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)
train_loss = tf.keras.metrics.Mean(name="train_loss")

# A tf.data iterator made once, outside the function: the graph advances it on every call.
batches = iter(train_ds.repeat())


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    train_loss.update_state(loss)
    tf.print("loss:", loss, output_stream="file:///tmp/train.log")
    return loss


@tf.function
def step_from_iterator():
    x, y = next(batches)
    return train_step(x, y)


@tf.function
def evaluate(dataset):
    # A loop over a dataset inside a tf.function is a graph loop, not a Python iterator.
    total = tf.constant(0.0)
    for x, _ in dataset:
        total += tf.reduce_sum(model(x, training=False))
    return total


@tf.function
def scaled_sum(x):
    # Python iterators made inside the function are made again on every trace.
    factors = iter([0.5, 2.0])
    x = x * next(factors)
    for factor in factors:
        x = x * factor
    return x


history = []
for epoch in range(EPOCHS):
    train_loss.reset_state()
    step_losses = []
    for step, (x, y) in enumerate(train_ds):
        loss = train_step(x, y)
        step_losses.append(loss)  # keeps the tensor; nothing is copied yet
        if step % 4 == 0:
            print(f"epoch {epoch} step {step}: loss={loss.numpy():.4f}")
    history.append(tf.stack(step_losses).numpy())  # one copy per epoch
    print(f"epoch {epoch}: mean loss {float(train_loss.result()):.4f}")

for _ in range(4):
    step_from_iterator()
print("steps run:", int(optimizer.iterations.numpy()))

# Early stopping reads the loss on every step because it decides from it when to stop.
previous = float("inf")
for x, y in train_ds.repeat():
    current = float(train_step(x, y))
    if abs(previous - current) < 1e-3:
        break
    previous = current

# A sweep over a few settings written out in the loop header is not a training loop.
for scale in (0.5, 1.0, 2.0):
    print(scale, scaled_sum(tf.constant(scale)).numpy())

# Plain Python iterators in eager code: consumed one item per call, as written.
learning_rates = itertools.cycle([1e-3, 5e-4])
schedule = iter(range(10))
for x, y in train_ds.take(2):
    optimizer.learning_rate.assign(next(learning_rates))
    train_step(x, y)
warmup_steps = next(schedule)
print("evaluation:", evaluate(train_ds).numpy(), scaled_sum(tf.constant(1.0)).numpy())
