import tensorflow as tf

net = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="tanh"), tf.keras.layers.Dense(1)])


def heat_residual(x, t, alpha=0.1):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        tape.watch(t)
        u = net(tf.concat([x, t], axis=1))
        u_x = tape.gradient(u, x)
    u_t = tape.gradient(u, t)
    u_xx = tape.gradient(u_x, x)
    return u_t - alpha * u_xx


r = heat_residual(tf.random.uniform([50, 1]), tf.random.uniform([50, 1]))
