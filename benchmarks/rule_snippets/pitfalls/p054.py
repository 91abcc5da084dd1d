import tensorflow as tf

backbone = tf.keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3), classes=5)


@tf.function(input_signature=[tf.TensorSpec([1, 224, 224, 3], tf.float32, name="image")])
def classify(image):
    image = tf.keras.applications.mobilenet_v2.preprocess_input(image)
    return tf.nn.softmax(backbone(image, training=False))


photos = tf.random.uniform([1, 224, 224, 3], maxval=255.0)
print(classify(photos))
