import tensorflow as tf


@tf.function
def augment(images, brightness_delta):
    images = tf.image.random_flip_left_right(images)
    images = tf.image.random_brightness(images, max_delta=brightness_delta)
    return tf.clip_by_value(images, 0.0, 1.0)


train_images = tf.random.uniform([64, 32, 32, 3])
val_images = tf.random.uniform([16, 32, 32, 3])

train_aug = augment(train_images, brightness_delta=0.2)
val_aug = augment(val_images, brightness_delta=0.05)
