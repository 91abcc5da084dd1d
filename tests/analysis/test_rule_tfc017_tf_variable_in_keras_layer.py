from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC017"


def test_a_tf_variable_in_a_layers_init_becomes_a_keras_variable():
    source = """\
        import keras
        import tensorflow as tf

        class Scale(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.factor = tf.Variable(1.0, name="factor")

            def call(self, x):
                return x * self.factor
        """
    [finding] = check(source, CODE)
    assert span(finding)[:2] == (7, 23)
    assert "`self.factor = tf.Variable(...)` in Keras layer `Scale`" in finding.message
    assert "`fit` never trains it" in finding.message
    line = fixed(source, finding).splitlines()[6]
    assert line == '        self.factor = keras.Variable(1.0, name="factor")'


def test_build_of_a_model_subclass_and_a_non_trainable_state_variable():
    source = """\
        import tensorflow as tf

        class Tagger(tf.keras.Model):
            def build(self, input_shape):
                self.w = tf.Variable(tf.zeros((input_shape[-1], 3)))
                self.seen = tf.Variable(initial_value=0, trainable=False)

            def call(self, x):
                self.seen.assign_add(1)
                return x @ self.w
        """
    first, second = check(source, CODE)
    assert "Keras model `Tagger`" in first.message
    assert "never trains it" in first.message
    assert "never trains it" not in second.message
    assert "saving leaves it out" in second.message
    assert fixed(source, first).splitlines()[4].strip() == (
        "self.w = tf.keras.Variable(tf.zeros((input_shape[-1], 3)))"
    )
    assert fixed(source, second).splitlines()[5].strip() == (
        "self.seen = tf.keras.Variable(initializer=0, trainable=False)"
    )


def test_through_a_base_class_of_the_file_in_notebook_cells():
    cells = [
        "import keras\nimport tensorflow as tf",
        "class Base(keras.layers.Layer):\n    pass",
        "class Offset(Base):\n    def __init__(self):\n        super().__init__()\n"
        "        self.b = tf.Variable(0.5)\n    def call(self, x):\n        return x + self.b",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (2, 4)


def test_arguments_keras_variable_does_not_take_get_no_fix():
    source = """\
        import keras
        import tensorflow as tf

        class Clip(keras.layers.Layer):
            def __init__(self, name_scope):
                super().__init__()
                self.a = tf.Variable(1.0, constraint=lambda v: tf.clip_by_value(v, 0, 1))
                self.b = tf.Variable(1.0, False)
                self.c = tf.Variable(1.0, name=name_scope)

            def call(self, x):
                return x * self.a * self.b * self.c
        """
    findings = check(source, CODE)
    assert len(findings) == 3
    assert [f.fix for f in findings] == [None, None, None]


def test_look_alikes_are_silent():
    source = """\
        import keras
        import tensorflow as tf

        class Affine(tf.Module):  # tf.Module tracks tf.Variable attributes
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(1.0)

        class Scale(keras.layers.Layer):
            def build(self, input_shape):
                self.factor = self.add_weight(shape=(), initializer="ones")
                self.bias = keras.Variable(0.0)

            def call(self, x):
                total = tf.Variable(0.0)  # TFC015's business, not this rule's
                return x * self.factor + self.bias

        class Helper:
            def __init__(self):
                self.v = tf.Variable(2.0)

        counter = tf.Variable(0)
        """
    assert check(source, CODE) == []


UNTRAINED_FACTOR = """\
    import keras
    import numpy as np
    import tensorflow as tf

    class Scale(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.factor = tf.Variable(1.0)

        def call(self, x):
            return x * self.factor

    keras.utils.set_random_seed(0)
    layer = Scale()
    model = keras.Sequential([keras.Input((1,)), layer])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    x = np.linspace(-1.0, 1.0, 32).reshape(-1, 1).astype("float32")
    model.fit(x, 3.0 * x, epochs=30, verbose=0)
    print(len(model.trainable_weights), round(float(layer.factor.numpy()), 1))
    """

# Proven by tests/analysis/test_fixes_proven.py: with the fix, the factor is a weight of the
# model and fit learns it (3.0); as written, fit has no weight to train and it stays 1.0.
FIX_CASES = (
    FixCase(
        CODE,
        UNTRAINED_FACTOR,
        UNTRAINED_FACTOR.replace(
            "tf.Variable(1.0)", "self.add_weight(shape=(), initializer='ones')"
        ),
        "a layer's factor that fit never trained",
    ),
)
