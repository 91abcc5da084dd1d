import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.Input((10,)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(1),
])


def manual_sgd_step(x, y, lr=0.01):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for v, g in zip(model.trainable_variables, grads):
        v.assign_sub(lr * g)
    return loss


manual_sgd_step(tf.random.normal([32, 10]), tf.random.normal([32, 1]))
