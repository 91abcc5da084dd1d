from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.rules.tfc004_python_loop_unrolled import (
    DOCS,
    MAX_UNROLLED_ITERATIONS,
)
from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, eagerly, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC004"


def test_threshold_is_stated_in_the_docs():
    assert MAX_UNROLLED_ITERATIONS == 8
    assert "more than 8 iterations" in " ".join(DOCS.split())


def test_range_literal_is_unrolled_and_fixed_with_tf_range():
    # The body only computes with tensors (the index indexes the parameter), so a graph loop
    # does the same. (It was `x = x + i`, which a graph loop breaks: see below.)
    source = """\
        import tensorflow as tf

        @tf.function
        def total(x):
            acc = tf.constant(0.0)
            for i in range(1000):
                acc += x[i]
            return acc
        """
    [finding] = check(source, CODE)
    assert finding.severity is Severity.INFORMATION
    assert span(finding) == (6, 14, 6, 25)
    assert finding.message == (
        "Python `for` loop over `range(1000)` in tf.function `total` unrolls 1000 iterations "
        "into the graph (more than 8)"
    )
    after = fixed(source, finding)
    assert after.splitlines()[5] == "    for i in tf.range(1000):"
    assert check(after, CODE) == []


def test_range_bound_by_module_constant_and_local_constant():
    # Before the threshold, `n = 4` (range(1, 4): 3 iterations) was reported too; three
    # iterations are now the "few fixed iterations" the course calls fine, so it uses 20.
    source = """\
        import tensorflow as t
        STEPS = 10

        @t.function
        def run(x):
            n = 20
            for _ in range(STEPS):
                x += 1
            for _ in range(1, n):
                x += 1
            return x
        """
    findings = check(source, CODE)
    assert [f.message.split(" unrolls ")[-1] for f in findings] == [
        "10 iterations into the graph (more than 8)",
        "19 iterations into the graph (more than 8)",
    ]
    assert fixed(source, findings[0]).splitlines()[6] == "    for _ in t.range(STEPS):"


def test_count_from_constant_arithmetic_and_huge_counts():
    source = """\
        import tensorflow as tf
        EPOCHS = 3
        STEPS = 4

        @tf.function
        def run(x):
            for _ in range(EPOCHS * STEPS):
                x += 1
            for _ in range(100000000000000000000 - 1, -1, -1):  # past sys.maxsize
                x += 1
            return x
        """
    findings = check(source, CODE)
    assert len(findings) == 2
    assert "unrolls 12 iterations" in findings[0].message
    assert "unrolls 100000000000000000000 iterations" in findings[1].message


def test_long_literal_list_without_fix():
    source = """\
        from tensorflow import function

        @function
        def run(x):
            for scale in [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]:
                x = x * scale
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 18, 5, 68)
    assert "unrolls 9 iterations" in finding.message
    assert finding.fix is None


def test_notebook_cells():
    cells = [
        "import tensorflow as tf\nN = 50",
        "@tf.function\ndef f(x):\n    for i in range(N):\n        x += i\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 14, 3, 22)


def test_few_fixed_iterations_are_silent():
    # The corrected twins: at most MAX_UNROLLED_ITERATIONS copies of the body.
    source = """\
        import tensorflow as tf
        N = 5

        @tf.function
        def run(x):
            for _ in range(3):
                x += 1
            for _ in range(8):
                x += 1
            for _ in range(N):
                x += 1
            for _ in range(2, 2 * N):
                x += 1
            for scale in [0.5, 1.0, 2.0]:
                x = x * scale
            return x

        class Net(tf.Module):
            @tf.function
            def __call__(self, x):
                for layer in [self.conv, self.pool, self.dense]:
                    x = layer(x)
                return x
        """
    assert check(source, CODE) == []


def test_just_past_the_threshold_is_reported():
    source = """\
        import tensorflow as tf

        @tf.function
        def run(x):
            for _ in range(9):
                x += 1
            return x
        """
    [finding] = check(source, CODE)
    assert "unrolls 9 iterations into the graph (more than 8)" in finding.message


def test_graph_loops_and_unknown_bounds_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def run(x, n):
            for i in tf.range(10):
                x += 1
            for i in range(n):          # n may be a tensor: AutoGraph makes a graph loop
                x += 1
            for i in range(len(x)):
                x += 1
            for i in range(n * 100):
                x += 1
            for i in range(1):          # a single iteration is not worth a note
                x += 1
            return x

        def eager(x):
            for i in range(10):
                x += 1
            return x
        """
    assert check(source, CODE) == []


# -- where a graph loop would not do what the Python loop does (issue #26) -----------------

APPENDS_TO_A_LIST = """\
    import tensorflow as tf

    @tf.function
    def running_sums(x):
        sums = []
        total = tf.constant(0.0)
        for step in range(12):
            total += x[step]
            sums.append(total)
        return tf.stack(sums)

    print(running_sums(tf.range(12, dtype=tf.float32)).numpy().tolist())
    """


