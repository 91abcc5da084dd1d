import tensorflow as tf

w = tf.Variable(tf.random.normal([3, 1]))
b = tf.Variable(tf.zeros([1]))
x = tf.random.normal([20, 3])
y = tf.random.normal([20, 1])

with tf.GradientTape() as tape:
    pred = x @ w + b
    data_loss = tf.reduce_mean(tf.square(pred - y))
    reg_loss = 0.01 * tf.reduce_sum(tf.square(w))

dw, db = tape.gradient([data_loss, reg_loss], [w, b])
w.assign_sub(0.1 * dw)
b.assign_sub(0.1 * db)
