import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(0.01)
xs = tf.random.normal([6400, 5])
ys = tf.reduce_sum(xs, axis=1, keepdims=True)
ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(16)

for step, (xb, yb) in enumerate(ds):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 100 == 0:
        print(f"step {step}: loss={loss.numpy():.4f}")
