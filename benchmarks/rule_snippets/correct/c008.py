import tensorflow as tf


class Diagnostics:
    def __init__(self, model):
        self.model = model

    def layerwise_gradient_ratio(self, x, y):
        with tf.GradientTape(persistent=True) as tape:
            pred = self.model(x)
            loss = tf.reduce_mean(tf.square(pred - y))
            penalty = tf.add_n([tf.reduce_sum(v ** 2) for v in self.model.trainable_variables])
        g_loss = tape.gradient(loss, self.model.trainable_variables)
        g_pen = tape.gradient(penalty, self.model.trainable_variables)
        return [tf.norm(a) / (tf.norm(b) + 1e-8) for a, b in zip(g_loss, g_pen)]


model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
ratios = Diagnostics(model).layerwise_gradient_ratio(tf.random.normal([8, 4]), tf.random.normal([8, 1]))
