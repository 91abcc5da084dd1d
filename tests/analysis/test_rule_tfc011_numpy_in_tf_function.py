from __future__ import annotations

import textwrap

from jupyterlab_tfcoach.analysis.rules.tfc011_numpy_in_tf_function import _NUMPY_TO_TF
from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, eagerly, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC011"


def test_numpy_call_in_tf_function():
    source = """\
        import tensorflow as tf

        @tf.function
        def normalize(x):
            mean = x.numpy().mean()
            return x - mean
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 12, 5, 21)
    assert "`x.numpy()`" in finding.message


def test_alias_and_wrapped_function():
    source = """\
        from tensorflow import function

        def body(x):
            return float(x.numpy())

        body = function(body)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 18, 4, 27)


def test_notebook_cells():
    cells = ["import tensorflow as t", "@t.function\ndef f(x):\n    return x.numpy()"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 12, 3, 21)


def test_eager_code_and_py_function_callbacks_are_silent():
    source = """\
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp

        def eager(x):
            return x.numpy()

        @tf.function
        def graph(x):
            y = tf.py_function(lambda v: v.numpy() * 2, [x], tf.float32)
            return tf.experimental.numpy.sum(y)
        """
    assert check(source, CODE) == []


def test_numpy_in_an_eager_only_branch_is_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                tf.print(x.numpy().mean())
            return x.numpy()
        """
    [finding] = check(source, CODE)
    assert finding.line == 7


# -- code the trace runs outside the tf.function's own body (issue 12) --------------------


def test_nested_function_called_in_the_body():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            def scale(v):
                return v.numpy() * 2
            return scale(x)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 16, 6, 25)
    assert finding.message == (
        "`scale` is called from tf.function `step`, so `v.numpy()` in it runs while tracing, "
        "where graph tensors have no value to convert; use TensorFlow ops instead"
    )


def test_nested_function_handed_to_numpy_function_is_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            def scale(v):
                return v.numpy() * 2
            return tf.py_function(scale, [x], tf.float32)
        """
    assert check(source, CODE) == []


def test_module_level_helper_once_and_method_helper():
    source = """\
        import tensorflow as tf

        def to_numpy(x):
            return x.numpy()

        class Model:
            def stats(self, x):
                return x.numpy().mean()

            @tf.function
            def __call__(self, x):
                return self.stats(x) + to_numpy(x) + to_numpy(x)

        print(to_numpy(tf.constant(1.0)))
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(4, 12, 4, 21), (8, 16, 8, 25)]
    assert "`to_numpy` is called from tf.function `__call__`" in findings[0].message
    assert "`stats` is called from tf.function `__call__`" in findings[1].message


def test_helpers_outside_the_trace_are_silent():
    source = """\
        import tensorflow as tf

        def eager_mean(x):
            return x.numpy().mean()          # only called eagerly

        def checked(x):
            if tf.executing_eagerly():
                return x.numpy()             # eager-only branch in the helper
            return x

        def outer(x):
            return eager_mean(x)             # helper of a helper: not followed

        @tf.function
        def step(x):
            return checked(x) + outer(x)

        eager_mean(tf.constant([1.0]))
        """
    assert check(source, CODE) == []


def test_helper_in_an_earlier_notebook_cell():
    cells = [
        "import tensorflow as tf\n\ndef mean(x):\n    return x.numpy().mean()",
        "@tf.function\ndef f(x):\n    return mean(x)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (0, 4, 12, 4, 21)


NUMPY_ON_TENSORS = """\
    import numpy as np
    from numpy import maximum
    import tensorflow as tf

    @tf.function
    def stats(x):
        mean = np.mean(x, axis=0)
        top = np.argmax(x, axis=1)
        return np.sum(x) - mean[0], top, maximum(x, np.exp(tf.zeros([2])))

    result = stats(tf.constant([[1.0, 4.0], [3.0, 2.0]]))
    values = [result[0].numpy().tolist(), result[1].numpy().tolist(), result[2].numpy().tolist()]
    """


def test_numpy_functions_on_tensors_fail_and_the_fixes_run():
    findings = check(NUMPY_ON_TENSORS, CODE)
    assert [span(f) for f in findings] == [
        (7, 12, 7, 30),
        (8, 11, 8, 31),
        (9, 12, 9, 21),
        (9, 38, 9, 71),
        (9, 49, 9, 70),
    ]
    assert findings[0].message == (
        "`np.mean(x, axis=0)` in tf.function `stats` runs while tracing on a symbolic tensor "
        "and fails; use `tf.reduce_mean`"
    )
    assert [f.fix.description for f in findings if f.fix] == [
        "Replace with `tf.reduce_mean`",
        "Replace with `tf.argmax`",
        "Replace with `tf.reduce_sum`",
        "Replace with `tf.maximum`",
        "Replace with `tf.exp`",
    ]
    repaired = NUMPY_ON_TENSORS
    # Apply from the last edit backwards so earlier positions stay valid.
    for finding in sorted(findings, key=span, reverse=True):
        repaired = fixed(repaired, finding)
    assert "tf.reduce_mean(x, axis=0)" in repaired
    assert "tf.maximum(x, tf.exp(tf.zeros([2])))" in repaired
    assert check(repaired, CODE) == []
    broken, working = run_tensorflow(NUMPY_ON_TENSORS, repaired, values="values")
    assert broken.error == "NotImplementedError"
    assert working.error is None
    assert working.probes["values"] == [8.0, [1, 0], [[1.0, 4.0], [3.0, 2.0]]]


def test_numpy_calls_without_a_same_meaning_op_get_no_fix():
    source = """\
        import numpy as np
        import tensorflow as tf

        @tf.function
        def f(x, n):
            a = np.argmax(x)
            b = np.sum(x, dtype=np.float64)
            c = np.std(x)
            d = np.mean(tf.constant([1, 2]))
            return a, b, c, d
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [6, 7, 8, 9]
    assert all(f.fix is None for f in findings)
    assert findings[0].message.endswith("fails; use TensorFlow ops instead")


