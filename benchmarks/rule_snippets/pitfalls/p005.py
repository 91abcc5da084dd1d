import tensorflow as tf

x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape(persistent=True) as tape:
    f = x ** 2 * y + tf.sin(y)
    g = tf.exp(x * y)

df_dx = tape.gradient(f, x)
df_dy = tape.gradient(f, y)
dg_dx = tape.gradient(g, x)
print(df_dx.numpy(), df_dy.numpy(), dg_dx.numpy())
