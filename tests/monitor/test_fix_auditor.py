"""The fix auditor (benchmarks/audit_printed_fixes.py) applies a printed fix as a learner
would and tells whether the cell then runs: its edits on cells (fast), and its verdicts on
a small notebook it runs in a real kernel with the monitor loaded."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _auditor() -> ModuleType:
    path = ROOT / "benchmarks" / "audit_printed_fixes.py"
    spec = importlib.util.spec_from_file_location("audit_printed_fixes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


audit = _auditor()


def test_a_statement_replaces_the_line_that_assigns_its_target_or_makes_its_call() -> None:
    cell = "path = 'w.h5'\nnet.save_weights(path)\nprint(path)"
    assert audit.apply_fix(cell, 2, ["path = 'w.weights.h5'"]) == (
        "path = 'w.weights.h5'\nnet.save_weights(path)\nprint(path)",
        2,
    )
    assert audit.apply_fix(cell, 2, ["net.save_weights('w.weights.h5')"])[0] == (
        "path = 'w.h5'\nnet.save_weights('w.weights.h5')\nprint(path)"
    )
    # A name made in an earlier cell and read here: its new line goes before the failing one.
    assert audit.apply_fix("def f(v):\n    return k * v\nf(2)", 2, ["v = float(v)"]) == (
        "def f(v):\n    v = float(v)\n    return k * v\nf(2)",
        3,
    )


def test_a_new_whole_value_replaces_a_failing_item_assignment() -> None:
    cell = "g, h = pair()\ng[0, 0] = 0.0\nuse(g)"
    assert audit.apply_fix(cell, 2, ["g = tf.tensor_scatter_nd_update(g, [[0, 0]], [0.0])"])[0] == (
        "g, h = pair()\ng = tf.tensor_scatter_nd_update(g, [[0, 0]], [0.0])\nuse(g)"
    )


def test_a_new_statement_put_before_a_line_is_inserted_there() -> None:
    cell = "def f(n):\n    out = start()\n    for i in n:\n        out = grow(out)\n    return out"
    prose = "put `declare(out)` before line 4, as the first line of the loop's body."
    assert audit.apply_fix(cell, 3, ["declare(out)"], prose)[0] == (
        "def f(n):\n    out = start()\n    for i in n:\n        declare(out)\n"
        "        out = grow(out)\n    return out"
    )
    # A line of another cell is not this cell's line.
    other = "put `declare(out)` before line 4 of cell In[3], as the first line of the body."
    assert audit.apply_fix(cell, 3, ["declare(out)"], other)[0] != (
        "def f(n):\n    out = start()\n    for i in n:\n        declare(out)\n"
        "        out = grow(out)\n    return out"
    )


def test_a_statement_given_on_a_named_line_replaces_that_line() -> None:
    cell = "with w.as_default():\n    log('a', 1)\n    log('b', 2)"
    prose = "Fix: on line 3 `log('b', 2, step=s)`, and `log('a', 1, step=s)`."
    spans = ["log('b', 2, step=s)", "log('a', 1, step=s)"]
    assert audit.apply_fix(cell, 2, spans, prose)[0] == (
        "with w.as_default():\n    log('a', 1, step=s)\n    log('b', 2, step=s)"
    )


def test_a_statement_given_in_place_of_lines_replaces_them() -> None:
    cell = (
        "def f(ws):\n    c = make(ws)\n    for a, b in zip(c, gs):\n        a.sub(b)\n    return c"
    )
    prose = (
        "Fix: on line 2 `c = list(ws)`, and in place of lines 3-4 "
        "`c = [a - b for a, b in zip(c, gs)]`."
    )
    spans = ["c = list(ws)", "c = [a - b for a, b in zip(c, gs)]"]
    assert audit.apply_fix(cell, 2, spans, prose)[0] == (
        "def f(ws):\n    c = list(ws)\n    c = [a - b for a, b in zip(c, gs)]\n    return c"
    )


def test_a_respelled_method_replaces_the_failing_call() -> None:
    cell = "for s in splits:\n    tp.reset_states()\n    gap.reset_states()"
    prose = "Fix: on line 3 `gap.reset_state()`, and `tp.reset_state()`."
    spans = ["gap.reset_state()", "tp.reset_state()"]
    assert audit.apply_fix(cell, 2, spans, prose)[0] == (
        "for s in splits:\n    tp.reset_state()\n    gap.reset_state()"
    )


def test_two_assignments_of_one_name_are_not_merged_into_a_pair() -> None:
    cell = "g = tape.gradient(l, v)\ng = clip(g, 1.0)\nopt.apply(zip(g, v))"
    assert audit.apply_fix(cell, 3, ["g, norm = clip(g, 1.0)"])[0] == (
        "g = tape.gradient(l, v)\ng, norm = clip(g, 1.0)\nopt.apply(zip(g, v))"
    )


def test_an_expression_replaces_the_part_of_the_failing_line_it_rewrites() -> None:
    assert audit.apply_fix("out = rate * steps + 1", 1, ["tf.cast(steps, tf.float32)"])[0] == (
        "out = rate * tf.cast(steps, tf.float32) + 1"
    )
    assert audit.apply_fix("r = float(sgd.lr)", 1, ["sgd.learning_rate"])[0] == (
        "r = float(sgd.learning_rate)"
    )
    assert audit.apply_fix("y = m.predict(one, verbose=0)", 1, ["m.predict(one[None])"])[0] == (
        "y = m.predict(one[None])"
    )
    # Placeholders and prose are no code to run; a span about nothing on the line neither.
    assert audit.apply_fix("y = m(x)", 1, ["m.export(...)", "validation_data="]) == (None, 1)
    assert audit.apply_fix("y = m(x)", 1, ["other_thing"]) == (None, 1)


NOTEBOOK = [
    "import numpy as np\nimport keras",
    # A mistyped layer class: its printed fix runs.
    "stack = [keras.layers.Dence(4), keras.layers.Dense(1)]",
    "print(len(stack))",
]


@pytest.mark.kernel
@pytest.mark.tensorflow
@pytest.mark.timeout(300)
def test_the_auditor_runs_each_printed_fix_in_a_kernel(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in NOTEBOOK])
    path = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, path)
    records = audit.audit_notebook(path)
    assert [(r["cell"], r["outcome"]) for r in records] == [(1, audit.FIXED)]
    assert records[0]["fixed_source"] == ("stack = [keras.layers.Dense(4), keras.layers.Dense(1)]")
    assert "fixed: 1, same error: 0, another error: 0, not applicable: 0" in audit.summary(records)


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_the_auditor_tells_the_same_error_from_another(tmp_path: Path) -> None:
    """Cells run in a real kernel stand for a fixed cell: raising the original exception at
    the failing line or below is the same error; another exception, or one above, is not."""
    from nbclient import NotebookClient

    sources = [
        "x = 1\nint('a')",  # ValueError on line 2
        "y = 2\nz = 3\nint('b')",  # ValueError on line 3
        "int('c')\nw = 4",  # ValueError on line 1
        "x = 1\nlen(5)",  # TypeError on line 2
        "x = 1\ny = 2",  # runs
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(notebook, allow_errors=True, kernel_name="python3", timeout=60).execute()
    original, *fixed = notebook.cells
    error = audit._error_of(original)
    line = audit.failing_line(error["traceback"], original["execution_count"])
    assert line == 2
    verdicts = [audit.classify(error, line, cell, line)[0] for cell in fixed]
    assert verdicts == [audit.SAME, audit.OTHER, audit.OTHER, audit.FIXED]
