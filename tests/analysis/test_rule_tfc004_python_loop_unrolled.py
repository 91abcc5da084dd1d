from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.rules.tfc004_python_loop_unrolled import (
    DOCS,
    MAX_UNROLLED_ITERATIONS,
)
from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

CODE = "TFC004"


def test_threshold_is_stated_in_the_docs():
    assert MAX_UNROLLED_ITERATIONS == 8
    assert "more than 8 iterations" in " ".join(DOCS.split())


def test_range_literal_is_unrolled_and_fixed_with_tf_range():
    source = """\
        import tensorflow as tf

        @tf.function
        def total(x):
            for i in range(1000):
                x = x + i
            return x
        """
    [finding] = check(source, CODE)
    assert finding.severity is Severity.INFORMATION
    assert span(finding) == (5, 14, 5, 25)
    assert finding.message == (
        "Python `for` loop over `range(1000)` in tf.function `total` unrolls 1000 iterations "
        "into the graph (more than 8)"
    )
    after = fixed(source, finding)
    assert after.splitlines()[4] == "    for i in tf.range(1000):"
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
