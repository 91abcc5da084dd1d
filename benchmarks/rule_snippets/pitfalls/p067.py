import tensorflow as tf

slope = tf.Variable(0.0)
intercept = tf.Variable(0.0)
opt = tf.keras.optimizers.Adam(0.1)

x = tf.linspace(-1.0, 1.0, 500)
y = 3.0 * x - 0.5 + tf.random.normal([500], stddev=0.1)
batches = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(500).batch(25)

slope_trace = []
for xb, yb in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(slope * xb + intercept - yb))
    opt.apply_gradients(zip(tape.gradient(loss, [slope, intercept]), [slope, intercept]))
    slope_trace.append(slope.numpy())

print("final slope", slope_trace[-1])
