import tensorflow as tf

lr_values = iter([0.1, 0.05, 0.01, 0.005])

w = tf.Variable(tf.ones([3]))


@tf.function
def decay_step(grad):
    lr = next(lr_values)
    w.assign_sub(lr * grad)
    return w


for _ in range(4):
    decay_step(tf.constant([0.1, 0.2, 0.3]))
