"""A custom Keras metric whose ``update_state`` overwrites its state (issue #25).

A metric accumulates over batches until ``reset_state()``: ``update_state`` must add to
its state variables (``self.tp.assign_add(...)``). ``self.tp.assign(batch_count)``
replaces the total with the last batch's value, so ``result()`` over an epoch reports
one batch, and nothing raises.

Read from the cell's text once it completed (a cell without ``update_state`` costs one
substring test): a class whose base is named ``Metric`` (``keras.metrics.Metric``), its
``update_state`` calling ``self.<state>.assign(<value>)`` where ``<value>`` never reads
``self.<state>`` (a running maximum, ``assign(tf.maximum(self.best, x))``, reads it and is
right). Fix: the call with ``assign_add``. Reads syntax only; imports nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source, self_attribute_name

SECTION = "epoch-figures"


def _is_metric_class(node: ast.ClassDef) -> bool:
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name == "Metric":
            return True
    return False


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for this cell's first metric whose update_state overwrites its state."""
    del namespace  # read from the class's text
    if "update_state" not in source or ".assign(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef) or not _is_metric_class(cls):
            continue
        for method in cls.body:
            if not (isinstance(method, ast.FunctionDef) and method.name == "update_state"):
                continue
            for call in ast.walk(method):
                if not (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "assign"
                    and len(call.args) == 1
                ):
                    continue
                state = self_attribute_name(call.func.value)
                if state is None:
                    continue
                if any(self_attribute_name(n) == state for n in ast.walk(call.args[0])):
                    continue  # a running max/min reads its own state: right
                return [_note(cls.name, state, call, source)]
    return []


def _note(cls: str, state: str, call: ast.Call, source: str) -> Note:
    written = ast.get_source_segment(source, call) or f"self.{state}.assign(...)"
    value = ast.get_source_segment(source, call.args[0]) or "..."
    text = (
        f"`{cls}.update_state` sets its state with `{written}` (line {call.lineno} of this "
        f"cell): `assign` replaces `self.{state}` with this batch's value, so `result()` "
        f"shows the last batch only, not the running total a metric keeps over an epoch "
        f"(until `reset_state()`). Nothing raises. Add to the state instead: "
        f"`self.{state}.assign_add({value})`."
    )
    return reports.note(text, SECTION)
