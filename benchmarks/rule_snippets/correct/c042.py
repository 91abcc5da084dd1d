import tensorflow as tf

a = tf.Variable(2.0)
b = tf.Variable(-1.0)

with tf.GradientTape() as tape_a:
    f = a ** 3 + b
df_da = tape_a.gradient(f, a)

with tf.GradientTape() as tape_b:
    f = a ** 3 + b
df_db = tape_b.gradient(f, b)

print(float(df_da), float(df_db))
