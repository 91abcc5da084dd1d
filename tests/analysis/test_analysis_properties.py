"""The analyser never crashes: arbitrary text and mutated real sources."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyterlab_tfcoach.analysis import AnalysisSyntaxError, analyze_cells, analyze_source
from jupyterlab_tfcoach.analysis.fixes import apply_edits

DATA = Path(__file__).parents[1] / "data" / "rules"
REAL_SOURCE = (DATA / "training_loop.py").read_text(encoding="utf-8")
REAL_LINES = REAL_SOURCE.splitlines()

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Fragments that keep mutated code TensorFlow-flavoured, so rules really run.
FRAGMENTS = st.sampled_from(
    [
        "tf.Variable(1.0)", "tf.constant([1, 2])", "tf.constant(0.5)", "tf.GradientTape()",
        "tf.GradientTape(persistent=True)", "tape.gradient(y, x)", "print(x)", "x.numpy()",
        "range(3)", "[1, 2]", "w = w - 1", "w -= 1", "global calls", "nonlocal calls",
        "@tf.function", "del tape", "with tf.GradientTape() as tape:", "for i in range(4):",
        "if self.v is None:", "self.v = tf.Variable(0)", "lambda v: v.numpy()", "é", "🙂",
        "(", ")", ":", "\t", "\\", '"""', "#", "# noqa", "%time", "!ls", "?", "\r\n", "\n",
        "    ", "import tensorflow as t", "from tensorflow import function as F",
        "tf.TensorSpec([8, 3])", "x, y = y, x", "[v for v in range(2)]", "(z := 3)",
    ]
)  # fmt: skip


def _analyze(text: str) -> None:
    try:
        findings = analyze_source(text)
    except AnalysisSyntaxError:
        return
    tree_lines = text.splitlines() or [""]
    for finding in findings:
        assert 1 <= finding.line <= finding.end_line
        assert finding.column >= 1 and finding.end_column >= 1
        if finding.line == finding.end_line:
            assert finding.column <= finding.end_column
        assert finding.message and "\n" not in finding.message
        assert finding.end_line <= len(tree_lines) + 1
        if finding.fix is not None:
            ast.parse(apply_edits(text, finding.fix.edits))


@SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text(text: str) -> None:
    _analyze(text)


@SETTINGS
@given(st.text(max_size=200))
def test_arbitrary_text_after_a_tensorflow_import(text: str) -> None:
    _analyze("import tensorflow as tf\n" + text)


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(0, len(REAL_LINES)), st.integers(0, 3), FRAGMENTS),
        min_size=1,
        max_size=6,
    )
)
def test_mutated_real_source(mutations: list[tuple[int, int, str]]) -> None:
    lines = list(REAL_LINES)
    for index, action, fragment in mutations:
        if action == 0 and index < len(lines):
            del lines[index]
        elif action == 1:
            lines.insert(index, fragment)
        elif action == 2 and index < len(lines):
            lines[index] = lines[index] + " " + fragment
        elif index < len(lines):
            indent = len(lines[index]) - len(lines[index].lstrip())
            lines[index] = " " * indent + fragment
    _analyze("\n".join(lines) + "\n")


@SETTINGS
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=40)), max_size=6))
def test_arbitrary_notebook_cells(cells: list[str]) -> None:
    findings = analyze_cells(["import tensorflow as tf", *cells])
    for finding in findings:
        assert finding.cell is not None and 0 <= finding.cell <= len(cells)
        assert finding.line >= 1
