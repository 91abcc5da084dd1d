import tensorflow as tf

ensemble = [
    tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(3)])
    for _ in range(3)
]
x_test = tf.random.normal([20, 5])

member_probs = []
for member in ensemble:
    fast_member = tf.function(member)
    member_probs.append(tf.nn.softmax(fast_member(x_test)))

ensemble_probs = tf.reduce_mean(tf.stack(member_probs), axis=0)
