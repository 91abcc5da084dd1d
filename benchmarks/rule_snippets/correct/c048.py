import tensorflow as tf

target_features = tf.random.normal([1, 8])
extractor = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(8, activation="tanh")])
opt = tf.keras.optimizers.Adam(0.05)

image = tf.Variable(tf.random.uniform([1, 16]))
for _ in range(50):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(extractor(image) - target_features))
    grad = tape.gradient(loss, image)
    opt.apply_gradients([(grad, image)])
