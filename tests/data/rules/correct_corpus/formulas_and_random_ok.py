"""Correct formulas and Keras 3 random draws that look like TFC022..TFC025's slips."""

import math

import keras
import numpy as np
import tensorflow as tf
from keras import ops

betas = np.linspace(1e-4, 0.02, 100, dtype="float32")
alpha_bars = tf.constant(np.cumprod(1.0 - betas))


def q_sample(x0, t, noise):
    ab = tf.gather(alpha_bars, t)[:, None]
    return tf.sqrt(ab) * x0 + tf.sqrt(1.0 - ab) * noise


def ddim_x0(xt, eps, ab):
    return (xt - ops.sqrt(1.0 - ab) * eps) / ops.sqrt(ab)


def mixup(a, b, lam):
    return lam * a + (1.0 - lam) * b


def correlated_pair(z1, z2, rho):
    return z1, rho * z1 + np.sqrt(1.0 - rho**2) * z2


def gaussian_nll(y, mu, sigma):
    return tf.reduce_mean(
        0.5 * tf.math.log(2.0 * math.pi * tf.square(sigma)) + tf.square(y - mu) / (2.0 * sigma**2)
    )


def gaussian_nll_var(y, mu, var):
    return np.mean(0.5 * np.log(2 * np.pi * var) + (y - mu) ** 2 / (2 * var))


def gaussian_nll_log_sigma(y, mu, log_sigma):
    sigma = ops.exp(log_sigma)
    return ops.mean(0.5 * np.log(2 * np.pi) + log_sigma + (y - mu) ** 2 / (2 * sigma**2))


class GaussianNoiseLayer(keras.layers.Layer):
    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev = stddev
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, x, training=False):
        if training:
            return x + keras.random.normal(
                ops.shape(x), stddev=self.stddev, seed=self.seed_generator
            )
        return x


class OpSeededDropout(keras.layers.Layer):
    def call(self, x):
        return tf.nn.dropout(x, rate=0.2, seed=5) + tf.random.normal(tf.shape(x), seed=1)


@tf.function
def unseeded_noise(x):
    return x + keras.random.normal(ops.shape(x))


def fixed_eval_noise(n):
    return keras.random.normal((n, 4), seed=0)  # made once, the same on purpose


evaluation_noise = fixed_eval_noise(16)


def run_tflite(model_bytes, rows):
    interpreter = tf.lite.Interpreter(model_content=model_bytes)
    interpreter.allocate_tensors()
    source = interpreter.get_input_details()[0]["index"]
    target = interpreter.get_output_details()[0]["index"]
    results = []
    for row in rows:
        interpreter.set_tensor(source, row[None, :])
        interpreter.invoke()
        results.append(interpreter.get_tensor(target)[0])
    return np.stack(results)
