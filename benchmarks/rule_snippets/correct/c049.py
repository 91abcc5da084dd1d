import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(4)])


@tf.function
def predict_fn(x):
    return tf.argmax(model(x, training=False), axis=-1)


test_ds = tf.data.Dataset.from_tensor_slices(tf.random.normal([200, 8])).batch(50)
preds = []
for x in test_ds:
    preds.append(predict_fn(x).numpy())
all_preds = np.concatenate(preds)
