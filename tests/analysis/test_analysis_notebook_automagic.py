"""Automagic cells (``pip install x``, ``ls ./data/``, ``time y = f(x)``: line magics run
without ``%``) read as IPython runs them, decided against a real IPython shell.

The reference is ipykernel's shell (the kernels JupyterLab starts), with automagic on, the
extensions a kernel loads and the tfcoach monitor loaded as the server loads it, in a child
process (its own IPython directory). For each cell of a notebook, in order, its
``transform_cell`` (IPython's ``TransformerManager``, then the prefilter that applies
automagic) says whether the kernel would raise a syntax error, run IPython machinery (a
magic, an escape), or run the cell as the Python it is; the Python cells are run, so that
the names they bind shadow magics in later cells exactly as in a kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import check_cells
from jupyterlab_tfcoach.analysis.automagic import LINE_MAGICS
from jupyterlab_tfcoach.analysis.notebook import join_cells
from jupyterlab_tfcoach.analysis.positions import split_lines

REPO_ROOT = Path(__file__).resolve().parents[2]

REFERENCE = r"""
import ast, json, sys
from IPython.core.prefilter import is_shadowed
from ipykernel.kernelapp import IPKernelApp
from ipykernel.zmqshell import ZMQInteractiveShell

import jupyterlab_tfcoach

shell = ZMQInteractiveShell.instance()
shell.automagic = True
for extension in IPKernelApp().default_extensions:  # storemagic
    shell.extension_manager.load_extension(extension)
jupyterlab_tfcoach.load_for_panel(shell)  # %tfcoach, as the server loads the monitor
line_magics = sorted(shell.magics_manager.magics["line"])
with shell.builtin_trap:  # the builtins the prefilter sees
    shadowed = [name for name in line_magics if is_shadowed(name, shell)]

def verdict(cell):
    transformed = shell.transform_cell(cell)
    try:
        ast.parse(transformed)
    except SyntaxError:
        return "syntax"
    return "ipython" if "get_ipython()" in transformed else "python"

