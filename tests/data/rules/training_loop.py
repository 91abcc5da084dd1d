# A realistic TensorFlow script mixing correct code and the pitfalls tfcoach reports.
import numpy as np
import tensorflow as tf

BATCH = 32
STEPS = 10
history = []
calls = 0


class Dense(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.kernel = None
        self.count = 0

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units))
        self.bias = tf.Variable(tf.zeros([self.units]))

    @tf.function
    def call(self, x):
        if self.kernel is None:
            self.kernel = tf.Variable(tf.ones([x.shape[-1], self.units]))
        print("tracing", x)
        self.count += 1
        y = tf.matmul(x, self.kernel) + self.bias
        for _ in range(STEPS):
            y = y * 0.5
        return y


w = tf.Variable(tf.random.normal([3, 1]))
b = tf.Variable(0.0)
x = tf.constant(np.ones([4, 3]), dtype=tf.float32)
ids = tf.constant([1, 2, 3, 4])
scale = tf.constant([0.5, 0.5, 0.5, 0.5])
mixed = ids * scale


@tf.function(input_signature=[tf.TensorSpec([BATCH, 3], tf.float32)])
def predict(inputs):
    return tf.matmul(inputs, w) + b


@tf.function
def train_step(inputs, lr):
    global calls
    calls += 1
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(predict(inputs) ** 2)
    grads = tape.gradient(loss, [w, b])
    w.assign_sub(lr * grads[0])
    history.append(loss)
    return loss, grads[0].numpy()


for epoch in range(3):
    train_step(x, 0.1)
    train_step(x, 0.01)
    train_step(x, epoch)

with tf.GradientTape(persistent=True) as tape:
    y = x * x
first = tape.gradient(y, x)
second = tape.gradient(y, x)

with tf.GradientTape() as once:
    z = w * 2
g1 = once.gradient(z, w)
g2 = once.gradient(z, w)

w = w - 0.1 * g1
b -= 0.5
