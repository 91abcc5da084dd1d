import tensorflow as tf

classifier = tf.keras.Sequential([
    tf.keras.layers.Conv2D(16, 3, activation="relu"),
    tf.keras.layers.MaxPooling2D(),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(10),
])


@tf.function(input_signature=[tf.TensorSpec([64, 28, 28, 1], tf.float32)])
def predict_digits(images):
    return tf.argmax(classifier(images, training=False), axis=-1)


test_images = tf.random.uniform([64, 28, 28, 1])
labels = predict_digits(test_images)
