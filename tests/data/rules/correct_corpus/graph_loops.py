"""Loops inside tf.function that AutoGraph turns into graph loops, or are meant to unroll."""

import tensorflow as tf


@tf.function
def cumulative(x):
    n = tf.shape(x)[0]
    result = tf.TensorArray(tf.float32, size=n)
    running = tf.constant(0.0)
    for i in tf.range(n):
        running += x[i]
        result = result.write(i, running)
    return result.stack()


@tf.function
def power_sum(x, n):
    # ``n`` is a tensor argument: AutoGraph builds a while loop.
    total = tf.zeros_like(x)
    for i in range(n):
        total += x ** tf.cast(i, x.dtype)
    return total


@tf.function
def tensor_bound(x):
    steps = tf.shape(x)[0]
    acc = tf.constant(0.0)
    for i in range(steps):
        acc += tf.reduce_sum(x[i])
    return acc


@tf.function
def while_loop(x):
    i = tf.constant(0)
    while i < 10:
        x = x * 2.0
        i += 1
    return x


@tf.function
def explicit_while(x):
    def cond(i, value):
        return i < 10

    def body(i, value):
        return i + 1, value * 2.0

    _, result = tf.while_loop(cond, body, [tf.constant(0), x])
    return result


@tf.function
def over_dataset(dataset):
    total = tf.constant(0, dtype=tf.int64)
    count = tf.constant(0, dtype=tf.int64)
    for batch in dataset:
        total += tf.reduce_sum(batch)
        count += tf.cast(tf.size(batch), tf.int64)
    return total, count


@tf.function
def over_tensor(x):
    out = tf.constant(0.0)
    for row in x:
        out += tf.reduce_max(row)
    return out


@tf.function
def single_iteration(x):
    for _ in range(1):
        x = x + 1.0
    return x


@tf.function
def rnn(inputs, cell, state):
    outputs = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for t in tf.range(tf.shape(inputs)[1]):
        output, state = cell(inputs[:, t, :], state)
        outputs = outputs.write(t, output)
    tf.print("final state norm:", tf.norm(state))
    return tf.transpose(outputs.stack(), [1, 0, 2])


@tf.function
def with_autograph_print(x):
    tf.print("x:", x, "shape:", tf.shape(x))
    tf.debugging.assert_all_finite(x, "x must be finite")
    return tf.reduce_sum(x)


@tf.function(reduce_retracing=True)
def flexible(x):
    return x * 2


def eager_loop(values):
    # Not a tf.function: Python loops and prints are fine.
    for i in range(1000):
        values = values + 1
        print(i)
    return values
