import tensorflow as tf


@tf.function(input_signature=[
    tf.TensorSpec([None, 64, 64, 3], tf.float32),
    tf.TensorSpec([3], tf.float32),
])
def subtract_channel_means(images, channel_means):
    return images - tf.reshape(channel_means, [1, 1, 1, 3])


out = subtract_channel_means(
    tf.random.uniform([5, 64, 64, 3]), tf.constant([0.485, 0.456, 0.406])
)
