"""Custom layers, tf.Module, lazy variables and Keras train_step overrides."""

from __future__ import annotations

import tensorflow as tf
from tensorflow import keras


class Linear(tf.Module):
    def __init__(self, in_features: int, out_features: int, name: str | None = None) -> None:
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    @tf.function
    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class LazyDense(tf.Module):
    def __init__(self, units: int) -> None:
        super().__init__()
        self.units = units
        self.w = None
        self.b = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], self.units]))
            self.b = tf.Variable(tf.zeros([self.units]))
        return tf.matmul(x, self.w) + self.b


class Counter(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.count = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.total = tf.Variable(0.0)

    @tf.function
    def __call__(self, x):
        self.count.assign_add(1)
        self.total.assign_add(tf.reduce_sum(x))
        return self.total / tf.cast(self.count, tf.float32)


class ScaledDense(keras.layers.Layer):
    def __init__(self, units: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="kernel"
        )
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")
        super().build(input_shape)

    def call(self, inputs):
        outputs = tf.matmul(inputs, self.kernel) + self.bias
        outputs = outputs * self.scale
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


class EMA(keras.layers.Layer):
    """Exponential moving average of the inputs, kept in a non-trainable weight."""

    def __init__(self, decay: float = 0.9, **kwargs) -> None:
        super().__init__(**kwargs)
        self.decay = decay
        self.steps = 0

    def build(self, input_shape):
        self.average = self.add_weight(
            shape=input_shape[1:], initializer="zeros", trainable=False, name="average"
        )

    def call(self, inputs, training=None):
        if training:
            batch_mean = tf.reduce_mean(inputs, axis=0)
            self.average.assign(self.average * self.decay + (1.0 - self.decay) * batch_mean)
        return inputs - self.average


class CustomModel(keras.Model):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
        self.dense1 = keras.layers.Dense(32, activation="relu")
        self.dense2 = keras.layers.Dense(1)

    def call(self, inputs, training=False):
        x = self.dense1(inputs)
        return self.dense2(x)

    @tf.function
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - y_pred))
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.loss_tracker.update_state(tf.reduce_mean(tf.square(y - y_pred)))
        self.mae_metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


class GANLike(keras.Model):
    def __init__(self, generator, discriminator, latent_dim: int) -> None:
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.latent_dim = latent_dim
        self.d_loss_metric = keras.metrics.Mean(name="d_loss")
        self.g_loss_metric = keras.metrics.Mean(name="g_loss")

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, real_images):
        batch_size = tf.shape(real_images)[0]
        noise = tf.random.normal(shape=(batch_size, self.latent_dim))
        fake = self.generator(noise)
        combined = tf.concat([fake, real_images], axis=0)
        labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * tf.random.uniform(tf.shape(labels))
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(combined))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))

        noise = tf.random.normal(shape=(batch_size, self.latent_dim))
        misleading = tf.zeros((batch_size, 1))
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(misleading, self.discriminator(self.generator(noise)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        self.d_loss_metric.update_state(d_loss)
        self.g_loss_metric.update_state(g_loss)
        return {"d_loss": self.d_loss_metric.result(), "g_loss": self.g_loss_metric.result()}


class Stack(keras.Model):
    def __init__(self, depth: int) -> None:
        super().__init__()
        self.blocks = [keras.layers.Dense(16, activation="relu") for _ in range(depth)]
        self.head = keras.layers.Dense(1)

    @tf.function
    def call(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def count_parameters(model: keras.Model) -> int:
    total = 0
    for layer in model.layers:
        for weight in layer.weights:
            total += int(tf.size(weight))
    return total


@tf.function
def l2_penalty(model):
    penalty = 0.0
    for layer in model.layers:
        for weight in layer.trainable_weights:
            penalty += tf.reduce_sum(tf.square(weight))
    return penalty
