import tensorflow as tf

feature_rows = [[0.1, 0.2], [0.3, 0.1], [0.9, 0.4]]
target_rows = [[1.0], [0.0], [1.0]]
pairs = zip(feature_rows, target_rows)

dense = tf.keras.layers.Dense(1, activation="sigmoid")
optimizer = tf.keras.optimizers.Adam(0.01)


@tf.function
def online_update():
    features, target = next(pairs)
    x = tf.constant([features])
    y = tf.constant([target])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(y, dense(x)))
    grads = tape.gradient(loss, dense.trainable_variables)
    optimizer.apply_gradients(zip(grads, dense.trainable_variables))
    return loss


dense.build((None, 2))
online_update()
