import tensorflow as tf

# Gradient descent on a 1-D quadratic with a decaying step size
x = tf.Variable(5.0)
lr = 0.3
for it in range(25):
    with tf.GradientTape() as tape:
        f = (x - 2.0) ** 2 + 1.0
    g = tape.gradient(f, x)
    x.assign(x - lr * g)
    lr = lr * 0.9

print("minimum found near", x.numpy())
