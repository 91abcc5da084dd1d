"""tf.function calls that do not retrace per value, and functions created once."""

import tensorflow as tf


@tf.function
def scale(x, factor):
    return x * factor


@tf.function
def forward(x, training=False):
    return x if training else x * 0.5


x = tf.ones([4])
for factor in tf.range(10):
    scale(x, factor)
for factor in range(10):
    scale(x, tf.constant(factor, tf.float32))
scale(x, 2.0)
scale(x, 2.0)
forward(x, training=True)
forward(x, training=False)

fast_scale = tf.function(lambda x, f: x * f, reduce_retracing=True)

with_sig = tf.function(
    lambda v, n: v * n,
    input_signature=[tf.TensorSpec([None]), tf.TensorSpec([], tf.float32)],
)
for n in range(5):
    with_sig(x, n)


def make_step(model):
    @tf.function
    def step(batch):
        return model(batch)

    return step


steps = [make_step(m) for m in ("a", "b")]


def helper(v):
    return v + 1


compiled_helper = tf.function(helper)
for item in [tf.constant(1.0), tf.constant(2.0)]:
    compiled_helper(item)


@tf.function
def with_counter(x, n):
    return x + n


for i in range(3):
    with_counter(x, tf.constant(i))


class Trainer(tf.Module):
    def __init__(self):
        super().__init__()
        self.var = tf.Variable(1.0)

    @tf.function
    def step(self, x):
        return self.var * x

    def run(self, data):
        for batch in data:
            self.step(batch)
