import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


x_all = tf.random.normal([640, 8])
y_all = tf.reduce_sum(x_all, axis=1, keepdims=True)
train_ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(64)

epoch_losses = []
for xb, yb in train_ds:
    loss = train_step(xb, yb)
    epoch_losses.append(float(loss))
print("mean loss:", sum(epoch_losses) / len(epoch_losses))
