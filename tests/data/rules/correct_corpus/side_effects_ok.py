"""State changes inside tf.function that are fine, and Python state changed outside."""

import tensorflow as tf

counter = tf.Variable(0)
results = []
config = {"lr": 0.1}


@tf.function
def step(x):
    counter.assign_add(1)
    local = []
    local.append(x * 2)
    local_map = {}
    local_map["y"] = x
    values = [x, x + 1]
    values[0] = x * 3
    return tf.add_n(local) + local_map["y"] + values[0]


@tf.function
def with_tensor_array(x):
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, x)
    return ta.stack()


for batch in [tf.constant(1.0), tf.constant(2.0)]:
    results.append(step(batch))
config["lr"] = 0.01


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.total = tf.Variable(0.0)
        self.cache = {}

    @tf.function
    def __call__(self, x):
        self.total.assign_add(tf.reduce_sum(x))
        return x

    def eager_call(self, x):
        self.calls += 1
        self.cache[self.calls] = x
        return self(x)


def outer():
    log = []

    def inner(x):
        log.append(x)  # plain function: runs every call

    return inner, log


@tf.function
def nested_callback(x):
    hits = []

    def record(v):
        hits.append(v)
        return v

    return tf.map_fn(record, x)


@tf.function
def comprehension(xs):
    return tf.stack([tf.square(v) for v in xs])


@tf.function
def print_via_tf(x):
    tf.print("value", x, output_stream="file://stderr")
    return x


def debug_print(x):
    print("eager value:", x.numpy())
    return x