verdicts = []
for notebook in json.loads(sys.stdin.read()):
    shell.reset(new_session=False)
    found = []
    for cell in notebook:
        found.append(verdict(cell))
        if found[-1] == "python":
            shell.run_cell(cell, store_history=False, silent=True)
    verdicts.append(found)
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"line_magics": line_magics, "shadowed": shadowed, "verdicts": verdicts}, out)
"""

# Notebooks (cells run in order). None of their Python cells uses IPython machinery.
NOTEBOOKS: list[list[str]] = [
    # Automagic one-liners as learners type them.
    ["pip install --quiet tensorflow-datasets keras-tuner"],
    ["ls ./data/"],
    ["cd ~/data"],
    ["time f()"],
    ["time y = f(x)"],
    ["timeit -n 3 sum(range(10))"],
    ["matplotlib inline"],
    ["load_ext autoreload"],
    ["rm -rf out/"],
    ["mkdir -p checkpoints/run1"],
    ["cat data/labels.txt"],
    ["pwd"],
    ["who"],
    ["env TF_CPP_MIN_LOG_LEVEL=2"],
    ["store -r"],  # the storemagic extension every kernel loads
    ["clear"],  # ipykernel's own
    ["tfcoach"],  # the monitor's, loaded by the server
    ["ls -la  # what is there"],
    ["ls données/"],
    ["\n\n  ls -la\n"],  # leading blank lines and indentation go first
    ["\x0cls -la"],  # a form feed is a line break to IPython: a blank line
    ["ls -la\r\n"],
    # Valid Python that IPython still runs as the magic: the name is not bound.
    ["ls"],
    ["time(3)"],
    ["cd(path)"],
    ["ls[0]"],
    ["ls: int = 3"],
    ["ls += 1"],
    ["ls; x = 1"],
    # Python look-alikes.
    ["time = 1"],
    ["ls = []"],
    ['cd = "x"; print(cd)'],
    ["pip.install()"],
    ["time.sleep(0)"],
    ["ls == 1"],
    ["ls, total = 1, 2"],
    ["x = 1; ls"],
    ["print(ls)"],
    ["lambda: ls"],
    ["ls\x0c"],  # two lines to IPython: no automagic, and `ls` parses
    # A name bound by a cell run before shadows the magic.
    ["import time", "time(3)"],
    ["import time", "time f()"],
    ["from time import time", "time f()"],
    ["ls = []", "ls"],
    ["ls = []", "del ls", "ls"],
    ["def cd(path):\n    return path", "cd ~/data"],
    ["from os import path as pwd", "pwd"],
    ["import time as clock", "time(3)"],
    ["import pip", "pip list"],
    ["for ls in range(2):\n    pass", "ls"],
    ["class env:\n    pass", "env"],
    ["[history := 3 for _ in 'a']", "history"],
    ["letters = [ls for ls in 'ab']", "ls"],  # a comprehension's target is its own
    ["def f():\n    ls = 1\n    return ls", "ls"],  # so is a function's
    ["ls: int", "ls"],  # a bare annotation binds nothing (and is itself a magic)
    ["match 1:\n    case who:\n        pass", "who"],
    # Automagic is for one-line cells only.
    ["pip install x\nimport numpy"],
    ["# dependencies\npip install x"],
    ["pip install x\n\n"],
    ["ls\n   "],
    ["import math\nls -la"],  # `ls - la`: Python
    ["import math\nls ./data"],
    ["time f()\n"],
    ["time 1 \\\n + 2"],
    # Escapes and magic assignments (static transformations), beside them.
    ["%time y = sum([1])"],
    ["out = %time sum([1])"],
    ["out = %timeit -o sum([1])"],
    ["files = !ls"],
    ["!ls -la"],
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("ipython")
    out = folder / "reference.json"
    env = {
        **os.environ,
        "IPYTHONDIR": str(folder / "ipythondir"),
        "PYTHONPATH": str(REPO_ROOT),
        "TFCOACH_PANEL": "1",
    }
    completed = subprocess.run(
        [sys.executable, "-c", REFERENCE, str(out)],
        input=json.dumps(NOTEBOOKS),
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(out.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def our_verdicts(cells: list[str]) -> list[str]:
    """What the analysis makes of each cell: a syntax error, IPython syntax it set aside
    (its text is not the cell's), or Python it reads as written."""
    result = check_cells(cells)
    joined = join_cells(cells)
    analysed = joined.source.split("\n")
    failing = {problem.cell for problem in result.syntax_errors}
    verdicts = []
    for index, cell in enumerate(cells):
        first = joined.cell_first_line[index] - 1
        read = analysed[first : first + joined.cell_line_count[index]]
        if index in failing:
            verdicts.append("syntax")
        else:
            verdicts.append("python" if read == split_lines(cell) else "ipython")
    return verdicts


def test_the_line_magics_are_those_of_a_real_kernel_shell(reference: dict[str, object]) -> None:
    if os.name != "posix":
        pytest.skip("IPython's default aliases (ls, rm, mkdir, ...) are those of posix")
    assert sorted(LINE_MAGICS) == reference["line_magics"]
    # No magic's name is a builtin or a keyword: only the cells' own bindings shadow one.
    assert reference["shadowed"] == []


def test_cells_are_read_as_ipython_runs_them(reference: dict[str, object]) -> None:
    expected: list[list[str]] = reference["verdicts"]  # type: ignore[assignment]
    wrong = [
        (cells, ours, theirs)
        for cells, theirs in zip(NOTEBOOKS, expected, strict=True)
        if (ours := our_verdicts(cells)) != theirs
    ]
    assert wrong == [], "(cells, ours, IPython's)"


def test_findings_inside_magic_lines_keep_their_columns() -> None:
    cells = [
        "import tensorflow as tf\nsteps = tf.constant(3)\nrate = tf.constant(0.5)\n"
        "w = tf.Variable(1.0)\nv = tf.Variable(2.0)",
        "pip install --quiet keras-tuner",
        "time w = w - 0.1",  # automagic: the statement %time runs
        "total = %time steps * rate",  # the expression %time runs
        "half = %time rate * 2.0",  # `half` is what %time returns: the value
        "mixed = steps * half",
        "v = %time v - 0.1",
    ]
    result = check_cells(cells)
    assert result.syntax_errors == ()
    found = [(f.code, f.cell, f.line, f.column, f.end_column) for f in result.findings]
    assert found == [
        ("TFC001", 2, 1, 6, 17),
        ("TFC009", 3, 1, 15, 27),
        ("TFC009", 5, 1, 9, 21),
        ("TFC001", 6, 1, 1, 18),  # `v` holds the tensor %time returns
    ]
    timed, total, _, rebound = result.findings
    assert cells[2][timed.column - 1 : timed.end_column - 1] == "w = w - 0.1"
    assert cells[3][total.column - 1 : total.end_column - 1] == "steps * rate"
    # Fixes edit the Python IPython runs, the magic stays.
    assert timed.fix is not None and total.fix is not None
    [edit] = timed.fix.edits
    assert (edit.line, edit.column, edit.end_column) == (1, 6, 17)
    assert cells[2][: edit.column - 1] + edit.new_text == "time w.assign(w - 0.1)"
    [edit] = total.fix.edits
    applied = cells[3][: edit.column - 1] + edit.new_text + cells[3][edit.end_column - 1 :]
    assert applied == "total = %time tf.cast(steps, tf.float32) * rate"
    # Replacing `v = %time v - 0.1` would drop the %time: no fix rather than that one.
    assert rebound.fix is None


def test_a_magic_name_bound_in_an_earlier_cell_is_python_again() -> None:
    cells = [
        "import tensorflow as tf\nw = tf.Variable(1.0)\nv = tf.Variable(2.0)",
        "time w = w - 0.1",  # %time
        "import time",
        # `time` is bound now: the kernel raises the syntax error, the cells after it are
        # still checked.
        "time v = v - 0.1",
        "v = v - 0.1",
    ]
    result = check_cells(cells)
    [error] = result.syntax_errors
    assert (error.cell, error.line, error.column) == (3, 1, 6)
    found = [(f.code, f.cell, f.line, f.column) for f in result.findings]
    assert found == [("TFC001", 1, 1, 6), ("TFC001", 4, 1, 1)]
