import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
train_loss = tf.keras.metrics.Mean()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss.update_state(loss)


xs = tf.random.normal([256, 3])
ds = tf.data.Dataset.from_tensor_slices((xs, tf.reduce_sum(xs, 1, keepdims=True))).batch(32)

history = []
for epoch in range(4):
    train_loss.reset_state()
    for x, y in ds:
        train_step(x, y)
    history.append(float(train_loss.result()))
print(history)
