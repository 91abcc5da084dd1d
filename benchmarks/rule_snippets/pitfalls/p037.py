import tensorflow as tf

w = tf.Variable(tf.zeros([3, 1]))
opt = tf.keras.optimizers.SGD(0.05)


@tf.function
def sgd_step(x, y, iteration):
    noise_scale = 0.1 / (1.0 + iteration)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w - y))
    (g,) = tape.gradient(loss, [w])
    g = g + noise_scale * tf.random.normal(tf.shape(g))
    opt.apply_gradients([(g, w)])
    return loss


xs = tf.random.normal([1000, 3])
ys = xs @ tf.constant([[1.0], [-2.0], [0.5]])
batches = iter(tf.data.Dataset.from_tensor_slices((xs, ys)).batch(50).repeat())

iteration = 0
while iteration < 300:
    x_batch, y_batch = next(batches)
    sgd_step(x_batch, y_batch, iteration)
    iteration += 1
