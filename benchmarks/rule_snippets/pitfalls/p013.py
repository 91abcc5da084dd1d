import tensorflow as tf

LR_SCHEDULE = [1e-3] * 3 + [5e-4] * 3 + [1e-4] * 4

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="tanh"), tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.SGD()


@tf.function
def train_step(x, y, lr):
    opt.learning_rate.assign(lr)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


features = tf.random.normal([256, 4])
labels = tf.reduce_sum(features ** 2, axis=1, keepdims=True)
ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(64)

for epoch in range(len(LR_SCHEDULE)):
    for x, y in ds:
        train_step(x, y, LR_SCHEDULE[epoch])
