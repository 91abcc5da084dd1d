"""Where a vector lost its axis (``errors/axis_origins.py``), read from cell sources kept in
``linecache`` and a namespace of NumPy values: each statement that makes an ``(N,)`` vector
is named by the part that did, and its rewrite, run with NumPy, makes ``(N, 1)``.
Statements whose vector comes from elsewhere are not named."""

from __future__ import annotations

import linecache
from typing import Any

import numpy as np
import pytest

from jupyterlab_tfcoach.monitor.errors.axis_origins import axis_origin, statement_of

ROWS = 12


def _namespace() -> dict[str, Any]:
    draws = np.random.default_rng(4)
    return {
        "np": np,
        "draws": draws,
        "grid": draws.normal(size=(ROWS, 3)),
        "column": draws.normal(size=(ROWS, 1)),
        "scale": 2.5,
        "count": ROWS,
    }


def _cell(name: str, source: str, number: int) -> str:
    filename = f"<cell-{name}-{number}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def _where(filename: str, line: int) -> str:
    return f"{filename} line {line}"


@pytest.mark.parametrize(
    ("statement", "part", "fixed"),
    [
        ("made = grid[:, 1] * scale", "grid[:, 1]", "made = grid[:, 1:2] * scale"),
        ("made = np.exp(-grid[..., -1])", "grid[..., -1]", "made = np.exp(-grid[..., -1:])"),
        (
            "made = np.mean(grid, axis=1).astype(np.float32)",
            "np.mean(grid, axis=1)",
            "made = np.mean(grid, axis=1, keepdims=True).astype(np.float32)",
        ),
        ("made = grid.max(-1)", "grid.max(-1)", "made = grid.max(-1, keepdims=True)"),
        ("made = column.flatten()", "column.flatten()", "made = column.reshape(-1, 1)"),
        ("made = np.ravel(column)", "np.ravel(column)", "made = np.reshape(column, (-1, 1))"),
        ("made = column.reshape(-1)", "column.reshape(-1)", "made = column.reshape(-1, 1)"),
        ("made = np.squeeze(column) + 1.0", "np.squeeze(column)", "made = column + 1.0"),
        (
            "made = np.linspace(0.0, 1.0, count)",
            "np.linspace(0.0, 1.0, count)",
            "made = np.linspace(0.0, 1.0, count)[:, None]",
        ),
        (
            "made = draws.uniform(-1, 1, count).astype('float32')",
            "draws.uniform(-1, 1, count)",
            "made = draws.uniform(-1, 1, (count, 1)).astype('float32')",
        ),
        ("made = np.zeros((count,))", "np.zeros((count,))", "made = np.zeros((count, 1))"),
    ],
)
def test_each_axis_dropping_statement_is_named_and_fixed(
    statement: str, part: str, fixed: str
) -> None:
    namespace = _namespace()
    source = f"other = 1\nfor step in range(2):\n    {statement}\n    use(made)\n"
    filename = _cell("drop", source, 7)
    made = statement_of("made", filename, 4, {filename: 7}, _where)
    assert made is not None and made.where == f"{filename} line 3"
    origin = axis_origin(made, "made", namespace)
    assert origin is not None
    assert origin.statement == statement and origin.part == part
    assert origin.fixed == fixed
    before, after = dict(namespace), dict(namespace)
    exec(statement, before)
    exec(fixed, after)
    assert before["made"].shape == (ROWS,)
    assert after["made"].shape == (ROWS, 1)


def test_an_earlier_cell_is_read_when_this_one_does_not_assign_the_name() -> None:
    namespace = _namespace()
    first = _cell("first", "made = grid[:, 0]\nmade = grid[:, 2]\n", 3)
    running = _cell("running", "loss = (column - made) ** 2\n", 4)
    made = statement_of("made", running, 1, {first: 3, running: 4}, _where)
    assert made is not None and made.where == f"{first} line 2"
    origin = axis_origin(made, "made", namespace)
    assert origin is not None and origin.fixed == "made = grid[:, 2:3]"


@pytest.mark.parametrize(
    "statement",
    [
        "made = grid[:, 0] + grid[:, 1]",  # two vectors: no one part to name
        "made = np.mean(grid, axis=1, keepdims=True)[:, 0]",  # indexed on purpose
        "made = helper(grid[:, 0])",  # a call the reading cannot see through
        "made = np.array([1.0, 2.0])",  # a list: not told where an axis went
        "made = grid[0, :]",  # a row, not a column
    ],
)
def test_vectors_from_elsewhere_are_not_named(statement: str) -> None:
    namespace = _namespace()
    filename = _cell("else", f"{statement}\n", 5)
    made = statement_of("made", filename, 2, {filename: 5}, _where)
    assert made is not None
    origin = axis_origin(made, "made", namespace)
    if statement.startswith("made = np.mean"):
        # The index is the dropping part; the keepdims reduction is not named instead.
        assert origin is not None and origin.part.endswith("[:, 0]")
        return
    assert origin is None


def test_assignments_inside_functions_and_after_the_line_are_not_read() -> None:
    source = (
        "def build():\n    made = grid[:, 0]\n    return made\n"
        "loss = made - column\nmade = grid[:, 1]\n"
    )
    filename = _cell("scope", source, 9)
    assert statement_of("made", filename, 4, {filename: 9}, _where) is None
