import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam()
mean_loss = tf.keras.metrics.Mean()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


xs = tf.random.normal([320, 6])
train_ds = tf.data.Dataset.from_tensor_slices((xs, tf.reduce_sum(xs, 1, keepdims=True))).batch(32)

for epoch in range(3):
    mean_loss.reset_state()
    for x, y in train_ds:
        mean_loss.update_state(train_step(x, y))
    print(f"epoch {epoch}: loss {float(mean_loss.result()):.4f}")
