from __future__ import annotations

import textwrap

from jupyterlab_tfcoach.analysis.testing import FixCase, check, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC015"

GAIN_IN_CALL = """\
    import keras
    import numpy as np

    class Gain(keras.layers.Layer):
        def call(self, signal):
            self.gain = self.add_weight(shape=(), initializer="ones")
            return signal * self.gain

    gain = Gain()
    gain(np.ones((3, 4), "float32"))
    gain(np.ones((3, 4), "float32"))
    """


def test_add_weight_in_call_moves_to_a_new_build_and_the_fix_runs():
    [finding] = check(GAIN_IN_CALL, CODE)
    assert span(finding) == (6, 21, 6, 66)
    assert "`self.add_weight(...)` in `Gain.call`" in finding.message
    assert finding.severity == "warning"
    repaired = fixed(GAIN_IN_CALL, finding)
    assert repaired.splitlines()[4:9] == [
        "    def build(self, input_shape):",
        '        self.gain = self.add_weight(shape=(), initializer="ones")',
        "",
        "    def call(self, signal):",
        "        return signal * self.gain",
    ]
    assert check(repaired, CODE) == []
    broken, repaired_run = run_tensorflow(
        textwrap.dedent(GAIN_IN_CALL), repaired, weights="len(gain.trainable_weights)"
    )
    assert broken.error == "ValueError"  # Keras: a built layer's state is locked
    assert repaired_run.error is None and repaired_run.probes["weights"] == 1


def test_keras_variable_moves_to_the_existing_build_others_get_no_fix():
    source = """\
        import tensorflow as tf

        class Affine(tf.keras.layers.Layer):
            def __init__(self, units):
                super().__init__()
                self.units = units

            def build(self, input_shape):
                self.bias = self.add_weight(shape=(self.units,), initializer="zeros")

            def call(self, inputs):
                self.kernel = self.add_weight(shape=(inputs.shape[-1], self.units))
                self.scale = tf.keras.Variable(
                    1.0,
                )
                offset = tf.Variable(0.0)
                return inputs @ self.kernel * self.scale + self.bias + offset
        """
    kernel, scale, offset = check(source, CODE)
    assert (kernel.line, scale.line, offset.line) == (12, 13, 16)
    assert kernel.fix is None  # reads the input of ``call``: its shape is build's input_shape
    assert offset.fix is None and "`tf.Variable(...)`" in offset.message
    assert "`keras.Variable(...)` in `Affine.call`" in scale.message
    assert fixed(source, scale).splitlines()[7:16] == [
        "    def build(self, input_shape):",
        '        self.bias = self.add_weight(shape=(self.units,), initializer="zeros")',
        "        self.scale = tf.keras.Variable(",
        "            1.0,",
        "        )",
        "",
        "    def call(self, inputs):",
        "        self.kernel = self.add_weight(shape=(inputs.shape[-1], self.units))",
        "        offset = tf.Variable(0.0)",
    ]


def test_model_subclasses_through_classes_of_the_file_and_from_imports():
    source = """\
        from keras import Model, layers

        class Base(Model):
            pass

        class Tower(Base):
            def call(self, x):
                w = self.add_weight(shape=(4,))
                return layers.Dense(2)(x * w)
        """
    [finding] = check(source, CODE)
    assert finding.line == 8 and "`Tower.call`" in finding.message
    assert finding.fix is None  # a local, not ``self.<name> = ...``


def test_look_alikes_are_silent():
    source = """\
        import keras
        import tensorflow as tf

        class Gain(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.steps = keras.Variable(0, trainable=False)

            def build(self, input_shape):
                self.gain = self.add_weight(shape=(input_shape[-1],), initializer="ones")

            def call(self, signal):
                if self.gain is None:
                    self.gain = self.add_weight(shape=())
                self.steps.assign_add(1)
                return signal * self.gain

        class Store:
            def add_weight(self, value):
                return value

            def call(self, value):
                return self.add_weight(value)

        class Counter(tf.Module):
            def __call__(self, x):
                self.total = tf.Variable(0.0)
                return x

        def call(x):
            return keras.Variable(x)
        """
    assert check(source, CODE) == []


# Proven by tests/analysis/test_fixes_proven.py: the fixed layer prints what a layer that
# creates its weight in build() prints (the source itself raises ValueError on its second call).
GAIN_SHOWN = """\
    print(len(gain.trainable_weights), np.asarray(gain(np.ones((1, 2), "float32"))).tolist())
    """
GAIN_IN_BUILD = """\
    import keras
    import numpy as np

    class Gain(keras.layers.Layer):
        def build(self, input_shape):
            self.gain = self.add_weight(shape=(), initializer="ones")

        def call(self, signal):
            return signal * self.gain

    gain = Gain()
    gain(np.ones((3, 4), "float32"))
    gain(np.ones((3, 4), "float32"))
    """
FIX_CASES = (
    FixCase(
        CODE,
        GAIN_IN_CALL.rstrip(" ") + GAIN_SHOWN,
        GAIN_IN_BUILD.rstrip(" ") + GAIN_SHOWN,
        "add_weight in call",
    ),
)
