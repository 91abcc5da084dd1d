import tensorflow as tf

net = tf.keras.Sequential([
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dropout(0.3),
    tf.keras.layers.Dense(3),
])


@tf.function
def forward(x, training):
    return net(x, training=training)


x_train = tf.random.normal([16, 8])
x_val = tf.random.normal([8, 8])
train_logits = forward(x_train, training=True)
val_logits = forward(x_val, training=False)