def test_numpy_on_constants_outside_tf_function_and_in_callbacks_is_silent():
    source = """\
        import numpy as np
        import tensorflow as tf

        def eager(x):
            return np.mean(x)

        @tf.function
        def f(x):
            scale = np.float32(0.5) * np.pi + np.arange(3)
            y = tf.numpy_function(lambda v: np.mean(v), [x], tf.float64)
            z = tf.py_function(lambda v: np.exp(v.numpy()), [x], tf.float32)
            if tf.executing_eagerly():
                print(np.mean(x))
            return x * scale + y + z
        """
    assert check(source, CODE) == []


def test_numpy_in_a_helper_and_under_another_alias():
    source = """\
        import numpy
        import tensorflow as tf

        def helper(t):
            return numpy.sqrt(tf.square(t))

        @tf.function
        def f(x):
            return helper(x) + numpy.linalg.norm(x)
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [5, 9]
    assert "`helper` is called from tf.function `f`" in findings[0].message
    assert findings[1].fix is None


def test_numpy_under_init_scope_runs_eagerly_and_is_silent():
    source = """\
        import tensorflow as tf

        v = tf.Variable(1.0)

        @tf.function
        def f(x):
            with tf.init_scope():
                start = v.numpy()      # lifted out of the graph: an eager read
            return x * 2 + x.numpy()   # still inside the graph
        """
    [finding] = check(source, CODE)
    assert (finding.line, finding.column) == (9, 20)


# -- Keras 3 (issue #26): call(), train_step and Dataset.map functions -------------------


def test_numpy_in_call_of_a_keras_layer_without_tensorflow_import():
    source = """\
        import keras
        import numpy as np
        from keras import ops

        class Standardize(keras.layers.Layer):
            def call(self, features):
                centre = features.numpy().mean()
                spread = ops.convert_to_numpy(features).std()
                peak = np.max(features)
                return (features - centre) / spread + ops.mean(features) * peak

        model = keras.Sequential([keras.Input((6,)), Standardize()])
        model.compile(optimizer="sgd", loss="mse")
        scores = model.predict(np.ones((2, 6)))
        print(keras.ops.convert_to_numpy(model(np.ones((1, 6)))), scores.mean())
        """
    first, second, third = check(source, CODE)
    assert (first.line, second.line, third.line) == (7, 8, 9)
    assert "`features.numpy()` in Keras-traced `Standardize.call`" in first.message
    assert "`ops.convert_to_numpy(features)`" in second.message
    assert "`np.max(features)`" in third.message


def test_tf_keras_convert_to_numpy_in_train_step_and_numpy_in_a_dataset_map():
    source = """\
        import numpy as np
        import tensorflow as tf

        class Net(tf.keras.Model):
            def train_step(self, data):
                x, y = data
                tf.keras.ops.convert_to_numpy(y)
                return super().train_step(data)

        net = Net()
        net.compile(optimizer="sgd", loss="mse")
        rows = tf.data.Dataset.from_tensor_slices(np.ones((4, 3)))
        rows = rows.map(lambda row: row.numpy() * 2)
        """
    first, second = check(source, CODE)
    assert first.line == 7 and "Keras-traced `Net.train_step`" in first.message
    assert second.line == 13 and "Dataset.map function" in second.message


def test_keras_look_alikes_are_silent():
    source = """\
        import keras
        import numpy as np

        class Standardize(keras.layers.Layer):
            def call(self, features):
                return (features - keras.ops.mean(features)) / keras.ops.std(features)

        class Debug(keras.Model):
            def __init__(self):
                super().__init__()
                self.head = keras.layers.Dense(1)

            def call(self, features):
                print(features.numpy().mean())  # runs eagerly: it has a value
                return self.head(features)

        model = Debug()
        model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
        scores = model.predict(np.ones((2, 6)))
        print(keras.ops.convert_to_numpy(scores).mean(), np.mean(scores))
        """
    assert check(source, CODE) == []
    # It runs as the test says: eager ``.numpy()`` in ``call``, NumPy outside.
    [outcome] = run_tensorflow(textwrap.dedent(source), shape="list(scores.shape)")
    assert outcome.error is None and outcome.probes["shape"] == [2, 1]


def test_numpy_in_train_step_of_a_model_only_stepped_by_hand_is_silent():
    # The compiled model is a functional keras.Model a function of the file builds: its
    # fit runs Keras's train_step, never the subclass's, which this file calls eagerly.
    source = """\
        import numpy as np
        import tensorflow as tf

        class Recorder(tf.keras.Model):
            def train_step(self, batch):
                self.seen.append(batch[0].numpy())
                return {}

        def functional():
            sample = tf.keras.Input(shape=(3,))
            head = tf.keras.layers.Dense(2)(sample)
            model = tf.keras.Model(sample, head)
            return model

        recorder = Recorder()
        recorder.seen = []
        recorder.train_step((np.ones((4, 3)), np.zeros((4, 2))))
        model = functional()
        model.compile(optimizer="adam", loss="mse")
        """
    assert check(source, CODE) == []


def test_numpy_on_a_keras_ops_result_in_call():
    source = """\
        import keras
        import numpy as np
        from keras import ops

        class Normalize(keras.layers.Layer):
            def call(self, inputs):
                energy = ops.sum(ops.square(inputs))
                return inputs / np.sqrt(energy) * np.sqrt(2.0)

        model = keras.Sequential([keras.Input((3,)), Normalize()])
        model.compile(loss="mse")
        """
    [finding] = check(source, CODE)
    assert finding.line == 8 and "`np.sqrt(energy)`" in finding.message


# -- every op the fix writes exists (issue #26) --------------------------------------------

LOG_OF_A_TENSOR = """\
    import numpy as np
    import tensorflow as tf

    @tf.function
    def log_likelihood(p):
        return np.log(p)

    print(np.asarray(log_likelihood(tf.constant([1.0, 0.5])), dtype=np.float64).round(4).tolist())
    """


def test_np_log_becomes_tf_math_log():
    [finding] = check(LOG_OF_A_TENSOR, CODE)
    assert finding.message.endswith("fails; use `tf.math.log`")
    assert finding.fix.description == "Replace with `tf.math.log`"
    repaired = fixed(LOG_OF_A_TENSOR, finding)
    assert "    return tf.math.log(p)" in repaired.splitlines()
    broken, working = run_tensorflow(LOG_OF_A_TENSOR, repaired)
    assert broken.error == "NotImplementedError"
    assert (working.error, working.stdout) == (None, "[0.0, -0.6931]\n")


def test_every_op_the_fix_writes_exists_in_the_installed_tensorflow():
    names = sorted({op for op, _, _ in _NUMPY_TO_TF.values()})
    lookup = f"""\
        import functools
        import tensorflow as tf

        def exists(name):
            try:
                functools.reduce(getattr, name.split(".")[1:], tf)
            except AttributeError:
                return False
            return True

        missing = [name for name in {names!r} if not exists(name)]
        """
    [outcome] = run_tensorflow(lookup, missing="missing")
    assert outcome.error is None
    assert outcome.probes["missing"] == []
    assert "tf.math.log" in names


EVERY_MAPPED_FUNCTION = """\
    import numpy as np
    import tensorflow as tf

    @tf.function
    def stats(x, m):
        reductions = [np.mean(x, axis=0), np.sum(x), np.max(x, axis=1), np.min(x), np.prod(x)]
        elementwise = [np.exp(x), np.log(x), np.sqrt(x), np.square(x), np.abs(m), np.tanh(x)]
        pairs = [np.maximum(x, m), np.minimum(x, m), np.matmul(x, m)]
        return reductions, elementwise, pairs, np.argmax(x, axis=1), np.argmin(x, axis=0)

    def show(values):
        return [np.round(np.asarray(v, dtype=np.float64), 4).tolist() for v in values]

    x = tf.constant([[1.0, 4.0], [3.0, 2.0]])
    m = tf.constant([[2.0, 0.5], [1.0, 3.0]])
    reductions, elementwise, pairs, top, bottom = stats(x, m)
    print(show(reductions), show(elementwise), show(pairs), show([top, bottom]))
    """

# Proven by tests/analysis/test_fixes_proven.py: the fixed tf.function prints what its
# Python code prints run eagerly (where NumPy works on tensors).
FIX_CASES = (
    FixCase(CODE, LOG_OF_A_TENSOR, eagerly(LOG_OF_A_TENSOR), "the issue's case: np.log"),
    FixCase(CODE, EVERY_MAPPED_FUNCTION, eagerly(EVERY_MAPPED_FUNCTION), "every mapped function"),
)


def test_numpy_on_arithmetic_of_the_parameters():
    # ``scaled`` is computed from the parameters: a symbolic tensor while tracing.
    source = """\
        import tensorflow as tf
        from numpy import exp, sqrt

        @tf.function
        def softmax_with_temperature(logits, temperature):
            scaled = logits / temperature
            e = exp(scaled)
            return e / tf.reduce_sum(e, axis=-1, keepdims=True)

        @tf.function
        def scaled_noise(x):
            width = 2 * 8
            return x * sqrt(width)
        """
    [finding] = check(source, CODE)
    assert span(finding)[:2] == (7, 9)
    assert "`exp(scaled)`" in finding.message
    repaired = fixed(source, finding)
    assert "e = tf.exp(scaled)" in repaired
    assert check(repaired, CODE) == []


PREDICTED_LAYER = """\
    import keras
    import numpy as np

    class CountFeatures(keras.layers.Layer):
        def call(self, counts):
            return keras.ops.convert_to_tensor(np.log1p(counts))

    model = keras.Sequential([keras.Input((3,)), CountFeatures(), keras.layers.Dense(1)])
    {use}
    """


def test_numpy_in_a_layer_of_a_model_predicted_without_compile():
    # Keras 3 runs predict in a tf.function without a compile: the layer's call traces.
    source = PREDICTED_LAYER.format(use="scores = model.predict(np.ones((2, 3)))")
    [finding] = check(source, CODE)
    assert finding.line == 6 and "`np.log1p(counts)`" in finding.message
    [outcome] = run_tensorflow(textwrap.dedent(source), shape="list(scores.shape)")
    assert outcome.error is not None and "NotImplementedError" in outcome.error, outcome


def test_a_model_called_eagerly_or_predicted_eagerly_is_silent():
    for use in (
        "scores = model(np.ones((2, 3)))",  # a direct call runs eagerly
        'model.compile(loss="mse", run_eagerly=True)\nscores = model.predict(np.ones((2, 3)))',
    ):
        source = PREDICTED_LAYER.format(use=use.replace("\n", "\n    "))
        assert check(source, CODE) == [], use
        [outcome] = run_tensorflow(textwrap.dedent(source), shape="list(scores.shape)")
        assert outcome.error is None and outcome.probes["shape"] == [2, 1], outcome
    # ``predict`` of something that is not a Keras model says nothing about the layer.
    other = PREDICTED_LAYER.format(
        use="class Lookup:\n    def predict(self, rows):\n        return rows\n\n"
        "clf = Lookup()\nscores = clf.predict(np.ones((2, 3)))".replace("\n", "\n    ")
    )
    assert check(other, CODE) == []


PYTHON_DEFAULTS = """\
    import numpy as np
    import tensorflow as tf

    @tf.function
    def jittered(img, spread=0.3, shift=(-1, 1), *, gain=2.0):
        noise = np.random.normal(0, spread, size=img.shape).astype("float32")
        lo, hi = shift
        offset = np.random.uniform(lo, hi) * np.sqrt(gain)
        return img + noise + offset, np.exp(img)

    out, grown = jittered(tf.ones([2, 3]))
    value = float(tf.reduce_sum(grown))
    """


def test_numpy_on_parameters_with_python_defaults_is_silent():
    # ``spread``, ``shift`` and ``gain`` hold Python numbers in a call that leaves them out:
    # NumPy gets no tensor there and the function runs (the draws are frozen at trace time,
    # which TFC016 tells). Only ``np.exp(img)`` is given a tensor, and fails.
    [finding] = check(PYTHON_DEFAULTS, CODE)
    assert "`np.exp(img)`" in finding.message
    repaired = fixed(PYTHON_DEFAULTS, finding)
    assert check(repaired, CODE) == []
    broken, working = run_tensorflow(PYTHON_DEFAULTS, repaired, value="value")
    assert broken.error == "NotImplementedError"
    assert working.error is None
    assert working.probes["value"] > 6
