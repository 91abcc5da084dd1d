import tensorflow as tf


def hessian_vector_product(loss_fn, params, vector):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = loss_fn(params)
        grad = inner.gradient(loss, params)
        grad_dot_v = tf.reduce_sum(grad * vector)
    return outer.gradient(grad_dot_v, params)


theta = tf.Variable([1.0, -2.0, 0.5])
hvp = hessian_vector_product(lambda p: tf.reduce_sum(p ** 4), theta, tf.constant([1.0, 0.0, 0.0]))
