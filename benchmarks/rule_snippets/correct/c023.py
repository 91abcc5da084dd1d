import tensorflow as tf

dataset = tf.data.Dataset.from_tensor_slices(tf.random.normal([100, 4])).batch(10).repeat()
batches = iter(dataset)
dense = tf.keras.layers.Dense(1)
opt = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_on_next():
    x = next(batches)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(dense(x)))
    grads = tape.gradient(loss, dense.trainable_variables)
    opt.apply_gradients(zip(grads, dense.trainable_variables))
    return loss


dense.build((None, 4))
for _ in range(5):
    train_on_next()
