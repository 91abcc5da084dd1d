import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.Input(shape=(12,)),
    tf.keras.layers.Dense(24, activation="relu"),
    tf.keras.layers.Dense(24, activation="relu"),
    tf.keras.layers.Dense(1),
])
x = tf.random.normal([64, 12])
y = tf.random.normal([64, 1])

# Debugging vanishing gradients: look at the gradient norm of every weight
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))

grad_norms = {}
for var in model.trainable_variables:
    grad_norms[var.name] = tf.norm(tape.gradient(loss, var))

for name, norm in grad_norms.items():
    print(f"{name:40s} {float(norm):.3e}")
