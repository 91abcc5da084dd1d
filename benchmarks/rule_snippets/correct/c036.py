import tensorflow as tf


@tf.function
def newton_sqrt(value, num_iters):
    guess = value / 2.0
    for _ in range(num_iters):
        guess = 0.5 * (guess + value / guess)
    return guess


roots = newton_sqrt(tf.constant([2.0, 9.0, 10.0]), tf.constant(20))
