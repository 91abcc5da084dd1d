import tensorflow as tf
import keras


class ContrastiveModel(keras.Model):
    def __init__(self, encoder, temperature=0.1, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.temperature = temperature
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def train_step(self, data):
        view_a, view_b = data
        with tf.GradientTape() as tape:
            za = tf.math.l2_normalize(self.encoder(view_a, training=True), axis=1)
            zb = tf.math.l2_normalize(self.encoder(view_b, training=True), axis=1)
            logits = tf.matmul(za, zb, transpose_b=True) / self.temperature
            labels = tf.range(tf.shape(za)[0])
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        grads = tape.gradient(loss, self.encoder.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.encoder.trainable_variables))
        self.loss_tracker.update_state(loss)
        print("contrastive loss", loss)
        return {"loss": self.loss_tracker.result()}


encoder = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32), keras.layers.Dense(16)])
model = ContrastiveModel(encoder)
model.compile(optimizer="adam")
