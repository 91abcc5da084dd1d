import tensorflow as tf

x = tf.constant(1.5)

with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        y = x ** 3 - 2.0 * x
    dy_dx = inner.gradient(y, x)
d2y_dx2 = outer.gradient(dy_dx, x)
print("f'(1.5) =", dy_dx, " f''(1.5) =", d2y_dx2)
