import tensorflow as tf

shared = tf.keras.layers.Dense(32, activation="relu")
cls_head = tf.keras.layers.Dense(3)
reg_head = tf.keras.layers.Dense(1)


def split_gradients(tape, cls_loss, reg_loss, shared_vars):
    g_cls = tape.gradient(cls_loss, shared_vars)
    g_reg = tape.gradient(reg_loss, shared_vars)
    return g_cls, g_reg


def multitask_grads(x, labels, targets):
    with tf.GradientTape() as tape:
        h = shared(x)
        cls_loss = tf.reduce_mean(
            tf.keras.losses.sparse_categorical_crossentropy(labels, cls_head(h), from_logits=True)
        )
        reg_loss = tf.reduce_mean(tf.square(reg_head(h) - targets))
    return split_gradients(tape, cls_loss, reg_loss, shared.trainable_variables)


x = tf.random.normal([8, 5])
shared(x)
g_cls, g_reg = multitask_grads(x, tf.constant([0, 1, 2, 0, 1, 2, 0, 1]), tf.random.normal([8, 1]))
