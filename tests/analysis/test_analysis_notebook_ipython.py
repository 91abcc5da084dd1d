"""Notebook cells read the way IPython runs them: IPython's own input transformation is the
reference for which cells are Python, and positions stay those of the cell."""

from __future__ import annotations

import ast

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from jupyterlab_tfcoach.analysis import check_cells
from jupyterlab_tfcoach.analysis.notebook import join_cells

# Cells as notebooks have them (Colab, the TF guides, learners' own).
CORPUS = [
    "!pip install --quiet \\\n    tensorflow-datasets \\\n    keras-tuner\nimport tensorflow as tf",
    "!wget -q https://example.org/data.zip \\\n  -O data.zip\n!unzip -q data.zip",
    "%%time\nimport tensorflow as tf\nw = tf.Variable(1.0)\nw = w - 0.1",
    "%%timeit -n 3\nx = sum(range(10))",
    "%%capture captured\nprint('quiet')",
    "%%bash\necho $HOME\nls -la | head",
    "%%writefile model.py\nimport (this is not python",
    "%%html\n<b>bold</b>",
    "%matplotlib inline\nimport numpy as np\nfiles = !ls\n%time y = len(files)",
    "?np.zeros\nnp.ones??\nimport tensorflow as tf",
    "%load_ext autoreload\n%autoreload 2\nx = 1",
    "x = 1\n!echo $x \\\n  and more\ny = x + 1",
    "    import tensorflow as tf\n    x = tf.constant(1.0)\n    y = x * 2",
    "\timport numpy as np\n\tz = np.zeros(3)",
]


def _ipython_accepts(cell: str) -> bool:
    """Whether IPython's transformation of the cell compiles (what a kernel would run)."""
    transformed = TransformerManager().transform_cell(cell)
    try:
        ast.parse(transformed)
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("cell", CORPUS)
def test_cells_ipython_runs_are_not_syntax_errors(cell: str) -> None:
    assert _ipython_accepts(cell), cell
    result = check_cells([cell])
    assert result.syntax_errors == ()
    # Every line keeps its number.
    joined = join_cells([cell])
    assert joined.cell_line_count == (len(cell.split("\n")),)


def test_python_after_a_continued_shell_line_is_analysed() -> None:
    cell = (
        "!pip install --quiet \\\n"
        "    tensorflow-datasets\n"
        "import tensorflow as tf\n"
        "w = tf.Variable(1.0)\n"
        "w = w - 0.1\n"
    )
    [finding] = check_cells([cell]).findings
    assert (finding.code, finding.cell, finding.line, finding.column) == ("TFC001", 0, 5, 1)


def test_python_cell_magic_bodies_are_analysed_others_skipped() -> None:
    body = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"
    for magic in ("%%time", "%%timeit -n 1", "%%capture out", "%%prun", "%%debug"):
        [finding] = check_cells([f"{magic}\n{body}"]).findings
        assert (finding.code, finding.line, finding.column) == ("TFC002", 6, 5), magic
    for magic in ("%%bash", "%%writefile f.py", "%%html", "%%javascript"):
        result = check_cells([f"{magic}\n{body}"])
        assert result.findings == [] and result.syntax_errors == (), magic


def test_a_real_syntax_error_is_still_reported() -> None:
    # IPython hands the body to the magic as a string; it fails when %%time runs it.
    cell = "%%time\ndef broken(:\n    pass"
    [error] = check_cells([cell]).syntax_errors
    assert (error.cell, error.line) == (0, 2)


def test_an_indented_cell_parses_and_positions_stay_the_cells() -> None:
    # Pasted from inside a function: IPython strips the first line's indentation.
    cell = "    import tensorflow as tf\n    w = tf.Variable(1.0)\n    w = w - 0.1\n"
    assert _ipython_accepts(cell)
    [finding] = check_cells([cell]).findings
    assert (finding.code, finding.line, finding.column) == ("TFC001", 3, 5)
    assert cell.split("\n")[2][finding.column - 1 : finding.end_column - 1].startswith("w = w")
    # Its fix edits the cell as it is, indentation included.
    assert finding.fix is not None
    [edit] = finding.fix.edits
    assert (edit.line, edit.column) == (3, 5)
    # A real error in an indented cell points at the cell's own column.
    [error] = check_cells(["    x = 1\n    y = (\n"]).syntax_errors
    assert (error.line, error.column, error.message) == (2, 9, "'(' was never closed")
    [error] = check_cells(["    x = 1\n    y = 1 +* 2\n"]).syntax_errors
    assert (error.line, error.column) == (2, 12)  # the `*`, counted in the cell as written


def test_the_statement_after_a_timing_line_magic_is_analysed() -> None:
    setup = (
        "import tensorflow as tf\nw = tf.Variable(1.0)\n"
        "@tf.function\ndef step(x, n):\n    return x * n\n"
    )
    cells = [
        setup,
        "%time w = w - 0.1",
        "for n in range(3):\n    %timeit -n 1 -r1 step(tf.constant(1.0), n)",
        "%prun -l 5 -q v = tf.Variable(2.0)\nv = v * 2",
    ]
    for cell in cells[1:]:
        assert _ipython_accepts(cell), cell
    result = check_cells(cells)
    assert result.syntax_errors == ()
    found = [(f.code, f.cell, f.line, f.column) for f in result.findings]
    assert found == [
        ("TFC001", 1, 1, 7),  # `w = w - 0.1`, at its own column after `%time `
        ("TFC005", 2, 2, 45),  # the `n` of `step(..., n)`, a number from the loop
        ("TFC001", 3, 2, 1),  # `v` was bound by the statement under %prun
    ]
    first = result.findings[0]
    assert cells[1][first.column - 1 : first.end_column - 1] == "w = w - 0.1"
    assert cells[2].split("\n")[1][44] == "n"
    assert first.fix is not None
    [edit] = first.fix.edits
    assert (edit.line, edit.column, edit.new_text) == (1, 7, "w.assign(w - 0.1)")


def test_timing_magics_that_are_not_one_simple_statement_are_set_aside() -> None:
    cells = [
        "import tensorflow as tf\nw = tf.Variable(1.0)",
        "%time for i in range(3): w = w - 0.1",  # IPython runs it; we do not look inside
        "%timeit",
        "%time",
        "%time w = \\\n  w - 0.1",
        "w.assign_sub(0.1)\n%time w.assign_sub(0.1)",
    ]
    result = check_cells(cells)
    assert result.syntax_errors == ()
    assert result.findings == []
