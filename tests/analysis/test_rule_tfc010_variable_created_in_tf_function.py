from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC010"


def test_unconditional_variable_creation():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            total = tf.Variable(0.0)
            return total + x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 13, 5, 29)
    assert "`step`" in finding.message


def test_method_under_alias_and_from_import():
    source = """\
        import tensorflow as t
        from tensorflow import Variable as V

        class M:
            @t.function
            def __call__(self, x):
                self.v = V(1.0)
                return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 18, 7, 24)


def test_notebook_cells():
    cells = ["import tensorflow as tf", "@tf.function\ndef f():\n    return tf.Variable(1)"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 12, 3, 26)


def test_guarded_or_outside_creation_is_silent():
    source = """\
        import tensorflow as tf
        v = tf.Variable(1.0)

        class M:
            def __init__(self):
                self.w = None

            @tf.function
            def __call__(self, x):
                if self.w is None:
                    self.w = tf.Variable(x)
                return self.w * x

        def eager():
            return tf.Variable(1.0)

        @tf.function
        def uses(x):
            return v * x
        """
    assert check(source, CODE) == []
