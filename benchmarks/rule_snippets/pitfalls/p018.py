import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])


def batch_loss(images, labels):
    logits = model(images)
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return tf.reduce_sum(per_example) / tf.shape(labels)[0]


imgs = tf.random.normal([16, 784])
lbls = tf.random.uniform([16], maxval=10, dtype=tf.int32)
loss = batch_loss(imgs, lbls)
