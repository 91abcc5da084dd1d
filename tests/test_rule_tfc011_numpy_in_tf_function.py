from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

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
