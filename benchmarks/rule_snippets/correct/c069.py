import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)
xs = tf.random.normal([200, 4])
ys = tf.reduce_sum(xs, axis=1, keepdims=True)
dataset = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(20)

for xb, yb in dataset:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
