import tensorflow as tf


def make_params(sizes, seed=0):
    tf.random.set_seed(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = tf.Variable(tf.random.normal([fan_in, fan_out], stddev=(2.0 / fan_in) ** 0.5))
        b = tf.Variable(tf.zeros([fan_out]))
        params.append((w, b))
    return params


@tf.function
def mlp(x, params):
    for w, b in params[:-1]:
        x = tf.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


params = make_params([6, 16, 16, 2])
logits = mlp(tf.random.normal([4, 6]), params)
