import tensorflow as tf

pinn = tf.keras.Sequential([
    tf.keras.layers.Dense(20, activation="tanh"),
    tf.keras.layers.Dense(20, activation="tanh"),
    tf.keras.layers.Dense(1),
])


def burgers_residual(x, t, nu=0.01):
    with tf.GradientTape() as tape:
        tape.watch(x)
        tape.watch(t)
        u = pinn(tf.concat([x, t], axis=1))
    u_x = tape.gradient(u, x)
    u_t = tape.gradient(u, t)
    return u_t + u * u_x


x_col = tf.random.uniform([100, 1], -1.0, 1.0)
t_col = tf.random.uniform([100, 1], 0.0, 1.0)
residual = burgers_residual(x_col, t_col)
