import tensorflow as tf

x = tf.constant(0.7)

with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = tf.sin(x) * x ** 2
    dy_dx = inner.gradient(y, x)
d2y_dx2 = outer.gradient(dy_dx, x)
print(float(dy_dx), float(d2y_dx2))
