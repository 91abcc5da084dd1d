import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
opt = tf.keras.optimizers.SGD(0.1)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    tf.print("loss:", loss, "grad norm:", tf.linalg.global_norm(grads))
    return loss


print("Starting training")
train_step(tf.random.normal([8, 3]), tf.random.normal([8, 4]))
print("Done")
