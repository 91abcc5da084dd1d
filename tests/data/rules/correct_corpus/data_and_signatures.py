"""tf.data pipelines, input signatures, py_function callbacks, dtypes and casting."""

import numpy as np
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
IMG_SIZE = 224
NUM_CLASSES = 10


def decode(path, label):
    image = tf.io.read_file(path)
    image = tf.image.decode_jpeg(image, channels=3)
    image = tf.image.resize(image, [IMG_SIZE, IMG_SIZE])
    image = tf.cast(image, tf.float32) / 255.0
    return image, tf.one_hot(label, NUM_CLASSES)


def augment(image, label):
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, 0.1)
    return image, label


def numpy_tokenize(text):
    # Runs eagerly inside tf.py_function: .numpy() is fine here.
    words = text.numpy().decode("utf-8").split()
    return np.array([len(w) for w in words], dtype=np.int32)


def tf_tokenize(text, label):
    lengths = tf.py_function(numpy_tokenize, [text], tf.int32)
    lengths.set_shape([None])
    return lengths, label


paths = tf.constant(["a.jpg", "b.jpg"])
labels = tf.constant([0, 1])
dataset = (
    tf.data.Dataset.from_tensor_slices((paths, labels))
    .shuffle(1000)
    .map(decode, num_parallel_calls=AUTOTUNE)
    .map(augment, num_parallel_calls=AUTOTUNE)
    .map(lambda image, label: (image * 2.0 - 1.0, label))
    .filter(lambda image, label: tf.reduce_max(image) > 0)
    .batch(32, drop_remainder=True)
    .cache()
    .prefetch(AUTOTUNE)
)

texts = tf.data.Dataset.from_tensor_slices((["a b", "c d e"], [0, 1])).map(tf_tokenize)


def generator():
    for i in range(100):
        yield np.random.rand(4).astype(np.float32), i % 2


gen_ds = tf.data.Dataset.from_generator(
    generator,
    output_signature=(
        tf.TensorSpec(shape=(4,), dtype=tf.float32),
        tf.TensorSpec(shape=(), dtype=tf.int32),
    ),
)


@tf.function(input_signature=[tf.TensorSpec(shape=[None, 784], dtype=tf.float32)])
def predict(x):
    return tf.nn.softmax(x)


@tf.function(
    input_signature=[
        tf.TensorSpec(shape=(None, IMG_SIZE, IMG_SIZE, 3), dtype=tf.float32),
        tf.TensorSpec(shape=(None,), dtype=tf.int32),
    ]
)
def serve(images, ids):
    return {"ids": ids, "mean": tf.reduce_mean(images, axis=[1, 2, 3])}


@tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32)])
def scalar_fn(x):
    return x * 2.0


@tf.function(input_signature=(tf.TensorSpec([None], tf.int64), tf.TensorSpec([], tf.bool)))
def maybe_double(x, flag):
    return tf.where(flag, x * 2, x)


@tf.function
def py_function_inside(x):
    def host_side(v):
        return np.sort(v.numpy())

    return tf.py_function(host_side, [x], tf.float32)


@tf.function
def numpy_function_inside(x):
    return tf.numpy_function(lambda v: np.cumsum(v), [x], tf.float32)


@tf.function
def experimental_numpy(x):
    tnp = tf.experimental.numpy
    return tnp.sum(tnp.asarray(x) ** 2)


@tf.function
def shapes(x):
    batch = tf.shape(x)[0]
    static = x.shape[-1]
    return tf.reshape(x, [batch, static])


def eager_stats(t):
    arr = t.numpy()
    mean = arr.mean()
    return float(mean), np.std(arr)


counts = tf.constant([1, 2, 3])
weights = tf.constant([0.5, 0.25, 0.25])
weighted = tf.cast(counts, tf.float32) * weights
ratio = tf.cast(counts, weights.dtype) / 2.0
int_sum = counts + tf.constant([4, 5, 6])
float_sum = weights + tf.constant([1.0, 1.0, 1.0])
mask = tf.cast(counts > 1, tf.float32) * weights
scaled = counts * 2
halved = weights / 2
idx = tf.range(10)
fidx = tf.cast(idx, tf.float32) * 0.1
pos = tf.range(0.0, 1.0, 0.1) + tf.zeros([10])
ints64 = tf.constant([1, 2], dtype=tf.int64) + tf.constant([3, 4], dtype=tf.int64)
floats64 = tf.constant([1, 2], dtype=tf.float64) * tf.constant([0.5, 1.5], dtype=tf.float64)
np_mix = np.arange(3) * 0.5
