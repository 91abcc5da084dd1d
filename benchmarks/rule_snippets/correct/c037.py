import numpy as np
import tensorflow as tf


def make_spirals(n_points=1000, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for i in range(1000):
        label = i % 2
        r = i / n_points * 5.0
        angle = r * 1.75 + label * np.pi
        xs.append([r * np.sin(angle), r * np.cos(angle)] + rng.normal(0, noise, 2))
        ys.append(label)
    return tf.constant(np.array(xs, dtype="float32")), tf.constant(ys)


features, labels = make_spirals()
