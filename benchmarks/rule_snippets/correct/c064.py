import tensorflow as tf

schedule = iter([0.1, 0.05, 0.01])
w = tf.Variable([1.0, 1.0])


@tf.function
def apply_step(lr, grad):
    w.assign_sub(lr * grad)
    return w


for _ in range(3):
    lr = tf.constant(next(schedule), dtype=tf.float32)
    apply_step(lr, tf.constant([0.5, -0.5]))
