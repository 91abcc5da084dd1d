"""A Keras metric read once per epoch of a custom loop and never reset in that loop.

``train_acc.update_state(y, pred)`` (or ``train_acc(y, pred)``) adds to the metric's
running ``total`` and ``count``; ``result()`` is their ratio. Nothing empties them but
``reset_state()``. A custom loop that reads ``train_acc.result()`` at every epoch
without resetting it there prints, for epoch 3, the average over epochs 1 to 3: the
curve is smoothed and lags, and no error says so.

Found after a cell from its source and the values its names hold:

- the source (``ast``, ``loop_structure``): a loop that holds another loop (the epoch
  loop and its batch loop) and calls ``<m>.result()`` in its body, for a name ``m`` that
  the loop updates (``m.update_state(...)``, ``m(...)``, directly or in a function the
  loop calls: one of the cell's, or a plain function or ``tf.function`` of the notebook,
  read from its cell's source, or one such a function hands to a strategy's ``run``), and
  that nothing in the loop resets (``reset_state``,
  ``reset_states``, ``reset``, the name bound anew, a function called there that resets
  it, ``model.reset_metrics()``, or a reset on a name we cannot follow: then silence);
- the values: ``m`` is a Keras ``Metric`` with a ``count`` variable (the mean metrics:
  ``Mean``, the accuracies, ``MeanSquaredError``...) above 0 after the cell, and the
  loop ran at least twice (``for epoch in range(...)``: the loop name's last value).

The note names the metric, the line of its ``result()``, the loop and the count the
metric holds; the fix puts ``m.reset_state()`` at the start of the loop's body. A metric
reset in the loop, or read only after it (a figure over the whole run), is not told.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import (
    Loop,
    ParsedCell,
    call_name,
    function_tree,
    iterations_ran,
    library_class_names,
    method_of,
)

SECTION = "epoch-figures"
MAX_NOTES = 2
MAX_HELPERS = 8
_RESETS = frozenset({"reset_state", "reset_states", "reset"})
_UPDATES = frozenset({"update_state"})


def _metric_count(metric: Any) -> float | None:
    """The metric's ``count`` (a Keras variable Keras stores on the metric), as a number."""
    attributes = instance_dict(metric)
    variable = attributes.get("count") if attributes is not None else None
    read = library_attribute(variable, "numpy") if variable is not None else None
    if read is None:
        return None
    try:
        value = read()
        return float(value) if getattr(value, "shape", None) == () else None
    except Exception:
        return None


class _Effects:
    """What a piece of code does to metrics: updates, resets, and whether it resets
    something we cannot name (a loop over metrics, ``model.reset_metrics()``)."""

    def __init__(self) -> None:
        self.updated: set[str] = set()
        self.reset: set[str] = set()
        self.reset_calls: set[str] = set()  # names whose reset method is called
        self.unknown_reset = False

    def read(self, nodes: list[ast.AST]) -> None:
        for node in nodes:
            if isinstance(node, ast.Call):
                name = call_name(node)
                if name in _RESETS or name == "reset_metrics":
                    receiver = method_of(node, name) if name in _RESETS else None
                    if receiver is None:
                        self.unknown_reset = True
                    else:
                        self.reset.add(receiver)
                        self.reset_calls.add(receiver)
                elif name in _UPDATES and (receiver := method_of(node, "update_state")):
                    self.updated.add(receiver)
                elif isinstance(node.func, ast.Name):
                    self.updated.add(node.func.id)  # ``m(y, pred)`` updates a metric ``m``
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.reset.add(node.id)  # bound anew: a fresh metric


def _replica_functions(nodes: list[ast.AST]) -> list[str]:
    """Functions handed to a distribution strategy's ``run`` (``strategy.run(step,
    args=(batch,))``): the strategy calls them on every replica, as if called here."""
    return [
        node.args[0].id
        for node in nodes
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
        and node.args
        and isinstance(node.args[0], ast.Name)
    ]


