import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
WARMUP = 100


@tf.function
def train_step(x, y, step):
    warmup_factor = tf.minimum(1.0, (step + 1) / WARMUP)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    grads = [g * warmup_factor for g in grads]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


x_all = tf.random.normal([512, 10])
y_all = tf.reduce_mean(x_all, axis=1, keepdims=True)
train_ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(512).batch(32)

for step, (x, y) in enumerate(train_ds):
    loss = train_step(x, y, step)
