"""A loop whose name is never read while the body reads a global of a similar name.

``for eps in epsilons: curve.append(attack(x, epsilon))`` sweeps ``eps`` but runs every
pass with the global ``epsilon``: each point of the sweep is the same computation, the
curve is flat, and nothing raises. The loop name and the global differ by a few letters
(a prefix, an abbreviation), which is why the slip is easy to miss.

After a completed cell with a ``for`` loop at its top level (not inside a function), read
with ``ast``: told when the loop runs over values, not a ``range(...)`` (a counter of
repeats: ``for it in range(60): step(inputs)`` is meant); its target is one plain name,
not ``_``-prefixed, read nowhere in its body; and the body reads a name of the namespace
that the body does not assign and the loop's iterable does not read (``for epoch in
range(epochs)`` then ``print(epochs)`` is meant), whose name is close to the loop's (one
starts with the other, or the loop's abbreviates it: the initials of its parts, or three
letters or more in order, the first ones equal), and whose value has the loop name's type
after the cell (two numbers or two strings, read by type only). ``for _ in range(n)`` and
``for i in range(3): step()`` stay silent. The fix is the body's first statement
reading the global, with the loop's name in its place.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import outside_scopes, parsed_source

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
_VALUE_TYPES = (int, float, str)


def _abbreviates(short: str, long: str) -> bool:
    """``lr`` of ``learning_rate`` (the initials of its parts), ``eps`` of ``epsilon``
    (three letters or more, in order, the first ones equal)."""
    if not short or short[0] != long[0]:
        return False
    if short == "".join(part[0] for part in long.split("_") if part):
        return True
    if len(short) < 3:
        return False
    rest = iter(long[1:])
    return all(letter in rest for letter in short[1:])


def close_names(loop_name: str, other: str) -> bool:
    if loop_name == other or min(len(loop_name), len(other)) < 2:
        return False
    a, b = loop_name.lower(), other.lower()
    if a == b:
        return False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return long.startswith(short) or _abbreviates(short, long)


def _loops(tree: ast.Module) -> list[ast.For]:
    """``for`` loops of the cell's top level and of its blocks, not inside a function."""
    # The cell's nodes outside def/class/lambda bodies, listed once per tree for all checks.
    found = [node for node in outside_scopes(tree) if isinstance(node, ast.For)]
    return sorted(found, key=lambda loop: loop.lineno)


def _names(nodes: list[ast.stmt], context: type) -> set[str]:
    return {
        n.id
        for statement in nodes
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, context)
    }


def _same_kind(first: Any, second: Any) -> bool:
    kinds = (type(first), type(second))
    if kinds[0] is bool or kinds[1] is bool:
        return False
    if all(kind in (int, float) for kind in kinds):
        return True
    return kinds[0] is kinds[1] and kinds[0] in _VALUE_TYPES


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first loop that reads a similar global in place of its own name."""
    if len(source) > MAX_CELL_CHARS or "for " not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for loop in _loops(tree):
        target = loop.target
        if not isinstance(target, ast.Name) or target.id.startswith("_"):
            continue
        if isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name):
            if loop.iter.func.id == "range":
                continue  # a counter: repeating a step is what it is for
        name = target.id
        body = [*loop.body, *loop.orelse]
        read = _names(body, ast.Load)
        if name in read:
            continue
        assigned = _names(body, ast.Store) | _names(body, ast.Del)
        # ``for epoch in range(epochs): ... print(epochs)``: the bound is meant.
        assigned |= {n.id for n in ast.walk(loop.iter) if isinstance(n, ast.Name)}
        loop_value = namespace.get(name)
        for other in sorted(read - assigned):
            if not close_names(name, other) or other not in namespace:
                continue
            if not _same_kind(loop_value, namespace.get(other)):
                continue
            note = _note(source, loop, name, other, namespace)
            if note is not None:
                return [note]
    return []


def _first_reading(body: list[ast.stmt], name: str) -> ast.stmt | None:
    for statement in body:
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement)):
            if isinstance(statement, ast.For | ast.While | ast.If | ast.With | ast.Try):
                return _first_reading(getattr(statement, "body", []), name)
            return statement
    return None


def _note(
    source: str, loop: ast.For, name: str, other: str, namespace: Mapping[str, Any]
) -> Note | None:
    header = source.splitlines()[loop.lineno - 1].strip() if loop.lineno else ""
    statement = _first_reading(loop.body, other)
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    text = ast.get_source_segment(source, statement)
    if not text or not header.startswith("for "):
        return None
    raw = text.encode("utf-8")
    starts = sorted(
        (
            node.col_offset - statement.col_offset
            for node in ast.walk(statement)
            if isinstance(node, ast.Name) and node.id == other
        ),
        reverse=True,
    )
    for start in starts:
        raw = raw[:start] + name.encode() + raw[start + len(other.encode()) :]
    fixed = raw.decode("utf-8")
    value = namespace.get(other)
    shown = f" ({value:.4g})" if isinstance(value, float) else ""
    message = (
        f"`{header}` (line {loop.lineno} of this cell) never reads `{name}`; its body reads "
        f"`{other}`{shown} instead, a name the loop never changes, so every pass computes "
        "the same thing and the results cannot differ with the values swept. Nothing "
        f"raises. Use the loop's name: `{fixed}` (line {statement.lineno})."
    )
    return reports.note(message, SECTION)
