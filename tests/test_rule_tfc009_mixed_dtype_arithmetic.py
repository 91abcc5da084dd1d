from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

CODE = "TFC009"


def test_int_and_float_constants_inline():
    source = """\
        import tensorflow as tf
        c = tf.constant([1, 2]) + tf.constant([0.5, 1.0])
        """
    [finding] = check(source, CODE)
    assert span(finding) == (2, 5, 2, 50)
    assert "int32 and float32" in finding.message
    assert fixed(source, finding).splitlines()[1] == (
        "c = tf.cast(tf.constant([1, 2]), tf.float32) + tf.constant([0.5, 1.0])"
    )


def test_names_and_explicit_dtypes_under_alias():
    source = """\
        import tensorflow as t
        steps = t.constant(3, dtype=t.int64)
        rate = t.constant(1, dtype=t.float64)
        out = rate * steps
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 7, 4, 19)
    assert fixed(source, finding).splitlines()[3] == "out = rate * t.cast(steps, t.float64)"


def test_variables_and_from_imports_without_cast_name():
    source = """\
        from tensorflow import Variable, constant
        counts = Variable([1, 2, 3])
        weights = constant([0.5, 0.25, 0.25])
        total = counts * weights
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 9, 4, 25)
    assert finding.fix is None  # ``tf.cast`` cannot be spelled with these imports


def test_notebook_cells():
    cells = ["import tensorflow as tf\na = tf.constant(1)", "b = tf.constant(2.0)\nc = a - b"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 2, 5, 2, 10)


def test_matching_or_cast_dtypes_and_python_numbers_are_silent():
    source = """\
        import tensorflow as tf
        a = tf.constant([1, 2])
        b = tf.constant([0.5, 1.0])
        c = tf.cast(a, tf.float32) + b
        d = a + tf.constant([3, 4])
        e = b * 2
        f = b + tf.constant([1, 2], dtype=tf.float32)
        g = tf.zeros([2]) + b
        h = unknown + a

        def fn(x):
            return x + a   # x is a parameter of unknown dtype
        """
    assert check(source, CODE) == []


def test_positional_dtypes_hints_and_integer_division():
    source = """\
        import tensorflow as tf
        noise = tf.random.uniform([3], 0, 10, tf.int32)
        ok = noise + tf.constant([1, 2, 3])
        gauss = tf.random.normal([3], 0.0, 1.0, tf.float64)
        ok = gauss * tf.constant([1.0, 2.0, 3.0], dtype=tf.float64)
        hinted = tf.convert_to_tensor([1, 2], dtype_hint=tf.float32)
        ok = hinted * tf.constant([0.5, 0.5])
        ratio = tf.constant([1, 2]) / tf.constant(2)   # int32 / int32 is float64
        ok = ratio * tf.constant([0.5, 0.5], dtype=tf.float64)
        bad = noise * tf.constant([0.5, 0.5, 0.5])
        """
    [finding] = check(source, CODE)
    assert finding.line == 10
    assert "int32 and float32" in finding.message
