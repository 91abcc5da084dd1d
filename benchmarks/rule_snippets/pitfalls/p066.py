import tensorflow as tf

loaded_paths = []


def load_image(path, label):
    raw = tf.io.read_file(path)
    image = tf.io.decode_jpeg(raw, channels=3)
    image = tf.image.resize(image, (128, 128)) / 255.0
    loaded_paths.append(path)
    return image, label


paths = ["data/cat_001.jpg", "data/dog_001.jpg", "data/cat_002.jpg"]
labels = [0, 1, 0]
ds = (
    tf.data.Dataset.from_tensor_slices((paths, labels))
    .map(load_image, num_parallel_calls=tf.data.AUTOTUNE)
    .batch(2)
)