def test_no_tf_range_fix_where_the_body_appends_to_a_python_list():
    [finding] = check(APPENDS_TO_A_LIST, CODE)
    assert finding.fix is None
    assert finding.message.endswith(
        "(more than 8); a `tf.range` loop would not do the same here: the body appends to "
        "the Python list `sums` (a `tf.TensorArray` can)"
    )
    # What the fix used to write: the graph loop leaves `sums` holding tensors of its body.
    old_fix = APPENDS_TO_A_LIST.replace("range(12):", "tf.range(12):")
    unrolled, graph_loop = run_tensorflow(APPENDS_TO_A_LIST, old_fix)
    assert unrolled.error is None and unrolled.stdout.startswith("[0.0, 1.0, 3.0, 6.0")
    assert graph_loop.error == "InaccessibleTensorError"


INDEX_AS_A_PYTHON_VALUE = """\
    import tensorflow as tf

    @tf.function
    def f(x, y, scales, layers):
        names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
        for i in range(10):
            x = x * scales[i % 2]                # 6: arithmetic
        for i in range(10):
            tf.print(names[i], x)                # 8: a Python list indexed
        for i in range(10):
            tf.print(f"step {i}")                # 10: a string
        for i in range(10):
            x = layers[i](x)                     # 12: a parameter, but called
        for i in range(10):
            x = tf.nn.relu(x) + float(i)         # 14: a call that is not TensorFlow's
        for i in range(10):
            last = y[i]                          # 16: first set here, read after
        for i in range(10):
            if i > 3:                            # 18: a comparison
                x = x * 2.0
        return x, last
    """


def test_no_tf_range_fix_where_the_index_is_a_python_value():
    findings = check(INDEX_AS_A_PYTHON_VALUE, CODE)
    assert [f.line for f in findings] == [6, 8, 10, 12, 14, 16, 18]
    assert all(f.fix is None for f in findings)
    reasons = [f.message.split("would not do the same here: ")[1] for f in findings]
    assert reasons == [
        "the body uses `i` as a Python int (in `i % 2`); `tf.range` gives int32 tensors",
        "the body indexes `names`, a Python value, with `i`",
        'the body uses `i` as a Python int (in `f"step {i}"`); `tf.range` gives int32 tensors',
        "the body indexes `layers`, a Python value, with `i`",
        "the body passes `i` to `float`, which is not a TensorFlow op",
        "`last` is first set in the loop and read after it",
        "the body uses `i` as a Python int (in `i > 3`); `tf.range` gives int32 tensors",
    ]


def test_no_tf_range_fix_for_other_python_side_effects():
    source = """\
        import tensorflow as tf

        class Counter(tf.Module):
            @tf.function
            def __call__(self, x):
                for _ in range(20):
                    self.calls += 1
                for _ in range(20):
                    print("tracing")
                for _ in range(20):
                    self.seen.add(1)
                return x
        """
    findings = check(source, CODE)
    assert [f.message.split("here: ")[1] for f in findings] == [
        "the body sets `self.calls`",
        "the body calls Python's `print` (`tf.print` prints at every step)",
        "the body changes the Python object `self.seen`",
    ]
    assert all(f.fix is None for f in findings)


FLOAT_PLUS_INDEX = """\
    import tensorflow as tf

    @tf.function
    def total(x):
        for i in range(20):
            x = x + i
        return x

    print(total(tf.constant(0.5)).numpy())
    """


def test_the_index_in_float_arithmetic_breaks_a_graph_loop():
    [finding] = check(FLOAT_PLUS_INDEX, CODE)
    assert finding.fix is None
    old_fix = FLOAT_PLUS_INDEX.replace("range(20)", "tf.range(20)")
    unrolled, graph_loop = run_tensorflow(FLOAT_PLUS_INDEX, old_fix)
    assert (unrolled.error, unrolled.stdout) == (None, "190.5\n")
    assert graph_loop.error is not None  # float32 + int32


TENSOR_ONLY_BODIES = """\
    import tensorflow as tf

    @tf.function
    def f(x, scale):
        acc = tf.constant(0.0)
        for i in range(10):
            acc += x[i] * scale                  # the index indexes a parameter
        for i in range(10):
            acc += tf.gather(x, i) + tf.cast(i, tf.float32)
        out = tf.TensorArray(tf.float32, size=10)
        for i in range(10):
            out = out.write(i, x[i] * 2.0)
        for _ in range(10):
            acc = acc * 0.5
        return acc, out.stack()

    acc, doubled = f(tf.range(10, dtype=tf.float32), 2.0)
    print(round(float(acc), 4), doubled.numpy().tolist())
    """


def test_tf_range_fix_is_kept_for_bodies_that_compute_with_tensors():
    findings = check(TENSOR_ONLY_BODIES, CODE)
    assert [f.line for f in findings] == [6, 8, 11, 13]
    assert all(f.fix is not None for f in findings)


# Proven by tests/analysis/test_fixes_proven.py: each fix applied, re-checked with every rule
# and, the runnable ones, run against the same code run eagerly.
FIX_CASES = (
    FixCase(CODE, TENSOR_ONLY_BODIES, eagerly(TENSOR_ONLY_BODIES), "tensor-only bodies"),
    FixCase(
        CODE,
        """\
        import tensorflow as tf

        STEPS = 50

        @tf.function
        def decay(x):
            for _ in range(STEPS):
                x = x * 0.9
            return x

        print(round(float(decay(tf.constant(100.0))), 3))
        """,
        note="a constant count",
    ),
)
