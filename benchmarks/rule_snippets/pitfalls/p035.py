import tensorflow as tf

EPOCHS = 5
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()


def train_step_fn(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


x_data = tf.random.normal([200, 8])
y_data = tf.cast(x_data[:, 0] > 0, tf.int32)
train_ds = tf.data.Dataset.from_tensor_slices((x_data, y_data)).batch(20)

for epoch in range(EPOCHS):
    train_step = tf.function(train_step_fn)
    for x, y in train_ds:
        train_step(x, y)
