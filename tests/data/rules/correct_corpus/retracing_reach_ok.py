"""Correct code next to what TFC004, TFC005 and TFC012 reach: instances, named signatures,
short unrolled loops and rank-1 specs."""

import tensorflow as tf

IMAGE_SIZE = 28
BATCH_SIG = [tf.TensorSpec((None, IMAGE_SIZE, IMAGE_SIZE), tf.float32)]
SIZE_SPEC = tf.TensorSpec([2], tf.int32)  # an image size: its length is part of its meaning
RATES = [tf.constant(0.1), tf.constant(0.01)]
MODES = ("train", "eval")


class Classifier(tf.Module):
    def __init__(self, units):
        super().__init__()
        self.w = tf.Variable(tf.zeros([IMAGE_SIZE * IMAGE_SIZE, units]))
        self.blocks = [tf.keras.layers.Dense(units) for _ in range(3)]

    @tf.function
    def train_step(self, x, y, epoch):
        logits = tf.reshape(x, [-1, IMAGE_SIZE * IMAGE_SIZE]) @ self.w
        # Three fixed blocks: unrolled on purpose, as the course says is fine.
        for block in [self.blocks[0], self.blocks[1], self.blocks[2]]:
            logits = block(logits)
        for _ in range(3):
            logits = tf.nn.relu(logits)
        return tf.reduce_mean(logits) + tf.cast(epoch, tf.float32) * 0.0

    def fit(self, x, y, epochs):
        for epoch in tf.range(epochs):
            self.train_step(x, y, epoch)

    def log(self, epoch):
        return f"epoch {epoch}"


clf = Classifier(10)
images = tf.zeros([4, IMAGE_SIZE, IMAGE_SIZE])
labels = tf.zeros([4], tf.int32)
for epoch in range(10):
    clf.train_step(images, labels, tf.constant(epoch))
    clf.log(epoch)
for epoch in tf.range(10):
    clf.train_step(images, labels, epoch)


@tf.function(input_signature=BATCH_SIG)
def predict(x):
    return tf.reduce_sum(x, axis=[1, 2])


serve = tf.function(lambda x: x * 2.0, input_signature=BATCH_SIG)


@tf.function(input_signature=[SIZE_SPEC, tf.TensorSpec((3,), tf.float32)])
def resize_and_normalize(size, mean):
    return tf.cast(size, tf.float32) * mean


@tf.function
def scaled(x, lr):
    return x * lr


for lr in RATES:
    scaled(images, lr)
for mode in MODES:
    scaled(images, mode == "train")
for lr in [0.1, 0.01]:
    scaled(images, tf.constant(lr))

small = Classifier(4)
large = Classifier(8)
small.train_step(images, labels, 1)  # one instance, one value: one trace each
large.train_step(images, labels, 2)

# Counters and schedule entries handed over as tensors: one trace for all of them.
for step_number, batch in enumerate(tf.data.Dataset.from_tensor_slices(tf.zeros([3, 2]))):
    scaled(images, tf.constant(step_number, tf.float32))
    scaled(batch, 1.0)
step_count = 0
while step_count < 3:
    scaled(images, tf.cast(step_count, tf.float32))
    step_count += 1
LR_SCHEDULE = [0.1] * 2 + [0.01] * 2
for epoch in range(4):
    scaled(images, tf.constant(LR_SCHEDULE[epoch]))
for epoch in range(2):
    scaled(images, RATES[epoch])  # a list of tensors
