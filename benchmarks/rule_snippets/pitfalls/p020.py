import tensorflow as tf

global_step = tf.Variable(0, trainable=False, name="global_step")
base_lr = 0.1


def warmup_fraction():
    # linear warmup over the first 1000 steps
    return tf.minimum(1.0, global_step * 0.001)


for _ in range(5):
    global_step.assign_add(1)
lr_now = base_lr * warmup_fraction()
