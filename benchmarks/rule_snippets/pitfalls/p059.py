import tensorflow as tf

weights = tf.Variable(tf.random.normal([5, 1]))


def momentum_step(x, y, lr=0.01, beta=0.9):
    velocity = tf.Variable(tf.zeros_like(weights))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ weights - y))
    grad = tape.gradient(loss, weights)
    velocity.assign(beta * velocity + grad)
    weights.assign_sub(lr * velocity)
    return loss


compiled_step = tf.function(momentum_step)
compiled_step(tf.random.normal([32, 5]), tf.random.normal([32, 1]))
