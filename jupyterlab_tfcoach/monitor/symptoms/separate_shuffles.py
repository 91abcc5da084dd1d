"""Features and labels shuffled by two separate calls: rows no longer match their labels.

``np.random.shuffle(x)`` then ``np.random.shuffle(y)`` (or ``random.shuffle``, or a NumPy
``Generator``'s ``shuffle``) draw two different permutations: each row keeps a random
label, the model learns noise, and nothing raises. After a cell that completed, its
statements (not inside ``def``/``lambda``; a cell without ``shuffle(`` in its text costs
one substring test) are read for two or more such calls on plain names that, after the
cell, hold NumPy arrays (or lists) of the same length above 1, with no ``seed`` call
between them (re-seeding before each shuffle repeats the permutation: silent). The note
names both calls and the length; fix: one permutation for both,
``idx = np.random.permutation(len(x)); x, y = x[idx], y[idx]`` in the learner's names
(the arrays must be rebuilt first: the shuffles already separated them).

Reads shapes and lengths only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import numpy_name, outside_scopes, parsed_source

SECTION = "tf-data-order"
MAX_SHUFFLES = 16


def _length(value: Any) -> int | None:
    cls = type(value)
    if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
        shape = value.shape
        return int(shape[0]) if shape else None
    if cls is list:
        return len(value)
    return None


def _is_shuffle(call: ast.Call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "shuffle" and len(call.args) == 1


def _is_seed(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("seed", "set_random_seed", "default_rng")


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for this cell's separate shuffles of same-length arrays, if any."""
    if "shuffle(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    # Runs of shuffle calls, a seed call ending a run.
    runs: list[list[ast.Call]] = [[]]
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call):
            continue
        if _is_seed(node):
            runs.append([])
        elif _is_shuffle(node) and isinstance(node.args[0], ast.Name):
            runs[-1].append(node)
    for run in runs:
        by_name: dict[str, ast.Call] = {}
        for call in run[:MAX_SHUFFLES]:
            by_name.setdefault(call.args[0].id, call)  # type: ignore[attr-defined]
        lengths = {name: _length(namespace.get(name)) for name in by_name}
        for length in {n for n in lengths.values() if n is not None and n > 1}:
            names = [name for name in by_name if lengths[name] == length]
            if len(names) >= 2:
                return [_note(names, [by_name[n] for n in names], length, source, namespace)]
    shuffled = {call.args[0].id for run in runs for call in run}  # type: ignore[attr-defined]
    for run in runs:
        for call in run[:MAX_SHUFFLES]:
            found = _paired_later(call, tree, shuffled, namespace)
            if found is not None:
                return [_lone_note(call, found[0], found[1], source, namespace)]
    return []


# Calls that pair inputs with labels row by row: fit(x, y), from_tensor_slices((x, y)),
# zip(x, y), train_test_split(x, y).
_PAIRING = ("fit", "evaluate", "from_tensor_slices", "zip", "train_test_split")


def _paired_later(
    shuffle: ast.Call, tree: ast.Module, shuffled: set[str], namespace: Mapping[str, Any]
) -> tuple[str, ast.Call] | None:
    """(the partner's name, the pairing call) when a call after ``shuffle`` pairs the
    shuffled array with another one of the same length that the cell did not shuffle."""
    name = shuffle.args[0].id  # type: ignore[attr-defined]
    length = _length(namespace.get(name))
    if length is None or length < 2:
        return None
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call) or node.lineno <= shuffle.lineno:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called not in _PAIRING:
            continue
        arguments: list[ast.expr] = []
        for argument in node.args[:2]:
            arguments.extend(argument.elts if isinstance(argument, ast.Tuple) else [argument])
        names = [a.id for a in arguments if isinstance(a, ast.Name)]
        if name not in names:
            continue
        for partner in names:
            if partner != name and partner not in shuffled:
                if _length(namespace.get(partner)) == length:
                    return partner, node
    return None


def _lone_note(
    shuffle: ast.Call, partner: str, pairing: ast.Call, source: str, namespace: Mapping[str, Any]
) -> Note:
    name = shuffle.args[0].id  # type: ignore[attr-defined]
    written = ast.get_source_segment(source, shuffle) or f"shuffle({name})"
    paired = ast.get_source_segment(source, pairing) or ""
    paired = paired if "\n" not in paired and len(paired) <= 120 else f"line {pairing.lineno}"
    text = (
        f"`{written}` (line {shuffle.lineno} of this cell) reorders the rows of `{name}` "
        f"but not those of `{partner}`, which `{paired}` pairs with it row by row: each "
        f"row of `{name}` now goes with another row's label. The model learns noise "
        f"(accuracy near chance), and nothing raises."
    )
    numpy = numpy_name(namespace)
    if numpy is not None:
        fix = (
            f"idx = {numpy}.random.permutation(len({name})); "
            f"{name}, {partner} = {name}[idx], {partner}[idx]"
        )
        text += f" Shuffle both with one permutation, in place of that line: `{fix}`."
    return reports.note(text, SECTION)


def _note(
    names: list[str],
    calls: list[ast.Call],
    length: int,
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    written = [ast.get_source_segment(source, call) or "" for call in calls]
    listed = " and ".join(f"`{w}` (line {c.lineno})" for w, c in zip(written, calls, strict=True))
    both = ", ".join(f"`{n}`" for n in names)
    text = (
        f"{listed} shuffle {both} separately: each call draws its own random order, so "
        f"after them row i of `{names[0]}` no longer goes with row i of `{names[1]}` "
        f"(all {length} rows long). The model then learns from examples paired with "
        f"random labels, and nothing raises."
    )
    numpy = numpy_name(namespace)
    if numpy is not None:
        indexed = ", ".join(f"{n}[idx]" for n in names)
        fix = f"idx = {numpy}.random.permutation(len({names[0]})); {', '.join(names)} = {indexed}"
        text += (
            f" Rebuild the arrays (the shuffles already separated them), then shuffle them "
            f"with one permutation: `{fix}`."
        )
    else:
        text += " Rebuild the arrays, then shuffle them with one permutation of the row indices."
    return reports.note(text, SECTION)
