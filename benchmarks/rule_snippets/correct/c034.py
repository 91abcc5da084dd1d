import tensorflow as tf


def pgd_attack(model, images, labels, eps=8 / 255, alpha=2 / 255, steps=10):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    adv = tf.identity(images)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            tape.watch(adv)
            loss = loss_fn(labels, model(adv, training=False))
        grad = tape.gradient(loss, adv)
        adv = adv + alpha * tf.sign(grad)
        adv = tf.clip_by_value(adv, images - eps, images + eps)
        adv = tf.clip_by_value(adv, 0.0, 1.0)
    return adv


net = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
x = tf.random.uniform([4, 28, 28])
y = tf.constant([1, 7, 3, 0])
x_adv = pgd_attack(net, x, y)
