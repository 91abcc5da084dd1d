"""A probability loss given raw scores in a cell's own code, whether or not training moved.

``variables/probability_losses.py`` names this cause when a custom loop trained nothing.
More often the loop does train, only worse: ``cce(y, preds["category"])`` with a
``SparseCategoricalCrossentropy()`` left at ``from_logits=False`` and a ``category`` head
with no activation clips the scores into ``[1e-7, 1 - 1e-7]``: the loss values are
meaningless and every score the clip cuts gets no gradient. Nothing raises.

After a completed cell that holds ``crossentropy`` or a name bound to a Keras
cross-entropy object (a substring and a few dict reads otherwise): each call of such a loss
in the cell's code outside ``def``/``class`` (top level and loops), found by
``probability_losses._probability_loss`` (objects stored with ``from_logits`` False, the
classes written inline, the ``keras.losses`` functions), whose prediction argument is a
name or a name's constant key (``preds["category"]``): the value that name holds after the
cell, read with ``probability_losses._value_evidence`` (a float tensor whose values leave
[0, 1], or whose rows do not sum to 1 for a categorical loss; at most a million values).
A name that holds probabilities says nothing. The fix is the loss made with
``from_logits=True``, written from the learner's own construction when the cell has it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.variables.probability_losses import (
    _LOSS_CLASSES,
    SECTION,
    _loss_object_class,
    _probability_loss,
    _value_evidence,
)

MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _calls(tree: ast.Module) -> list[ast.Call]:
    """The cell's calls outside functions and classes (their names are locals)."""
    found: list[ast.Call] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, ast.Call) and len(node.args) >= 2:
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in tree.body:
        visit(statement)
    return found


def _held(node: ast.AST, namespace: Mapping[str, Any]) -> Any | None:
    """What ``preds`` or ``preds["category"]`` holds now (a dict's own item only)."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
    ):
        container = namespace.get(node.value.id)
        if type(container) is dict:
            return container.get(node.slice.value)
    return None


def _may_hold_loss(source: str, namespace: Mapping[str, Any]) -> bool:
    if "rossentropy" in source:
        return True
    # The namespace's distinct classes first (a C-level pass): most cells' namespaces hold
    # no loss object at all, and then no name is read.
    if not any(kind.__name__ in _LOSS_CLASSES for kind in set(map(type, list(namespace.values())))):
        return False
    return any(
        name in source and _loss_object_class(value) is not None
        for name, value in list(namespace.items())
        if type(name) is str and not name.startswith("_") and type(value).__name__ in _LOSS_CLASSES
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or not _may_hold_loss(source, namespace):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    told: set[str] = set()
    for call in _calls(tree):
        loss = _probability_loss(call, namespace, source)
        if loss is None:
            continue
        written, loss_object, activation, fix = loss
        prediction = call.args[1]
        shown = ast.get_source_segment(source, prediction) or ast.unparse(prediction)
        if shown in told:
            continue
        value = _held(prediction, namespace)
        if value is None:
            continue
        evidence = _value_evidence(value, activation == "tf.nn.softmax")
        if evidence is None:
            continue
        told.add(shown)
        call_text = " ".join((ast.get_source_segment(source, call) or "").split())
        expects = (
            f"`{written}` expects probabilities (from_logits=False)"
            if loss_object
            else f"`{written}` without from_logits=True expects probabilities"
        )
        text = (
            f"`{call_text}` (line {call.lineno} of this cell): {expects}, but `{shown}` "
            f"holds raw scores: {evidence}. The loss clips them into [1e-7, 1 - 1e-7], so "
            "its values are not the cross-entropy of these predictions and every score "
            "the clip cuts gets no gradient; nothing raises. Tell the loss it gets raw "
            f"scores: `{fix}`; or apply `{activation}` to `{shown}` before the loss."
        )
        found.append(reports.note(text, SECTION))
        if len(found) >= MAX_NOTES:
            break
    return found
