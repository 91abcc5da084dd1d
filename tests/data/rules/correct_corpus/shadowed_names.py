"""Names that look like TensorFlow pitfalls but are bound to something else."""

import logging

import tensorflow as tf

log = logging.getLogger(__name__)


def print(*args, **kwargs):  # a project logger replacing the builtin on purpose
    log.info(" ".join(str(a) for a in args))


@tf.function
def step(x):
    print("tracing step with", x)  # the logger above, not the builtin
    return x * 2


def range(n):  # yields tensors, so the loop below is a graph loop
    return tf.range(n)


@tf.function
def loop(x):
    for i in range(10):
        x += tf.cast(i, x.dtype)
    return x


class Holder:
    def __init__(self):
        self.w = tf.Variable(1.0)

    def reset(self):
        # The attribute is re-created with a fresh variable: fine.
        self.w = tf.Variable(0.0)


def rebind_to_other():
    w = tf.Variable(1.0)
    w.assign(2.0)
    w = tf.Variable(w.read_value() * 2)  # a new variable, not arithmetic rebinding
    return w


def rebind_after_del():
    w = tf.Variable(1.0)
    del w
    w = 3
    w = w - 1
    return w


def rebind_branch(use_var):
    if use_var:
        w = tf.Variable(1.0)
        w.assign_add(1.0)
    else:
        w = 1.0
        w = w * 2
    return w
