import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu")])
decoder = tf.keras.Sequential([tf.keras.layers.Dense(20)])
opt = tf.keras.optimizers.Adam()


@tf.function
def ae_step(batch):
    with tf.GradientTape() as tape:
        recon = decoder(encoder(batch))
        loss = tf.reduce_mean(tf.square(recon - batch))
    variables = encoder.trainable_variables + decoder.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


data = tf.data.Dataset.from_tensor_slices(tf.random.normal([300, 20])).batch(30)
for step, batch in enumerate(data):
    loss = ae_step(batch)
    print(f"step {step:3d}  reconstruction loss {loss:.4f}")
