from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

CODE = "TFC004"


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
    assert "unrolled 1000 times" in finding.message
    assert fixed(source, finding).splitlines()[4] == "    for i in tf.range(1000):"


def test_range_bound_by_module_constant_and_local_constant():
    source = """\
        import tensorflow as t
        STEPS = 10

        @t.function
        def run(x):
            n = 4
            for _ in range(STEPS):
                x += 1
            for _ in range(1, n):
                x += 1
            return x
        """
    findings = check(source, CODE)
    assert [f.message.split(" is ")[-1] for f in findings] == [
        "unrolled 10 times in the graph",
        "unrolled 3 times in the graph",
    ]
    assert fixed(source, findings[0]).splitlines()[6] == "    for _ in t.range(STEPS):"


def test_literal_list_without_fix():
    source = """\
        from tensorflow import function

        @function
        def run(x):
            for scale in [0.5, 1.0, 2.0]:
                x = x * scale
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 18, 5, 33)
    assert "unrolled 3 times" in finding.message
    assert finding.fix is None


def test_notebook_cells():
    cells = [
        "import tensorflow as tf\nN = 5",
        "@tf.function\ndef f(x):\n    for i in range(N):\n        x += i\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 14, 3, 22)


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
            for i in range(1):          # a single iteration is not worth a note
                x += 1
            return x

        def eager(x):
            for i in range(10):
                x += 1
            return x
        """
    assert check(source, CODE) == []
