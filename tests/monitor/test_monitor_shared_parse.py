"""After a completed cell, the checks that read its source share one parse of it
(``monitor/syntax.py``, ``parsed_source``): the broadcast scan, the reshape check, the hand
metrics' cell reading, the custom-loop structure and the rebinding statements each parsed
the same source again before. A cell with IPython magics is parsed as the checks read it
(magic lines blanked), and still once for those that blank them alike."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

import pytest

from jupyterlab_tfcoach.monitor.symptoms.broadcast import cell_expressions
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import parse_cell
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import CellLoops
from jupyterlab_tfcoach.monitor.symptoms.reshape_transpose import reshape_statements
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.variables.rebind_statements import cell_rebinds

CELL = """w = tf.Variable(tf.zeros((8, 1)))
flipped = tf.reshape(batch, (8, 16))
cost = tf.reduce_mean(tf.square(guess - truth))
for epoch in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((batch @ w - truth) ** 2)
    w = w - 0.1 * tape.gradient(loss, w)
hits = tf.reduce_mean(tf.cast(tf.argmax(scores, axis=-1) == labels, tf.float32))
"""


def parses_of(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts ``ast.parse`` calls by source from now on."""
    parsed_source.cache_clear()
    counts: Counter[str] = Counter()
    real_parse = ast.parse

    def counting_parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        counts[source] += 1
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    return counts


def read_by_every_check(cell: str) -> list[Any]:
    return [
        cell_expressions(cell),
        reshape_statements(cell),
        parse_cell(cell),
        CellLoops().parse(cell),
        cell_rebinds(cell),
    ]


def test_a_cell_is_parsed_once_for_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = parses_of(monkeypatch)
    found = read_by_every_check(CELL)
    assert counts == Counter({CELL: 1})
    # Each check still found what it reads in the cell.
    expressions, reshapes, code, loops, rebinds = found
    assert [e.text for e in expressions] == ["guess - truth"]
    assert [r.target for r in reshapes] == ["flipped"]
    assert code is not None and loops is not None and len(loops.loops) == 1
    assert [r.target for r in rebinds.rebinds] == ["w"]
    # The same cell again: no parse at all.
    read_by_every_check(CELL)
    assert counts == Counter({CELL: 1})


def test_a_cell_with_magics_is_parsed_as_each_check_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = parses_of(monkeypatch)
    cell = "%matplotlib inline\n" + CELL
    blanked = "\n" + CELL
    expressions, reshapes, code, loops, rebinds = read_by_every_check(cell)
    # As before: the checks that read the cell as written find no Python in it, those
    # that blank its magic lines read the rest, from one parse of that text.
    assert (expressions, reshapes, code) == ([], [], None)
    assert loops is not None and [r.target for r in rebinds.rebinds] == ["w"]
    assert counts == Counter({cell: 1, blanked: 1})


def learner_cells() -> list[str]:
    """Every code cell of the studied learner notebooks: code nobody wrote for this test."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "benchmarks" / "learner_notebooks"
    cells = []
    # The studied sets only: a held-out set is read by nothing but its benchmark.
    for notebook in sorted(root.glob("dev*/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                cells.append("".join(cell["source"]))
    return cells


def test_a_statement_read_from_the_kept_tree_gives_the_nodes_a_walk_gives() -> None:
    from jupyterlab_tfcoach.monitor.syntax import child_nodes, subtree_nodes

    compared = 0
    for cell in learner_cells():
        tree = parsed_source(cell)
        if tree is None:
            continue
        # Before the tree's table is made the reading is a walk; after, a table read.
        first = tree.body[0] if tree.body else tree
        assert subtree_nodes(first) == list(ast.walk(first))
        child_nodes(tree)
        for node in ast.walk(tree):
            assert subtree_nodes(node) == list(ast.walk(node))
            compared += 1
    assert compared > 10_000
    # A node of a tree that is not kept (parsed apart) is walked as before.
    apart = ast.parse("loss = tf.reduce_mean(a - b)")
    assert subtree_nodes(apart) == list(ast.walk(apart))
