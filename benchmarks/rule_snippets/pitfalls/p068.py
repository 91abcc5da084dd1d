import tensorflow as tf

policy = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.RMSprop(1e-3)
xent = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def behaviour_cloning_step(states, actions):
    with tf.GradientTape() as tape:
        loss = xent(actions, policy(states))
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
    return loss


demo_states = tf.random.normal([1000, 6])
demo_actions = tf.random.uniform([1000], maxval=4, dtype=tf.int32)
batches = iter(tf.data.Dataset.from_tensor_slices((demo_states, demo_actions)).repeat().batch(50))

loss_curve = []
step = 0
while step < 200:
    s, a = next(batches)
    loss = behaviour_cloning_step(s, a)
    loss_curve.append(loss.numpy())
    step += 1
