"""A per-replica loss averaged over the per-replica batch under a strategy of several
replicas (issue #25).

Under ``tf.distribute``, each replica computes its loss on its own part of the global batch
and the strategy SUMS the replicas' gradients. ``tf.nn.compute_average_loss(per_example,
global_batch_size=B)`` divides the replica's summed loss by ``B``: that must be the GLOBAL
batch (the per-replica batch times the replicas), so the summed gradients are those of the
global mean. Given the per-replica batch, the loss and every gradient are the replica count
times too large (a learning rate silently multiplied); nothing raises.

Told after a completed cell whose source calls ``compute_average_loss`` with
``global_batch_size=N`` (a name or a number), when the namespace holds exactly one
``tf.distribute`` strategy with more than one replica (its ``num_replicas_in_sync``), ``N``'s
value ``n`` is an int, and a dataset of the notebook was batched with ``.batch(G)`` where
``G``'s value is ``n`` times the replica count and no dataset was batched by ``n`` (the
notebook's cells, ``In``, newest 50). The fix is ``global_batch_size=G``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "devices-placement"
MAX_CELL_CHARS = 50_000
HISTORY_CELLS = 50
MAX_NAMESPACE = 5000
_STRATEGY_CLASSES = frozenset({"Strategy", "StrategyBase", "StrategyV1"})


def strategy_replicas(namespace: Mapping[str, Any]) -> tuple[str, int] | None:
    """The notebook's one ``tf.distribute`` strategy and its replica count (its classes
    read by name from the MRO: TensorFlow is not imported)."""
    found: list[tuple[str, int]] = []
    for count, (name, value) in enumerate(list(namespace.items())):
        if count > MAX_NAMESPACE:
            break
        if type(name) is not str or name.startswith("_"):
            continue
        names = {
            cls.__name__
            for cls in class_mro(value)
            if str(getattr(cls, "__module__", "")).startswith("tensorflow")
        }
        if not names & _STRATEGY_CLASSES:
            continue
        replicas = library_attribute(value, "num_replicas_in_sync")
        if type(replicas) is int:
            found.append((name, replicas))
    return found[0] if len(found) == 1 else None


def _int_of(node: ast.AST, namespace: Mapping[str, Any]) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if type(value) is int else None
    return None


def _batch_sizes(namespace: Mapping[str, Any]) -> list[tuple[str, int]]:
    """What the notebook's ``.batch(...)`` calls were given: the text and its value."""
    history = namespace.get("In")
    if type(history) is not list:
        return []
    found: list[tuple[str, int]] = []
    for cell in history[-HISTORY_CELLS:]:
        if type(cell) is not str or ".batch(" not in cell or len(cell) > MAX_CELL_CHARS:
            continue
        tree = parsed_source(cell)
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "batch"
                and node.args
            ):
                value = _int_of(node.args[0], namespace)
                text = ast.unparse(node.args[0])
                if value is not None:
                    found.append((text, value))
    return found


def _enclosing_function(tree: ast.Module, node: ast.AST) -> str | None:
    """The innermost function of the cell whose body holds ``node``."""
    found = None
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            inner is node for inner in ast.walk(function)
        ):
            if found is None or function.lineno > found.lineno:
                found = function
    return found.name if found is not None else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "compute_average_loss" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and call_name(node) == "compute_average_loss"
    ]
    given = [
        (call, keyword.value)
        for call in calls
        for keyword in call.keywords
        if keyword.arg == "global_batch_size"
    ]
    if not given:
        return []
    strategy = strategy_replicas(namespace)
    if strategy is None or strategy[1] < 2:
        return []
    name, replicas = strategy
    batches = _batch_sizes(namespace)
    for call, node in given:
        value = _int_of(node, namespace)
        if value is None or any(size == value for _, size in batches):
            continue
        global_batches = sorted({text for text, size in batches if size == value * replicas})
        if len(global_batches) != 1:
            continue
        written = ast.unparse(node)
        right = global_batches[0]
        owner = _enclosing_function(tree, call)
        where = f" in `{owner}`" if owner else ""
        text = (
            f"A loss scaled by the replica count: `{ast.unparse(call)}` (line {call.lineno}"
            f"{where}) "
            f"divides each replica's summed loss by `{written}` = {value}, the batch ONE "
            f"replica sees, but `{name}` has {replicas} replicas and the dataset was batched "
            f"by `{right}` = {value * replicas}. The strategy adds the replicas' gradients, "
            f"so `global_batch_size` must be the global batch: as written, the loss and every "
            f"gradient are {replicas} times too large (the learning rate silently "
            f"multiplied by {replicas}). Write `global_batch_size={right}`."
        )
        return [reports.note(text, SECTION)]
    return []
