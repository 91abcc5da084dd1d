import tensorflow as tf

w = tf.Variable(1.0)
w.assign_sub(0.1)
