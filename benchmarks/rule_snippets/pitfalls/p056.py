import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
inputs = tf.random.normal([10, 3])
targets = tf.random.normal([10, 2])

tape = tf.GradientTape(persistent=True)
with tape:
    preds = model(inputs)
    mse = tf.reduce_mean(tf.square(preds - targets))
    l2 = tf.add_n([tf.reduce_sum(w ** 2) for w in model.trainable_weights])

grads_mse = tape.gradient(mse, model.trainable_weights)
grads_l2 = tape.gradient(l2, model.trainable_weights)
ratio = tf.norm(grads_l2[0]) / tf.norm(grads_mse[0])
print("regularizer/data gradient ratio:", float(ratio))
