import tensorflow as tf

x = tf.Variable(3.0)

with tf.GradientTape(persistent=True) as tape:
    y = x * x
    z = y * y

dz_dx = tape.gradient(z, x)
dy_dx = tape.gradient(y, x)
del tape

print("dz/dx =", dz_dx.numpy(), "dy/dx =", dy_dx.numpy())
