"""One Keras metric object read for several candidates in a loop, never reset there.

A Keras metric keeps running totals until ``reset_state()`` empties them. A loop over
candidates (``for name, pred in candidates.items():``) that updates a metric and reads its
``result()`` at each pass without resetting it prints, for the second candidate, the
average over both: the comparison it was written for is wrong, and nothing raises.

Told after a completed cell holding ``update_state`` and ``for`` (substring tests
otherwise), from its source: each top-level ``for`` over a dict's ``.items()``/``.values()``
or a literal list or tuple of two or more, whose body calls ``m.update_state(...)`` and
``m.result()`` of one name holding a Keras metric, and resets nothing there
(``reset_state``, ``reset_states``, ``m`` bound anew). A loop over batches (a dataset, an
array, a ``range``) is a running average on purpose and is not read; an epoch loop is
``symptoms/metric_resets.py``'s. The fix puts ``m.reset_state()`` first in the loop's body.

The same metric object compiled into two models is not told: Keras 3.15 resets a compiled
model's metrics at each ``evaluate`` and each epoch of ``fit``, and sequential runs of two
such models gave each its own figures when measured.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "epoch-figures"
MAX_CELL_CHARS = 50_000
MAX_MODELS = 32
_RESETS = frozenset({"reset_state", "reset_states"})
_PLAIN_CONFIG = frozenset({"name", "dtype"})


def _is_metric(value: Any) -> bool:
    return any(
        cls.__name__ == "Metric" and getattr(cls, "__module__", "").startswith("keras")
        for cls in type(value).__mro__
    )


def _candidate_loop(loop: ast.For, namespace: Mapping[str, Any]) -> bool:
    iterable = loop.iter
    if isinstance(iterable, (ast.List, ast.Tuple)):
        return len(iterable.elts) >= 2
    return (
        isinstance(iterable, ast.Call)
        and call_name(iterable) in ("items", "values")
        and isinstance(iterable.func, ast.Attribute)
        and isinstance(iterable.func.value, ast.Name)
        and type(namespace.get(iterable.func.value.id)) is dict
    )


def _method_calls(loop: ast.For) -> dict[str, set[str]]:
    """``{receiver: {methods}}`` of the calls ``m.method(...)`` in the loop's body."""
    found: dict[str, set[str]] = {}
    for statement in loop.body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
            ):
                found.setdefault(node.func.value.id, set()).add(node.func.attr)
    return found


def _rebound(loop: ast.For, name: str) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for statement in loop.body
        for node in ast.walk(statement)
    )


def _loop_notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    tree = parsed_source(source)
    if tree is None:
        return []
    for loop in tree.body:
        if not isinstance(loop, ast.For) or not _candidate_loop(loop, namespace):
            continue
        for name, methods in _method_calls(loop).items():
            if not {"update_state", "result"} <= methods or methods & _RESETS:
                continue
            if not _is_metric(namespace.get(name)) or _rebound(loop, name):
                continue
            header = " ".join((ast.get_source_segment(source, loop.iter) or "").split())
            target = ast.get_source_segment(source, loop.target) or ast.unparse(loop.target)
            text = (
                f"`{name}` is updated and read at each pass of `for {target} in {header}:` "
                f"(line {loop.lineno} of this cell), and never reset there: a Keras metric "
                "keeps adding to its running totals until `reset_state()`, so each pass's "
                "`result()` after the first averages this candidate with every one before "
                "it, not its own figure; nothing raises. Start each pass afresh: put "
                f"`{name}.reset_state()` first in the loop's body."
            )
            return [reports.note(text, SECTION)]
    return []


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if "update_state" not in source or "for " not in source:
        return []
    return _loop_notes(source, namespace)
