from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

CODE = "TFC012"


def test_fixed_leading_dimension_in_decorator():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec(shape=[32, 784], dtype=tf.float32)])
        def predict(x):
            return x
        """
    [finding] = check(source, CODE)
    assert finding.severity is Severity.HINT
    assert span(finding) == (3, 52, 3, 54)
    assert "to 32" in finding.message
    assert "TensorSpec(shape=[None, 784]" in fixed(source, finding)


def test_wrapping_call_under_alias_with_tuple_shape():
    source = """\
        import tensorflow as t
        from tensorflow import TensorSpec

        def f(x, y):
            return x
        g = t.function(f, input_signature=(TensorSpec((8,)), t.TensorSpec([None, 3])))
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 48, 6, 49)


def test_leading_dimension_from_a_module_constant():
    source = """\
        import tensorflow as tf
        BATCH = 64

        @tf.function(input_signature=[tf.TensorSpec([BATCH, 3])])
        def f(x):
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 46, 4, 51)
    assert "`BATCH` = 64" in finding.message
    assert "tf.TensorSpec([None, 3])" in fixed(source, finding)


def test_notebook_cells():
    cells = [
        "import tensorflow as tf",
        "spec = 1\n@tf.function(input_signature=[tf.TensorSpec([4, 2])])\ndef f(x):\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 2, 46, 2, 47)


def test_none_batch_and_scalars_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None, 10]), tf.TensorSpec([])])
        def f(x, k):
            return x

        spec = tf.TensorSpec([32, 10])   # not in an input_signature

        @tf.function(input_signature=[tf.TensorSpec([n, 10])])
        def g(x):
            return x
        """
    assert check(source, CODE) == []
