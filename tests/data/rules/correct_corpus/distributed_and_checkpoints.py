"""Distribution strategies, gradient accumulation, checkpoints, summaries, early stopping."""

import os

import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
GLOBAL_BATCH = 64
ACCUM_STEPS = 4

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


def compute_loss(labels, predictions):
    per_example = loss_object(labels, predictions)
    return tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)


@tf.function
def distributed_train_step(dist_inputs):
    def step_fn(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(features, training=True)
            loss = compute_loss(labels, predictions)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    per_replica = strategy.run(step_fn, args=(dist_inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


accumulators = [
    tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables
]


@tf.function
def accumulate(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(loss_object(y, model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    for acc, grad in zip(accumulators, grads):
        acc.assign_add(grad / ACCUM_STEPS)
    return loss


@tf.function
def apply_accumulated():
    optimizer.apply_gradients(zip(accumulators, model.trainable_variables))
    for acc in accumulators:
        acc.assign(tf.zeros_like(acc))


ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=optimizer, net=model)
manager = tf.train.CheckpointManager(ckpt, "./tf_ckpts", max_to_keep=3)
ckpt.restore(manager.latest_checkpoint)
writer = tf.summary.create_file_writer(os.path.join("logs", "train"))

best_val = float("inf")
patience, wait = 5, 0
initial_lr, decay_rate, decay_steps = 0.1, 0.96, 1000

for epoch in range(100):
    for step_in_epoch in range(ACCUM_STEPS):
        x = tf.random.normal([GLOBAL_BATCH, 8])
        y = tf.random.uniform([GLOBAL_BATCH], maxval=10, dtype=tf.int64)
        loss = accumulate(x, y)
    apply_accumulated()
    ckpt.step.assign_add(1)
    lr = initial_lr * decay_rate ** (int(optimizer.iterations) / decay_steps)
    optimizer.learning_rate.assign(lr)
    with writer.as_default():
        tf.summary.scalar("loss", loss, step=optimizer.iterations)
        tf.summary.scalar("lr", lr, step=optimizer.iterations)
    if int(ckpt.step) % 10 == 0:
        manager.save()
    val_loss = float(loss)
    if val_loss < best_val:
        best_val = val_loss
        wait = 0
    else:
        wait += 1
        if wait >= patience:
            break


class EpochCounter(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs_seen = 0
        self.losses = []

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_seen += 1
        self.losses.append(logs.get("loss"))


class WarmupSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, base_lr, warmup_steps):
        super().__init__()
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = tf.cast(self.warmup_steps, tf.float32)
        return self.base_lr * tf.minimum(1.0, step / warmup)


class FlexibleDenseModule(tf.Module):
    # From the TensorFlow "Introduction to modules" guide: lazy creation on first call.
    def __init__(self, out_features, name=None):
        super().__init__(name=name)
        self.is_built = False
        self.out_features = out_features

    @tf.function
    def __call__(self, x):
        if not self.is_built:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], self.out_features]), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")
            self.is_built = True
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class MySequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = FlexibleDenseModule(out_features=3)
        self.dense_2 = FlexibleDenseModule(out_features=2)

    @tf.function
    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


mixed_policy = tf.keras.mixed_precision.Policy("mixed_float16")
scaled_opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


@tf.function
def mixed_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = tf.reduce_mean(loss_object(y, tf.cast(logits, tf.float32)))
        scaled_loss = scaled_opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
    grads = scaled_opt.get_unscaled_gradients(scaled_grads)
    scaled_opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
