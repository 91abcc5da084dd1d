import tensorflow as tf

total = tf.Variable(0.0)
count = tf.Variable(0.0)


@tf.function
def accumulate(batch):
    total.assign_add(tf.reduce_sum(batch))
    count.assign_add(tf.cast(tf.size(batch), tf.float32))
    return total / count


for chunk in tf.data.Dataset.from_tensor_slices(tf.random.normal([100])).batch(10):
    running_mean = accumulate(chunk)
