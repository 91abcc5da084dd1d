from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

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
    # This used `TensorSpec((8,))`, a rank-1 spec, which is now deliberately silent (see
    # test_rank_one_specs_are_silent); the rank-2 `(8, 5)` keeps the alias case covered.
    source = """\
        import tensorflow as t
        from tensorflow import TensorSpec

        def f(x, y):
            return x
        g = t.function(f, input_signature=(TensorSpec((8, 5)), t.TensorSpec([None, 3])))
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 48, 6, 49)
    assert "TensorSpec((None, 5))" in fixed(source, finding)


def test_signature_bound_to_a_name_reports_the_spec_inside_it():
    source = """\
        import tensorflow as tf

        SIG = [tf.TensorSpec((32, 28, 28), tf.float32)]

        def f(x):
            return x

        g = tf.function(f, input_signature=SIG)

        @tf.function(input_signature=SIG)
        def h(x):
            return x
        """
    [finding] = check(source, CODE)  # one spec, one finding, however many users
    assert span(finding) == (3, 23, 3, 25)
    assert "to 32" in finding.message
    after = fixed(source, finding)
    assert "SIG = [tf.TensorSpec((None, 28, 28), tf.float32)]" in after
    assert check(after, CODE) == []


def test_named_specs_and_signature_in_another_cell():
    cells = [
        "import tensorflow as tf\nIMAGE = tf.TensorSpec([16, 224, 224, 3], tf.float32)\n"
        "SIG = (IMAGE, tf.TensorSpec([None], tf.int32))",
        "@tf.function(input_signature=SIG)\ndef f(x, y):\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (0, 2, 24, 2, 26)
    assert [edit.new_text for edit in finding.fix.edits] == ["None"]


def test_rank_one_specs_are_silent():
    # A rank-1 spec is one vector whose length is part of its meaning (an image size,
    # a pair of indices): it has no batch axis to free.
    source = """\
        import tensorflow as tf

        SIZE_SIG = [tf.TensorSpec([2], tf.int32)]

        @tf.function(input_signature=[tf.TensorSpec((3,), tf.float32), tf.TensorSpec([2])])
        def resize(mean, size):
            return mean

        g = tf.function(resize, input_signature=SIZE_SIG)
        """
    assert check(source, CODE) == []


def test_rank_two_and_more_still_reported():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec((32, 224, 224, 3)), tf.TensorSpec([32, 10])])
        def f(images, labels):
            return images
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(3, 46, 3, 48), (3, 80, 3, 82)]


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

        SIG = [tf.TensorSpec((None, 28, 28), tf.float32)]
        OTHER = [tf.TensorSpec((32, 28, 28), tf.float32)]   # never used as a signature

        @tf.function(input_signature=SIG)
        def named(x):
            return x
        """
    assert check(source, CODE) == []


def test_fixed_size_parameter_beside_a_free_batch_input_is_silent():
    source = """\
        import tensorflow as tf

        num_tags = 10
        sig = (
            tf.TensorSpec([None, None, num_tags]),
            tf.TensorSpec([num_tags, num_tags]),
            tf.TensorSpec([None], tf.int32),
        )

        @tf.function(input_signature=sig)
        def decode(potentials, transitions, lengths):
            return tf.einsum("btn,nm->btm", potentials, transitions)
        """
    assert check(source, CODE) == []
    # Without an input whose batch is free, the fixed leading size is still reported.
    fixed_batch = source.replace(
        "tf.TensorSpec([None, None, num_tags])", "tf.TensorSpec([4, None, num_tags])"
    )
    assert [f.line for f in check(fixed_batch, CODE)] == [5, 6]


# Proven by tests/analysis/test_fixes_proven.py: each fix applied and re-checked with every
# rule and, the runnable ones, run against code that does what the source means to do.
ROW_SUMS = """\
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec(shape=[4, 3], dtype=tf.float32)])
    def row_sums(x):
        return tf.reduce_sum(x, axis=1)

    print(row_sums(tf.ones([4, 3])).numpy().tolist(), row_sums(tf.ones([2, 3])).numpy().tolist())
    """
FIX_CASES = (
    FixCase(
        CODE,
        ROW_SUMS,
        ROW_SUMS.replace(
            "@tf.function(input_signature=[tf.TensorSpec(shape=[4, 3], dtype=tf.float32)])",
            "@tf.function",
        ),
        "a batch of another size",
    ),
)
