from __future__ import annotations

import textwrap

import pytest

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span
from tests.tf_runner import run_tensorflow

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


# -- integer results of shape, size, range, argmax, where (issue 12) -----------------


def _fixed_is_silent(source: str, finding) -> str:
    """Apply the finding's fix; the repaired source must no longer trigger the rule."""
    repaired = fixed(source, finding)
    assert check(repaired, CODE) == [], repaired
    return repaired


LOSS_OVER_BATCH = """\
    import tensorflow as tf
    x = tf.random.normal([4, 3])
    loss = tf.reduce_sum(x) / tf.shape(x)[0]
    """

DECAY_POWERS = """\
    import tensorflow as tf
    decay = tf.constant(0.96) ** tf.range(100)
    """


def test_float_sum_divided_by_a_shape_element():
    [finding] = check(LOSS_OVER_BATCH, CODE)
    assert span(finding) == (3, 8, 3, 41)
    assert "mixes float32 and int32 tensors" in finding.message
    assert "`tf.shape(x)[0]` is int32" in finding.message
    repaired = _fixed_is_silent(LOSS_OVER_BATCH, finding)
    assert repaired.splitlines()[2] == (
        "loss = tf.reduce_sum(x) / tf.cast(tf.shape(x)[0], tf.float32)"
    )


def test_float_constant_raised_to_a_range():
    [finding] = check(DECAY_POWERS, CODE)
    assert span(finding) == (2, 9, 2, 43)
    assert "mixes float32 and int32 tensors" in finding.message
    repaired = _fixed_is_silent(DECAY_POWERS, finding)
    assert repaired.splitlines()[1] == (
        "decay = tf.constant(0.96) ** tf.cast(tf.range(100), tf.float32)"
    )


def test_mean_over_size_and_accuracy_over_batch_size():
    source = """\
        import tensorflow as tf

        def metrics(logits, labels):
            x = tf.nn.softmax(tf.cast(logits, tf.float32))
            total = tf.math.reduce_sum(x)
            mean = total / tf.size(x)
            correct = tf.equal(tf.argmax(logits, axis=1), labels)
            acc = tf.reduce_sum(tf.cast(correct, tf.float32)) / tf.shape(labels)[0]
            return mean, acc
        """
    findings = check(source, CODE)
    assert [(f.line, f.column) for f in findings] == [(6, 12), (8, 11)]
    assert "`tf.size(x)` is int32" in findings[0].message
    assert "`tf.shape(labels)[0]` is int32" in findings[1].message
    repaired = fixed(fixed(source, findings[1]), findings[0])  # the later edit first
    assert check(repaired, CODE) == []
    lines = repaired.splitlines()
    assert lines[5].strip() == "mean = total / tf.cast(tf.size(x), tf.float32)"
    assert lines[7].strip() == (
        "acc = tf.reduce_sum(tf.cast(correct, tf.float32)) / "
        "tf.cast(tf.shape(labels)[0], tf.float32)"
    )


def test_corrected_twins_with_explicit_casts_are_silent():
    source = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3])
        loss = tf.reduce_sum(x) / tf.cast(tf.shape(x)[0], tf.float32)
        decay = tf.constant(0.96) ** tf.cast(tf.range(100), tf.float32)
        mean = tf.reduce_sum(x) / tf.cast(tf.size(x), tf.float32)
        labels = tf.constant([0, 2, 1, 1], dtype=tf.int64)
        correct = tf.equal(tf.argmax(x, axis=1), labels)
        acc = tf.reduce_sum(tf.cast(correct, tf.float32)) / tf.cast(tf.shape(labels)[0], tf.float32)
        acc2 = tf.reduce_mean(tf.cast(correct, tf.float32))
        """
    assert check(source, CODE) == []


def test_out_type_output_type_and_dtype_arguments_are_honoured():
    source = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3], dtype=tf.float64)
        a = tf.reduce_sum(x) / tf.shape(x, out_type=tf.int64)[0]
        b = tf.reduce_sum(x) / tf.size(x, tf.int64)
        c = tf.argmax(x, 1, tf.int32) * x[0]
        d = tf.math.argmin(x, axis=0, output_type=tf.int32) * x[:, 0]
        e = tf.range(4, dtype=tf.int64) * x[:, 0]
        f = tf.range(0, 4, 1, tf.int32) * x[:, 0]
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [3, 4, 5, 6, 7, 8]
    dtypes = ["int64", "int64", "int32", "int32", "int64", "int32"]
    for finding, int_dtype in zip(findings, dtypes, strict=True):
        assert f"float64 and {int_dtype}" in finding.message or (
            f"{int_dtype} and float64" in finding.message
        )
        assert "tf.float64)" in finding.fix.edits[0].new_text  # cast to the float side
    twin = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3], dtype=tf.float64)
        a = tf.reduce_sum(x) / tf.cast(tf.shape(x, out_type=tf.int64)[0], tf.float64)
        c = tf.cast(tf.argmax(x, 1, tf.int32), tf.float64) * x[0]
        e = tf.range(4, dtype=tf.float64) * x[:, 0]
        g = tf.range(4, dtype=tf.int64) * tf.shape(x, out_type=tf.int64)[0]
        """
    assert check(twin, CODE) == []


