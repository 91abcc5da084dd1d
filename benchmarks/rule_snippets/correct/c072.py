import tensorflow as tf

w = tf.Variable([0.0, 0.0])
opt = tf.keras.optimizers.SGD(0.1)
target = tf.constant([3.0, -1.0])

for step in range(10_000):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(w - target))
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    if loss.numpy() < 1e-6:
        print("converged after", step, "steps")
        break
