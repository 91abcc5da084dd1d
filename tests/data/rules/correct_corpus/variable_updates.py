"""Variables updated in place, and plain tensors / Python numbers rebound freely."""

import tensorflow as tf

lr = 0.1
momentum = 0.9
w = tf.Variable(tf.random.normal([3, 1]))
b = tf.Variable(0.0)
velocity = tf.Variable(tf.zeros([3, 1]))
x = tf.random.normal([8, 3])
y = tf.random.normal([8, 1])

for _ in range(100):
    with tf.GradientTape() as tape:
        pred = x @ w + b
        loss = tf.reduce_mean(tf.square(pred - y))
    dw, db = tape.gradient(loss, [w, b])
    velocity.assign(momentum * velocity - lr * dw)
    w.assign_add(velocity)
    b.assign_sub(lr * db)
    lr *= 0.99  # a Python float next to the variables
    momentum = min(momentum + 0.001, 0.99)

w.assign(w * 0.9)  # decay in place
b.assign(b + 1.0)

decay = tf.Variable(1.0, trainable=False)
decay.assign(decay * 0.5)

# Tensors (not variables) may be rebound as often as you like.
t = tf.constant(1.0)
t = t + 1
t = t * 2.0
t -= 0.5
acc = tf.zeros([3])
for i in range(3):
    acc = acc + tf.one_hot(i, 3)

# Python counters and accumulators outside any tf.function.
seen = 0
losses = []
for step in range(10):
    seen += 1
    losses.append(float(loss))
total = sum(losses) / seen


def sgd_update(params, grads, learning_rate=0.01):
    for param, grad in zip(params, grads):
        param.assign_sub(learning_rate * grad)


def rebind_to_copy():
    weights = tf.Variable([1.0, 2.0])
    snapshot = weights.read_value()
    snapshot = snapshot * 2  # a tensor copy, not the variable
    weights = weights.numpy()  # deliberately turned into a NumPy array for plotting
    return snapshot, weights


def shadowed_a():
    w = tf.Variable(1.0)
    w.assign_add(1.0)
    return w


def shadowed_b(x):
    w = tf.constant(2.0)  # same name, but a tensor here
    w = w * x
    return w


class Scaler:
    def __init__(self):
        self.scale = tf.Variable(1.0)
        self.updates = 0

    def step(self, factor):
        self.scale.assign(self.scale * factor)
        self.updates += 1  # Python counter outside tf.function


class Tracker(tf.Module):
    def __init__(self):
        super().__init__()
        self.value = tf.Variable(0.0)
        self.history = []

    def record(self, x):
        # Plain method, runs eagerly.
        self.value.assign(x)
        self.history.append(self.value.numpy())


@tf.function
def apply_decay(var, rate):
    var.assign(var * rate)
    return var


@tf.function
def manual_sgd(weights, grads, learning_rate):
    for w, g in zip(weights, grads):
        w.assign_sub(learning_rate * g)


ema_var = tf.Variable(0.0)


@tf.function
def update_ema(value):
    ema_var.assign(0.99 * ema_var + 0.01 * value)
    return ema_var.read_value()


step_var = tf.Variable(0, dtype=tf.int64)


@tf.function
def bump():
    step_var.assign_add(1)
    return step_var


# Parameters kept in containers, updated in place (the from-scratch style of many courses).
params = {
    "w1": tf.Variable(tf.random.normal([4, 8], stddev=0.1)),
    "b1": tf.Variable(tf.zeros([8])),
}
layer_weights = [tf.Variable(tf.zeros([8])) for _ in range(3)]


def sgd_step(batch_x, batch_y, learning_rate=0.01):
    with tf.GradientTape() as tape:
        hidden = tf.nn.relu(batch_x @ params["w1"] + params["b1"])
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(hidden, axis=1) - batch_y))
    grads = tape.gradient(loss, params)
    for key in params:
        params[key].assign_sub(learning_rate * grads[key])
    layer_weights[0].assign(layer_weights[0] * 0.5)
    return loss


# Containers of tensors are rebound: that is how tensor state changes.
rnn_state = {"h": tf.zeros([2, 8]), "c": tf.zeros([2, 8])}
rnn_state["h"] = rnn_state["h"] * 0.9 + 0.1
moments = [tf.zeros([8]), tf.zeros([8])]
moments[0] = moments[0] * 0.9