def test_rank_argmax_defaults_and_one_argument_where():
    source = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3])
        scale = x / tf.rank(x)
        picked = tf.argmax(x) * tf.reduce_max(x, axis=0)
        hits = tf.where(x > 0)
        weighted = hits * x[0, 0]
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [3, 4, 6]
    assert "`tf.rank(x)` is int32" in findings[0].message
    assert "`tf.argmax(x)` is int64" in findings[1].message
    assert "`hits` is int64" in findings[2].message
    twin = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3])
        scale = x / tf.cast(tf.rank(x), tf.float32)
        picked = tf.cast(tf.argmax(x), tf.float32) * tf.reduce_max(x, axis=0)
        hits = tf.where(x > 0)
        weighted = tf.cast(hits, tf.float32) * x[0, 0]
        chosen = tf.where(x > 0, x, tf.zeros_like(x)) * x   # three-argument where: x's dtype
        """
    assert check(twin, CODE) == []


def test_range_dtype_follows_its_arguments():
    source = """\
        import tensorflow as tf
        steps = 10
        w = tf.constant(0.5)
        a = tf.range(steps) * w
        b = tf.range(0, 1.0, 0.25) * w           # a float argument: float32
        c = tf.range(tf.shape(w)[0] * 2) * w      # int32 tensor argument
        d = tf.range(0.0, steps) * w
        n = tf.constant(3, dtype=tf.int64)
        e = tf.range(n) * w
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [4, 6, 9]
    assert "int64" in findings[2].message


def test_dtype_flows_through_reductions_math_ops_subscripts_and_operators():
    source = """\
        import tensorflow as tf
        counts = tf.constant([[1, 2], [3, 4]])
        scale = tf.constant(0.5)
        a = tf.reduce_mean(counts) * scale           # integer mean stays int32
        b = tf.abs(counts[0]) - scale
        c = tf.math.square(tf.reduce_max(counts, axis=1)) + scale
        d = (counts + counts) * scale
        e = (tf.shape(counts)[0] // 2) * scale
        f = tf.nn.relu(counts) * scale
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [4, 5, 6, 7, 8, 9]
    assert all("float32" in f.message and "int32" in f.message for f in findings)
    twin = """\
        import tensorflow as tf
        counts = tf.constant([[1, 2], [3, 4]])
        scale = tf.constant(0.5)
        a = tf.cast(tf.reduce_mean(counts), tf.float32) * scale
        b = tf.sqrt(tf.cast(counts, tf.float32)) - scale
        c = tf.exp(scale) * tf.math.log(scale) + tf.reduce_logsumexp(tf.zeros([2]))
        any_big = tf.reduce_any(counts > 2)
        frac = tf.shape(counts)[0] / 2          # int32 / int is float64
        g = frac * tf.constant(2.0, dtype=tf.float64)
        """
    assert check(twin, CODE) == []


def test_true_division_of_integer_tensors_is_float64():
    source = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3])
        ratio = tf.shape(x)[0] / tf.shape(x)[1]
        bad = ratio * tf.argmax(x)
        """
    [finding] = check(source, CODE)
    assert "float64 and int64" in finding.message
    assert fixed(source, finding).splitlines()[3] == (
        "bad = ratio * tf.cast(tf.argmax(x), tf.float64)"
    )


