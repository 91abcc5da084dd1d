import tensorflow as tf

layer = tf.keras.layers.Dense(4, activation="tanh")
x = tf.Variable([[0.5, -1.0, 2.0]])

with tf.GradientTape() as tape:
    y = layer(x)
    energy = tf.reduce_sum(y ** 2)

jac = tape.jacobian(y, x)
grad_energy = tape.gradient(energy, x)
print(jac.shape, grad_energy.shape)
