import numpy as np
import tensorflow as tf


def saliency_map(model, image_batch, class_idx):
    images = tf.convert_to_tensor(image_batch, dtype=tf.float32)
    with tf.GradientTape() as tape:
        preds = model(images, training=False)
        score = preds[:, class_idx]
    grads = tape.gradient(score, images)
    return tf.reduce_max(tf.abs(grads), axis=-1)


cnn = tf.keras.Sequential([
    tf.keras.layers.Conv2D(4, 3, activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10),
])
batch = np.random.rand(2, 28, 28, 1).astype("float32")
heat = saliency_map(cnn, batch, class_idx=3)