def test_python_numbers_and_unknown_dtypes_stay_silent():
    source = """\
        import tensorflow as tf
        x = tf.random.normal([4, 3])
        n = tf.shape(x)[0]
        a = n * 2                       # int32 tensor * int literal: int32
        b = x * 2 + x / 3               # the literal converts to float32
        c = a - n                       # both int32
        k = 4
        d = tf.range(k) * k             # int32 * int
        e = tf.reduce_sum(x) * (1 - 0.9)

        def per_example(batch, args, kwargs):
            y = tf.reduce_sum(batch) / tf.shape(*args)[0]        # which argument: unknown
            z = tf.range(len(batch)) * tf.reduce_mean(x)        # len(): not inferred
            w = tf.reduce_sum(batch) * x[0, 0]                  # a parameter's dtype: unknown
            v = tf.reduce_sum(x) / tf.shape(x, **kwargs)[0]     # out_type may be in kwargs
            u = tf.sqrt(n) * x                                  # sqrt rejects int32: unknown
            return y, z, w, v, u
        """
    assert check(source, CODE) == []


def test_sixteen_bit_float_side_gets_no_fix():
    source = """\
        import tensorflow as tf
        h = tf.zeros([3], dtype=tf.float16)
        scaled = h * tf.range(3)
        """
    [finding] = check(source, CODE)
    assert "float16 and int32" in finding.message
    assert finding.fix is None  # cast the range down to float16, or h up to float32?


