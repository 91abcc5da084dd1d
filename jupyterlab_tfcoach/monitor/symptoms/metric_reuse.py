"""One Keras metric object measuring two things in a row, with no reset between them.

``m.update_state(y, model_pred)``, ``m.result()``, then ``m.update_state(y, baseline)``,
``m.result()``: a Keras metric accumulates (a running total and count, or confusion
counts) until ``reset_state()``; the second figure averages both measurements, and is
printed as the second one's. Nothing raises. (A metric read once per epoch of a loop
and never reset is ``metric_resets.py``: one update written once, run many times. Here
the cell writes two separate updates.)

After a completed cell whose text holds ``update_state`` (one substring test otherwise),
the cell's code outside ``def``/``class`` is read in source order for, per plain name, its
``update_state(...)`` calls (also ``m(y, p)`` with two arguments), its ``result()`` reads
and its resets (``reset_state``/``reset_states``/``reset``, or the name bound anew): an
update written after a ``result()`` that itself follows an earlier update, with no reset
between that read and the new update, and a ``result()`` after it. The name must hold a
Keras ``Metric`` after the cell (its class's module is Keras's). The fix puts
``m.reset_state()`` on its own line before the second update.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "epoch-figures"
MAX_NOTES = 2
_RESETS = frozenset({"reset_state", "reset_states", "reset"})


def _is_keras_metric(value: Any) -> bool:
    try:
        return any(
            k.__name__ == "Metric" and str(k.__module__).startswith("keras")
            for k in type(value).__mro__
        )
    except Exception:
        return False


def _events(tree: ast.Module) -> dict[str, list[tuple[int, int, str, ast.AST]]]:
    """Per name: (line, column, "update"/"result"/"reset", node), outside scopes."""
    found: dict[str, list[tuple[int, int, str, ast.AST]]] = {}
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        pending.extend(ast.iter_child_nodes(node))
        event = None
        name = None
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                name = func.value.id
                if func.attr == "update_state":
                    event = "update"
                elif func.attr == "result":
                    event = "result"
                elif func.attr in _RESETS:
                    event = "reset"
            elif isinstance(func, ast.Name) and len(node.args) >= 2:
                name, event = func.id, "update"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            name, event = node.id, "reset"
        if event is not None and name is not None:
            found.setdefault(name, []).append((node.lineno, node.col_offset, event, node))
    for events in found.values():
        events.sort(key=lambda e: (e[0], e[1]))
    return found


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "update_state" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for name, events in _events(tree).items():
        if not any(e[2] == "update" for e in events) or not _is_keras_metric(namespace.get(name)):
            continue
        first_update: ast.AST | None = None
        read_after: ast.AST | None = None
        second: ast.AST | None = None
        for _line, _col, event, node in events:
            if event == "reset":
                first_update, read_after, second = None, None, None
            elif event == "update":
                if read_after is not None and second is None:
                    second = node
                elif first_update is None:
                    first_update = node
            elif event == "result":
                if second is not None:
                    found.append(_note(name, first_update, read_after, second, node, source))
                    break
                if first_update is not None:
                    read_after = node
        if len(found) >= MAX_NOTES:
            break
    return found


def _segment(source: str, node: ast.AST | None) -> str:
    text = (ast.get_source_segment(source, node) or "") if node is not None else ""
    return text if "\n" not in text and len(text) <= 100 else ""


def _note(
    name: str,
    first: ast.AST | None,
    read: ast.AST | None,
    second: ast.AST,
    last_read: ast.AST,
    source: str,
) -> Note:
    def at(node: ast.AST | None) -> str:
        written = _segment(source, node)
        line = getattr(node, "lineno", 0)
        return f"`{written}` (line {line})" if written else f"line {line}"

    text = (
        f"{at(second)} adds to the totals `{name}` already holds from {at(first)}, "
        f"which {at(read)} read: a Keras metric accumulates every update_state until it is "
        f"reset, so {at(last_read)} is the average over both measurements, not the second "
        f"one's alone. Nothing raises; the second figure is simply wrong. Put "
        f"`{name}.reset_state()` on its own line just before line {second.lineno} (or "
        f"measure the second thing with a new metric object)."
    )
    return reports.note(text, SECTION)
