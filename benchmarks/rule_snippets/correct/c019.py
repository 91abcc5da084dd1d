import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3)])


@tf.function
def predict_proba(x):
    return tf.nn.softmax(model(x, training=False))


probs = predict_proba(tf.random.normal([5, 4])).numpy()
top_class = np.argmax(probs, axis=1)
print("confidence:", np.round(probs.max(axis=1), 3), "classes:", top_class)
