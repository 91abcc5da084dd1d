"""Code that resembles a pitfall closely but is correct."""

import numpy as np
import tensorflow as tf
from tensorflow import keras

# Watching a whole list of tensors watches each of them.
a = tf.constant(1.0)
b = tf.constant(2.0)
params = [a, b]
with tf.GradientTape() as tape:
    tape.watch(params)
    loss = a * b
grads = tape.gradient(loss, [a, b])

extra = [tf.constant(3.0)]
c = tf.constant(4.0)
with tf.GradientTape() as tape:
    tape.watch([a, *extra, c])
    loss = a * c
grads = tape.gradient(loss, [a, c])

# dtype given positionally (shape, minval, maxval, dtype) or as a conversion hint.
noise = tf.random.uniform([3], 0, 10, tf.int32)
shifted = noise + tf.constant([1, 2, 3])
gauss = tf.random.normal([3], 0.0, 1.0, tf.float64)
gauss_sum = gauss + tf.constant([1.0, 2.0, 3.0], dtype=tf.float64)
hinted = tf.convert_to_tensor([1, 2], dtype_hint=tf.float32) * tf.constant([0.5, 0.5])

# One tf.function per model: each is traced once for its own model.
models = [keras.layers.Dense(2), keras.layers.Dense(3)]
compiled = []
for m in models:
    compiled.append(tf.function(m))
serving = {}
for name, layer in zip(["small", "large"], models):
    serving[name] = tf.function(layer.call)
for size in (8, 16):
    net = keras.Sequential([keras.layers.Dense(size)])
    fast_net = tf.function(net)


# Lazy creation, bookkept in a list or a global: runs on the first trace only.
class LazyStack(tf.Module):
    def __init__(self):
        super().__init__()
        self.kernels = []

    @tf.function
    def __call__(self, x):
        if not self.kernels:
            self.kernels.append(tf.Variable(tf.zeros([x.shape[-1], 4])))
        return x @ self.kernels[0]


_scale = None


@tf.function
def scaled(x):
    global _scale
    if _scale is None:
        _scale = tf.Variable(2.0)
    return x * _scale


# Debug branches that only run when functions are forced to run eagerly.
@tf.function
def debug_step(x):
    if tf.executing_eagerly():
        print("eager debugging:", x.numpy())
    return x * 2


def masked_weights(layer, mask):
    kernel = layer.kernel  # an alias: the layer keeps its variable
    kernel = kernel * mask
    return kernel


def first_weight(variables):
    v = variables[0]
    v = v * 2
    return np.asarray(v)


# ``/`` on int32 tensors gives float64: no int/float mix below.
hits = tf.constant([1, 2, 3])
ratios = hits / tf.constant(6)
scores = ratios * tf.constant([0.5, 0.25, 0.25], dtype=tf.float64)