def test_pitfalls_in_notebook_cells():
    cells = [
        "import tensorflow as tf\nx = tf.random.normal([8, 2])",
        "batch = tf.shape(x)[0]",
        "loss = tf.reduce_sum(x) / batch\nok = tf.reduce_sum(x) / tf.cast(batch, tf.float32)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (2, 1, 8, 1, 32)
    assert "`batch` is int32" in finding.message


# -- NumPy-style promotion (tnp.experimental_enable_numpy_behavior) ------------------

MIXED = """\
    x = tf.random.normal([4])
    loss = tf.reduce_sum(x) / tf.shape(x)[0]
    """


@pytest.mark.parametrize(
    "enable",
    [
        "import tensorflow.experimental.numpy as tnp\ntnp.experimental_enable_numpy_behavior()",
        "from tensorflow.experimental import numpy as np_tf\n"
        "np_tf.experimental_enable_numpy_behavior(True)",
        "tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode='legacy')",
        "from tensorflow.experimental.numpy import experimental_enable_numpy_behavior as enable\n"
        "enable(False, 'all')",
        "import tensorflow.experimental.numpy as tnp\n"
        "tnp.experimental_enable_numpy_behavior(dtype_conversion_mode='safe')",
        "import tensorflow.experimental.numpy as tnp\n"
        "tnp.experimental_enable_numpy_behavior(dtype_conversion_mode=MODE)",  # unknown mode
        "import tensorflow.experimental.numpy as tnp\n"
        "tnp.experimental_enable_numpy_behavior(**settings)",
        "from tensorflow.python.ops.numpy_ops import np_config\nnp_config.enable_numpy_behavior()",
    ],
)
def test_numpy_promotion_silences_the_file(enable: str):
    source = "import tensorflow as tf\n" + enable + "\n" + textwrap.dedent(MIXED)
    assert check(source, CODE) == []


@pytest.mark.parametrize(
    "enable",
    [
        "tf.experimental.numpy.experimental_enable_numpy_behavior(False, 'off')",
        "import tensorflow.experimental.numpy as tnp\n"
        "tnp.experimental_enable_numpy_behavior(dtype_conversion_mode='off')",
        "import numpy as tnp\ntnp.experimental_enable_numpy_behavior()",  # not TensorFlow's
    ],
)
def test_mode_off_and_look_alikes_keep_flagging(enable: str):
    source = "import tensorflow as tf\n" + enable + "\n" + textwrap.dedent(MIXED)
    [finding] = check(source, CODE)
    assert "mixes float32 and int32" in finding.message


def test_numpy_promotion_in_an_earlier_cell_silences_the_notebook():
    cells = [
        "import tensorflow as tf\nimport tensorflow.experimental.numpy as tnp",
        "tnp.experimental_enable_numpy_behavior(prefer_float32=True)",
        MIXED,
    ]
    assert check_cells(cells, CODE) == []
    assert len(check_cells([cells[0], MIXED], CODE)) == 1  # the same cells without the call


# -- real TensorFlow ---------------------------------------------------------------


def test_pitfalls_really_fail_and_the_fixes_really_run():
    sources = [textwrap.dedent(LOSS_OVER_BATCH), textwrap.dedent(DECAY_POWERS)]
    repaired = []
    for source in sources:
        [finding] = check(source, CODE)
        repaired.append(fixed(source, finding))
    probes = {
        "loss": "round(float(loss), 4) if 'loss' in dir() else None",
        "decay": "round(float(decay[2]), 4) if 'decay' in dir() else None",
        "check": "round(float(tf.reduce_sum(x) / 4), 4) if 'x' in dir() else None",
    }
    outcomes = run_tensorflow(*sources, *repaired, **probes)
    broken_loss, broken_decay, fixed_loss, fixed_decay = outcomes
    assert broken_loss.error in ("InvalidArgumentError", "TypeError")
    assert broken_decay.error in ("InvalidArgumentError", "TypeError")
    assert fixed_loss.error is None and fixed_decay.error is None
    assert fixed_loss.probes["loss"] == fixed_loss.probes["check"]  # sum over batch size 4
    assert fixed_decay.probes["decay"] == round(0.96**2, 4)


PYTHON_FLOATS_WITH_INT_TENSORS = """\
    import tensorflow as tf

    x = tf.ones([4, 3])
    steps = tf.range(10) * 0.1
    half_batch = tf.shape(x)[0] * 0.5
    shifted = 1.0 + tf.argmax(x, axis=1)
    """


def test_python_float_with_an_integer_tensor_is_flagged_and_fixed():
    findings = check(PYTHON_FLOATS_WITH_INT_TENSORS, CODE)
    assert [(f.line, f.column) for f in findings] == [(4, 9), (5, 14), (6, 11)]
    assert "mixes an int32 tensor with the Python float `0.1`" in findings[0].message
    assert "int64" in findings[2].message
    repaired = PYTHON_FLOATS_WITH_INT_TENSORS
    for finding in reversed(findings):
        repaired = fixed(repaired, finding)
    assert repaired.splitlines()[3] == "steps = tf.cast(tf.range(10), tf.float32) * 0.1"
    assert repaired.splitlines()[4] == "half_batch = tf.cast(tf.shape(x)[0], tf.float32) * 0.5"
    assert check(repaired, CODE) == []
    probes = {"results": "[float(tf.reduce_sum(steps)), float(half_batch), float(shifted[0])]"}
    broken, repaired_run = run_tensorflow(PYTHON_FLOATS_WITH_INT_TENSORS, repaired, **probes)
    assert broken.error == "TypeError"  # "Cannot convert 0.1 to EagerTensor of dtype int32"
    assert repaired_run.error is None
    assert repaired_run.probes["results"] == pytest.approx([4.5, 2.0, 1.0])


def test_python_numbers_that_convert_are_silent():
    source = """\
        import tensorflow as tf

        x = tf.ones([4, 3])
        doubled = tf.shape(x)[0] * 2          # int literal: stays int32
        scaled = x * 0.5                      # float tensor and float literal
        ratio = tf.range(3) / 2               # int / int literal: TF returns float64
        steps = tf.cast(tf.range(10), tf.float32) * 0.1
        unknown = len([1, 2]) * 0.5           # Python arithmetic
        """
    assert check(source, CODE) == []


LOSSES_OVER_COUNTS = """\
    import tensorflow as tf

    y_true = tf.constant([1, 0, 2, 1])
    logits = tf.random.normal([4, 3])
    mse = tf.keras.losses.MeanSquaredError(reduction=None)
    per_example = mse(tf.ones((4, 2)), tf.zeros((4, 2)))
    mse_mean = tf.reduce_sum(per_example) / tf.size(per_example)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    batch_loss = loss_fn(y_true, logits) / tf.shape(y_true)[0]
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y_true, logits=logits)
    ce_mean = tf.reduce_sum(ce) / tf.shape(y_true)[0]
    """


def test_keras_losses_and_cross_entropy_are_float32_over_integer_counts():
    findings = check(LOSSES_OVER_COUNTS, CODE)
    assert [f.line for f in findings] == [7, 9, 11]
    assert all("float32 and int32" in f.message for f in findings)
    repaired = LOSSES_OVER_COUNTS
    for finding in reversed(findings):
        repaired = fixed(repaired, finding)
    assert check(repaired, CODE) == []
    probes = {"finite": "all(bool(tf.math.is_finite(v)) for v in (mse_mean, batch_loss, ce_mean))"}
    broken, repaired_run = run_tensorflow(LOSSES_OVER_COUNTS, repaired, **probes)
    assert broken.error in ("TypeError", "InvalidArgumentError")
    assert repaired_run.error is None
    assert repaired_run.probes["finite"] is True


def test_losses_with_float_counts_and_other_callables_are_silent():
    source = """\
        import tensorflow as tf

        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        y = tf.constant([1, 0])
        x = tf.ones([2, 4])
        mean = loss_fn(y, model(x)) / tf.cast(tf.shape(y)[0], tf.float32)
        scores = model(x) / tf.shape(x)[0]      # a model's output dtype is not known here
        """
    assert check(source, CODE) == []


def test_dtype_flows_through_two_operand_ops_with_a_python_number():
    source = """\
        import tensorflow as tf

        seq_len, d_model = 10, 8
        pos = tf.range(seq_len)[:, tf.newaxis]
        i = tf.range(d_model, dtype=tf.float32)[tf.newaxis, :]
        angle = pos / tf.pow(10000.0, (2 * (i // 2)) / d_model)
        """
    [finding] = check(source, CODE)
    assert finding.line == 6
    assert "int32" in finding.message and "float32" in finding.message
    repaired = fixed(source, finding)
    assert repaired.splitlines()[5].startswith("angle = tf.cast(pos, tf.float32) / tf.pow(")
    assert check(repaired, CODE) == []
    broken, repaired_run = run_tensorflow(source, repaired, shape="list(angle.shape)")
    assert broken.error in ("TypeError", "InvalidArgumentError")
    assert repaired_run.error is None and repaired_run.probes["shape"] == [10, 8]


# Proven by tests/analysis/test_fixes_proven.py: each fix applied and re-checked with every
# rule and, the runnable ones, run against code that does what the source means to do.
HALF_BATCH = """\
    import tensorflow as tf

    x = tf.ones([4, 3])
    half_batch = tf.shape(x)[0] * 0.5
    print(float(half_batch))
    """
FIX_CASES = (
    FixCase(
        CODE,
        HALF_BATCH,
        HALF_BATCH.replace("tf.shape(x)[0] * 0.5", "x.shape[0] * 0.5"),
        "half of a batch size",
    ),
)


def test_a_tensor_with_an_unseen_operand_keeps_the_tensors_dtype():
    # ``y_pred`` is a parameter: TensorFlow converts it to float32 or raises, so the
    # difference is float32 whenever the line runs, and its sum over an int32 count fails.
    source = """\
        import tensorflow as tf

        def mean_squared_error(y_true, y_pred):
            squared = tf.square(tf.cast(y_true, tf.float32) - y_pred)
            return tf.reduce_sum(squared) / tf.size(squared)

        def scaled(steps, factors):
            return factors * tf.range(steps)   # int32 whatever ``factors`` is: no float here
        """
    [finding] = check(source, CODE)
    assert span(finding)[:2] == (5, 12)
    assert "(`tf.size(squared)` is int32)" in finding.message
    repaired = fixed(source, finding)
    assert check(repaired, CODE) == []
    assert "tf.cast(tf.size(squared), tf.float32)" in repaired
