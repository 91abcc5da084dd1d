import tensorflow as tf

keypoint_net = tf.keras.Sequential([
    tf.keras.Input((96, 96, 3)),
    tf.keras.layers.Conv2D(8, 3, strides=2, activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(34),
])


@tf.function(input_signature=[tf.TensorSpec([1, 96, 96, 3], tf.float32)])
def detect(frame):
    return tf.reshape(keypoint_net(frame), [1, 17, 2])


converter = tf.lite.TFLiteConverter.from_concrete_functions(
    [detect.get_concrete_function()], keypoint_net
)
tflite_bytes = converter.convert()
