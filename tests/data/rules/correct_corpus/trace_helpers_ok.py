"""Helpers a tf.function calls, written so they behave the same on every call.

Plain functions called from a tf.function's body run while it traces; these use TensorFlow
ops for everything that must happen per call, and keep Python side effects for code that
never runs in a trace (eager callers, py_function callbacks, eager-only branches).
"""

import numpy as np
import tensorflow as tf

step_count = tf.Variable(0, dtype=tf.int64)
eager_log = []


def log_values(label, x):
    tf.print(label, tf.reduce_mean(x), tf.reduce_max(x))


def normalize(x):
    mean = tf.reduce_mean(x)
    spread = tf.math.reduce_std(x) + 1e-6
    return (x - mean) / spread


def count_step():
    step_count.assign_add(1)


def describe(x):
    # Eager-only debugging: tf.executing_eagerly() is False while tracing.
    if tf.executing_eagerly():
        print("eager call with", x.numpy())
    return x


def eager_summary(x):
    # Only ever called eagerly, below: a plain Python print is what it should be.
    print("summary:", float(tf.reduce_sum(x)))
    eager_log.append(float(tf.reduce_sum(x)))


@tf.function
def train_step(x):
    count_step()
    x = normalize(x)
    log_values("normalized", x)
    return describe(x)


@tf.function
def with_callback(x):
    def show(value):
        # Handed to tf.py_function, not called here: it runs eagerly on every call.
        print("callback sees", value.numpy())
        return value

    return tf.py_function(show, [x], tf.float32)


@tf.function
def cumulative(xs):
    # Accumulate in the graph: a TensorArray grows on every call, a Python list would not.
    totals = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    running = tf.constant(0.0)
    for i in tf.range(tf.shape(xs)[0]):
        running += xs[i]
        totals = totals.write(i, running)
    return totals.stack()


@tf.function
def with_local_helper(x):
    parts = []

    def add(value):
        parts.append(value * 2)  # the tf.function's own list, made fresh on every trace

    add(x)
    add(x + 1)
    return tf.add_n(parts)


class Trainer(tf.Module):
    def __init__(self):
        super().__init__()
        self.seen = tf.Variable(0)
        self.history = []

    def record(self, loss):
        self.seen.assign_add(1)
        tf.print("loss", loss)

    def remember(self, loss):
        self.history.append(float(loss))  # only called from eager code

    @tf.function
    def step(self, x):
        loss = tf.reduce_sum(x)
        self.record(loss)
        return loss

    def fit(self, batches):
        for batch in batches:
            self.remember(self.step(batch))


generator = None


@tf.function
def noisy_scale(x):
    # Created once, on the first trace; NumPy on constants is a trace-time constant.
    global generator
    if generator is None:
        generator = tf.random.Generator.from_seed(1)
    scale = np.float32(0.5) * np.pi
    squashed = tf.numpy_function(lambda v: np.tanh(v), [x], tf.float32)
    return x * scale + squashed + generator.normal(tf.shape(x))


class FirstCallCounter(tf.Module):
    def __init__(self):
        self.counter = 0

    @tf.function
    def __call__(self, x):
        if self.counter == 0:
            with tf.init_scope():  # the explicit escape for one-time trace-time work
                self.counter += 1
        return x + tf.reduce_mean(x)


data = tf.random.normal([4, 3])
noisy_scale(data)
FirstCallCounter()(data)
train_step(data)
with_callback(tf.constant(1.0))
cumulative(tf.constant([1.0, 2.0, 3.0]))
with_local_helper(tf.constant(1.0))
eager_summary(data)
Trainer().fit([data, data])
