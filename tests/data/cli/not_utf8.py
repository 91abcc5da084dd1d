import tensorflow as tf

# café: this comment is Latin-1, not UTF-8
x = tf.constant(1.0)
