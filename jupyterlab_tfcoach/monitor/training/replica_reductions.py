"""Per-replica MEANS added with ``ReduceOp.SUM`` (issue #25).

``strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)`` adds the replicas'
values. That is right for values each replica already divided by the GLOBAL batch
(``tf.nn.compute_average_loss``), or for sums; for a per-replica MEAN (``tf.reduce_mean`` of
the replica's own examples) the sum of the means is the replica count times the mean. The
figure is silently doubled with two replicas.

Told after a completed cell whose source has ``<r> = <s>.run(<f>, ...)`` then
``<s>.reduce(<...>.SUM, <r>, ...)`` (``ReduceOp.SUM`` written), when ``<f>`` is a function
of the cell (or of the notebook: its source) whose every ``return`` is a ``reduce_mean``
call, ``<s>`` is the notebook's one strategy and it has more than one replica, and the
cell never divides by ``num_replicas_in_sync``. The fix is ``ReduceOp.MEAN``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import function_tree
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.training.replica_loss_scaling import strategy_replicas

SECTION = "devices-placement"
MAX_CELL_CHARS = 50_000
_MEANS = frozenset({"reduce_mean"})


def _returns_means(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    if isinstance(function, ast.Lambda):
        returned = [function.body]
    else:
        returned = [
            node.value
            for node in ast.walk(function)
            if isinstance(node, ast.Return) and node.value is not None
        ]
    return bool(returned) and all(
        isinstance(value, ast.Call) and call_name(value) in _MEANS for value in returned
    )


def _function(
    node: ast.AST, tree: ast.Module, namespace: Mapping[str, Any]
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    if isinstance(node, ast.Lambda):
        return node
    if not isinstance(node, ast.Name):
        return None
    defined = [
        found
        for found in ast.walk(tree)
        if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) and found.name == node.id
    ]
    if len(defined) == 1:
        return defined[0]
    if defined:
        return None
    return function_tree(namespace.get(node.id))


def _enclosing_function(tree: ast.Module, node: ast.AST) -> str | None:
    """The outermost function of the cell whose body holds ``node`` (the one the cell
    calls: a replica function nested in it is handed to ``run``)."""
    for function in tree.body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            inner is node for inner in ast.walk(function)
        ):
            return function.name
    return None


def _results_of(tree: ast.Module, function: str) -> list[str]:
    """Names the cell's top-level statements bind from a call of ``function``."""
    names: list[str] = []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            continue
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == function
            for node in ast.walk(statement.value)
        ):
            names.append(statement.targets[0].id)
    return names[:3]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (
        not source
        or len(source) > MAX_CELL_CHARS
        or "ReduceOp.SUM" not in source
        or ".run(" not in source
        or "num_replicas_in_sync" in source
    ):
        return []
    strategy = strategy_replicas(namespace)
    if strategy is None or strategy[1] < 2:
        return []
    name, replicas = strategy
    tree = parsed_source(source)
    if tree is None:
        return []
    runs: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "run"
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id == name
            and node.value.args
        ):
            runs[node.targets[0].id] = node.value.args[0]
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "reduce"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "SUM"
            and ast.unparse(node.args[0]).endswith("ReduceOp.SUM")
            and isinstance(node.args[1], ast.Name)
            and node.args[1].id in runs
        ):
            continue
        function_node = runs[node.args[1].id]
        function = _function(function_node, tree, namespace)
        if function is None or not _returns_means(function):
            continue
        written = ast.unparse(node)
        fixed = written.replace("ReduceOp.SUM", "ReduceOp.MEAN", 1)
        owner = _enclosing_function(tree, node)
        where = f" in `{owner}`" if owner else ""
        results = _results_of(tree, owner) if owner else []
        result = f", and so is {' and '.join(f'`{name}`' for name in results)}" if results else ""
        text = (
            f"Per-replica means added: `{written}` (line {node.lineno}{where}) adds the "
            f"{replicas} replicas' values, and `{ast.unparse(function_node)}` returns a "
            f"`reduce_mean` over each replica's own examples, so the result is {replicas} "
            f"times the mean{result}. Average the means instead: `{fixed}` (or divide each "
            "replica's sum by the global batch, `tf.nn.compute_average_loss`, and keep SUM)."
        )
        return [reports.note(text, SECTION)]
    return []
