"""The binding model asked at a cursor (``analysis/lookup.py``) is the rules' model.

Hover cards ask "what does the name here hold?" with a position only; the rules ask it
where the walk met the name, with the scope and the blocks around it. These tests take
every call and binary operation the walk recorded in real code (the correct-code corpus
of the rules, the course notebooks, the test data) and check that the cursor finds the
same scope and the same block path, and that a name read there holds the same value for
both. A disagreement would show as a hover card saying ``w`` is a variable where the
rules think otherwise (or the reverse).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyterlab_tfcoach.analysis.lookup import NameLookup
from jupyterlab_tfcoach.analysis.parsing import parse_cells, parse_module
from jupyterlab_tfcoach.course import get_course, notebook_for

ROOT = Path(__file__).parents[1]
CORPUS = sorted(
    [
        *(ROOT / "data" / "rules" / "correct_corpus").iterdir(),
        ROOT / "data" / "rules" / "training_loop.py",
        ROOT / "data" / "lsp" / "hover_sample.py",
        ROOT / "data" / "lsp" / "train.py",
        ROOT / "data" / "vscode" / "train.ipynb",
        ROOT / "data" / "cli" / "pitfalls.py",
        ROOT / "data" / "cli" / "notebook.ipynb",
        *(notebook_for(module.id) for module in get_course().modules),
        ROOT / "data" / "course" / "coach-tour.ipynb",
    ]
)


def parsed(path: Path) -> ast.Module:
    if path.suffix == ".ipynb":
        notebook = nbformat.read(path, as_version=4)
        cells = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
        return parse_cells(cells)[1]
    return parse_module(path.read_text(encoding="utf-8"))


def compare_scopes(path: Path) -> tuple[int, list[object]]:
    """How many sites were compared, and those where the cursor finds another scope/path."""
    lookup = NameLookup(parsed(path))
    sites = [*lookup.model.calls, *lookup.model.binops]
    wrong: list[object] = []
    for site in sites:
        pos = (site.node.lineno, site.node.col_offset)  # type: ignore[attr-defined]
        scope, block_path = lookup.scope_at(pos)
        if scope is not site.scope or block_path != site.path:
            wrong.append((pos, ast.unparse(site.node)[:60], scope.name, site.scope.name))
    return len(sites), wrong


def compare_values(path: Path) -> tuple[int, list[object]]:
    """How many method receivers (``w`` of ``w.assign(...)``) were compared, and those
    whose value at the cursor differs from the value the rules infer at that read."""
    lookup = NameLookup(parsed(path))
    rules = NameLookup(parsed(path)).bindings  # another model: no cache is shared
    compared = 0
    wrong: list[object] = []
    # Both walks meet the calls of identical trees in the same order.
    for site, rules_site in zip(lookup.model.calls, rules.model.calls, strict=True):
        func = site.node.func  # type: ignore[attr-defined]
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            continue
        receiver = func.value
        at_cursor = lookup.value_at((receiver.id,), (receiver.lineno, receiver.col_offset))
        if at_cursor is None:
            continue  # bound by nothing in this file (a module, a builtin)
        rules_receiver = rules_site.node.func.value  # type: ignore[attr-defined]
        expected = rules.infer(rules_receiver, rules_site.scope, rules_site.path)
        compared += 1
        if at_cursor.value.kind == expected.kind and at_cursor.value.dtype == expected.dtype:
            continue
        if at_cursor.value.kind == "unknown" and derived_changes_kind(
            rules, rules_receiver, rules_site, expected.kind
        ):
            continue  # the one exception the lookup documents (see its docstring)
        wrong.append((receiver.lineno, receiver.id, at_cursor.value.kind, expected.kind))
    return compared, wrong


def derived_changes_kind(rules: Any, name: ast.Name, site: Any, kind: str) -> bool:
    """Whether ``name`` is also rebound from itself (``w = w - 1``) to another kind."""
    resolution = rules.names.resolve(site.scope, name.id, (name.lineno, name.col_offset), site.path)
    owner = resolution.owner.bindings.get(name.id, []) if resolution is not None else []
    return any(b.self_referential and rules.binding_value(b).kind != kind for b in owner)


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_the_cursor_finds_the_scope_and_blocks_the_walk_recorded(path: Path) -> None:
    assert compare_scopes(path)[1] == []


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_a_name_holds_at_the_cursor_what_it_holds_for_the_rules(path: Path) -> None:
    assert compare_values(path)[1] == []


def test_the_comparisons_cover_real_code() -> None:
    assert len(CORPUS) >= 20 and all(path.is_file() for path in CORPUS)
    assert sum(compare_scopes(path)[0] for path in CORPUS) > 1000
    assert sum(compare_values(path)[0] for path in CORPUS) > 100


def lookup_of(source: str) -> NameLookup:
    return NameLookup(parse_module(source))


def kind_at(source: str, needle: str, occurrence: int = 1) -> str | None:
    """What the name starting at the n-th ``needle`` holds (its kind), or None."""
    lines = source.split("\n")
    seen = 0
    for row, line in enumerate(lines, start=1):
        column = line.find(needle)
        while column >= 0:
            seen += 1
            if seen == occurrence:
                name = needle.split(".")[0].split("(")[0].split(" ")[0]
                parts = tuple(name.split("."))
                utf8 = len(line[:column].encode("utf-8"))
                bound = lookup_of(source).value_at(parts, (row, utf8))
                return bound.value.kind if bound is not None else None
            column = line.find(needle, column + 1)
    raise AssertionError(f"{needle!r} #{occurrence} not in the source")


CELL = """import tensorflow as tf
w = tf.Variable(1.0)
if True:
    t = tf.GradientTape()
    t_copy = t
double = lambda w: w * 2
squares = [w * w for w in range(3)]
"""


@pytest.mark.parametrize(
    ("needle", "occurrence", "kind"),
    [
        ("w = tf", 1, "variable"),  # the target of its own assignment: what it becomes
        ("t = tf", 1, "tape"),
        ("t_copy = t", 1, "tape"),
        ("w * 2", 1, "unknown"),  # the lambda's parameter, not the module's variable
        ("w * w", 1, "unknown"),  # the comprehension's loop variable
    ],
)
def test_scopes_at_the_cursor(needle: str, occurrence: int, kind: str | None) -> None:
    assert kind_at(CELL, needle, occurrence) == kind


def test_positions_outside_the_code_are_the_module_scope() -> None:
    lookup = lookup_of(CELL)
    for pos in [(0, 0), (1, 500), (99, 0), (6, 0)]:
        scope, block_path = lookup.scope_at(pos)
        assert scope is lookup.model.module
        assert block_path == ()


def test_an_expression_that_starts_with_a_comprehension_is_in_the_outer_scope() -> None:
    # ``[...].count(x)`` and ``{...} & {...}`` start where their first comprehension does:
    # that position is the outer expression's, as the rules record it.
    source = "xs = [1, 2]\nn = [x for x in xs].count(1)\nboth = {a for a in xs} & {b for b in xs}\n"
    lookup = lookup_of(source)
    for pos in ((2, 4), (3, 7)):
        scope, path = lookup.scope_at(pos)
        assert scope is lookup.model.module and path == ()
    inside, _ = lookup.scope_at((2, 5))  # the element expression ``x``
    assert inside is not lookup.model.module
