import itertools

import tensorflow as tf

probe = tf.keras.layers.Dense(2)


@tf.function
def probe_with_dropout(x, rates):
    rate = next(rates)
    return tf.nn.dropout(probe(x), rate=rate)


x = tf.random.normal([4, 3])
rate_cycle = itertools.cycle([0.1, 0.3, 0.5])
outputs = [probe_with_dropout(x, rate_cycle) for _ in range(3)]
