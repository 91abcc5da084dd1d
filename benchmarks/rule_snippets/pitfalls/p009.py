import tensorflow as tf

w = tf.Variable(tf.zeros([4, 1]))
b = tf.Variable(0.0)
optimizer = tf.keras.optimizers.SGD(0.05)

X = tf.random.normal([400, 4])
Y = X @ tf.constant([[1.0], [2.0], [-1.0], [0.5]]) + 0.3
loader = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(400).batch(40)

for epoch in range(3):
    running = 0.0
    n_batches = 0
    for xb, yb in loader:
        with tf.GradientTape() as tape:
            mse = tf.reduce_mean(tf.square(xb @ w + b - yb))
        grads = tape.gradient(mse, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b]))
        running += mse.numpy()
        n_batches += 1
    print(f"epoch {epoch}: {running / n_batches:.4f}")
