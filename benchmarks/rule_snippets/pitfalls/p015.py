import keras
from keras import layers, ops


class AnnealedSoftmax(layers.Layer):
    """Softmax whose temperature shrinks a little on every forward pass."""

    def __init__(self, decay=0.999, **kwargs):
        super().__init__(**kwargs)
        self.decay = decay

    def build(self, input_shape):
        self.temperature = self.add_weight(
            name="temperature", shape=(), initializer="ones", trainable=False
        )

    def call(self, logits):
        self.temperature *= self.decay
        return ops.softmax(logits / self.temperature)


inputs = keras.Input(shape=(10,))
probs = AnnealedSoftmax()(layers.Dense(10)(inputs))
model = keras.Model(inputs, probs)
model.compile(optimizer="adam", loss="categorical_crossentropy")
