import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, activation="sigmoid")])
inputs = tf.constant([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
labels = tf.constant([[0.0], [1.0], [1.0], [1.0]])

with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(labels, model(inputs)))

grads = tape.gradient(loss, model.trainable_variables)
