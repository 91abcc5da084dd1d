import tensorflow as tf


def parse_example(path):
    label_name = path.numpy().decode("utf-8").split("/")[-2]
    image = tf.io.decode_png(tf.io.read_file(path), channels=1)
    return tf.image.convert_image_dtype(image, tf.float32), label_name


files = tf.data.Dataset.list_files("digits/*/*.png", shuffle=True)
dataset = files.map(parse_example).batch(32)
