import numpy as np
import tensorflow as tf


def _random_erase_np(image):
    img = image.numpy().copy()
    h, w = img.shape[:2]
    y0, x0 = np.random.randint(0, h // 2), np.random.randint(0, w // 2)
    img[y0:y0 + h // 4, x0:x0 + w // 4] = 0.0
    return img


def random_erase(image, label):
    erased = tf.py_function(_random_erase_np, [image], tf.float32)
    erased.set_shape(image.shape)
    return erased, label


images = tf.random.uniform([10, 32, 32, 3])
labels = tf.range(10)
ds = tf.data.Dataset.from_tensor_slices((images, labels)).map(random_erase).batch(5)
