import tensorflow as tf


@tf.function
def multiscale_kernel_loss(y_true, y_pred):
    """Sum of Gaussian-kernel similarities at several bandwidths."""
    sq = tf.square(y_true - y_pred)
    total = tf.constant(0.0)
    for sigma in [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]:
        total += tf.reduce_mean(1.0 - tf.exp(-sq / (2.0 * sigma ** 2)))
    return total


y = tf.random.normal([32, 1])
y_hat = y + 0.1 * tf.random.normal([32, 1])
loss = multiscale_kernel_loss(y, y_hat)