def _loop_effects(cell: ParsedCell, loop: Loop, namespace: Mapping[str, Any]) -> _Effects:
    """Updates and resets in the loop and in the functions it calls (one level, and the
    functions those hand to a strategy's ``run``)."""
    effects = _Effects()
    for statement in loop.body:
        effects.read(cell.walk(statement))
    called = [
        node.func.id
        for node in cell.statements_in(loop)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    called += _replica_functions(list(cell.statements_in(loop)))
    helpers = 0
    read: set[str] = set()
    while called:
        name = called.pop(0)
        if name in read:
            continue
        read.add(name)
        tree = cell.functions.get(name)
        if tree is None and name in namespace:
            tree = function_tree(namespace[name])
        if tree is None:
            continue
        helpers += 1
        if helpers > MAX_HELPERS:
            effects.unknown_reset = True  # too much to read: say nothing
            break
        for statement in tree.body:
            # A helper of another cell is parsed anew: walked, not kept.
            nodes = cell.walk(statement) if name in cell.functions else list(ast.walk(statement))
            effects.read(nodes)
            called += _replica_functions(nodes)
    return effects


def _resets_named(cell: ParsedCell, effects: _Effects, namespace: Mapping[str, Any]) -> bool:
    """Whether every reset in the loop is called on a metric bound to a name of the
    notebook: ``for m in metrics: m.reset_state()`` resets metrics we cannot name."""
    loop_names = {
        node.id
        for loop in cell.loops
        if isinstance(loop, ast.For)
        for node in ast.walk(loop.target)
        if isinstance(node, ast.Name)
    }
    return all(
        name not in loop_names and "Metric" in library_class_names(namespace.get(name))
        for name in effects.reset_calls
    )


def notes(cell: ParsedCell, namespace: Mapping[str, Any]) -> list[Note]:
    found: list[Note] = []
    for loop in cell.loops:
        if not cell.inner_loops(loop):
            continue
        reads: dict[str, ast.Call] = {}
        for node in cell.statements_in(loop):
            if isinstance(node, ast.Call) and (metric := method_of(node, "result")):
                reads.setdefault(metric, node)
        if not reads:
            continue
        effects = _loop_effects(cell, loop, namespace)
        if effects.unknown_reset or not _resets_named(cell, effects, namespace):
            continue
        stale: list[tuple[str, ast.Call, float]] = []
        for name, read in reads.items():
            if name in effects.reset or name not in effects.updated:
                continue
            metric = namespace.get(name)
            if "Metric" not in library_class_names(metric):
                continue
            count = _metric_count(metric)
            if count is not None and count > 0:
                stale.append((name, read, count))
        if not stale:
            continue
        ran = iterations_ran(cell, loop, namespace)
        if ran is None or ran < 2:
            continue
        found.append(reports.note(_text(cell, loop, stale, ran), SECTION))
        if len(found) >= MAX_NOTES:
            break
    return found


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _text(cell: ParsedCell, loop: Loop, stale: list[tuple[str, ast.Call, float]], ran: int) -> str:
    header = cell.header(loop)
    first_name, _, first_count = stale[0]
    names = " and ".join(f"`{name}`" for name, _, _ in stale)
    reads = ", ".join(f"`{cell.text(read)}` (line {read.lineno})" for _, read, _ in stale)
    fixes = " and ".join(f"`{name}.reset_state()`" for name, _, _ in stale)
    verb = "is" if len(stale) == 1 else "are"
    return (
        f"A metric never reset between epochs: {reads} {verb} read at every pass of "
        f"`{header}` (line {loop.lineno}), but {names} {verb} never reset in that loop. "
        f"A Keras metric adds every update to a running total until `reset_state()` "
        f"empties it, so each epoch's figure is the average over all epochs so far, not "
        f"that epoch's (after the cell, `{first_name}` has counted "
        f"{_number(first_count)} values over {ran} epochs). Start each epoch afresh: put "
        f"{fixes} at the start of the body of `{header}`."
    )
