"""A loss term computed from the trained weights before the tape opens.

``penalty = lam * tf.reduce_sum(tf.square(model.layers[0].kernel))`` written on the line
before ``with tf.GradientTape() as tape:`` and added to the loss inside it
(``loss = mse + penalty``): the tape records only what runs inside its block, so the
penalty enters the loss as a constant and ``tape.gradient(loss, model.trainable_variables)``
gets nothing from it. The other terms still have gradients, so no gradient is None and
nothing raises: the regulariser (a weight decay, an L1 or L2 penalty, a KL term of the
weights) never acts, the model trains exactly as without it, while the printed loss
includes it.

Told from the cell's source after a completed cell holding ``GradientTape``, in each scope
(the cell's top level, each function): for a block ``with ...GradientTape() as T:`` and a
``T.gradient(L, S)`` in the scope, ``L`` assigned inside the block from an expression that
reads a name ``P`` which the block does not assign and which the scope assigned before the
block from the weights ``S`` differentiates, beside a term the tape records (a name the
block assigns, a call of the model, a source itself; a loss with none has a None gradient,
which ``variables/tape_gradients.py`` tells): a name ``S`` reads (``params``, ``w``), or an
attribute chain of a model whose ``trainable_variables`` ``S`` is (``model.layers[0].kernel``;
the model may be an attribute itself: ``self.body.trainable_weights``),
never a call of that model (a target computed from the model's output before the tape is
meant as a constant: ``symptoms/target_gradients.py``). ``P`` must be one number: at the
top level the tensor it holds after the cell has shape ``()`` (a copy of the weights kept as
an anchor, ``w_start = tf.identity(w)``, has their shape and stays silent); in a function,
its value is a reduction (``reduce_sum``, ``norm``, ``add_n``, ``l2_loss``, ...). The fix
moves the assignment into the block, before the loss.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    function_scopes,
    is_tape_gradient,
    parsed_source,
    scope_nodes,
    source_segment,
    tape_names,
)

SECTION = "gradient-tape"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 32
_MAX_CANDIDATES = 8
_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights", "weights"})
_MODEL_OUTPUT_METHODS = frozenset({"predict", "predict_on_batch", "call", "__call__"})
_REDUCTIONS = frozenset(
    {
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "norm",
        "global_norm",
        "add_n",
        "l2_loss",
        "sum",
        "mean",
    }
)


def _assigned_names(statement: ast.AST) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        targets = [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _gradient_calls(nodes: list[ast.AST], tape: str) -> list[tuple[str, ast.expr]]:
    """(loss name, sources expression) of each ``tape.gradient(loss, sources)``."""
    found: list[tuple[str, ast.expr]] = []
    for node in nodes:
        if (
            is_tape_gradient(node, tape)
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
        ):
            found.append((node.args[0].id, node.args[1]))
    return found


def _weight_owners(sources: ast.expr) -> tuple[set[str], set[str]]:
    """(models whose variable list the sources are, as dotted paths: ``net``,
    ``self.student``; names of the sources themselves: ``params``, ``w``)."""
    models: set[str] = set()
    inside_models: set[int] = set()
    for node in ast.walk(sources):
        if isinstance(node, ast.Attribute) and node.attr in _VARIABLE_LISTS:
            path = dotted_name(node.value)
            if path is not None:
                models.add(path)
                inside_models.update(id(n) for n in ast.walk(node))
    names = {
        node.id
        for node in ast.walk(sources)
        if isinstance(node, ast.Name) and id(node) not in inside_models and node.id != "self"
    }
    return models, names


def _reads_weights(value: ast.expr, models: set[str], variables: set[str]) -> str | None:
    """The model or variable ``value`` reads the weights through (a source name, or an
    attribute of a model's path: ``net.layers[0].kernel``), or None when it reads none or
    calls the model (its output is data, not weights)."""
    found: str | None = None
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            called = dotted_name(node.func)
            method = called.rsplit(".", 1)[-1] if called is not None else ""
            if called is not None and any(
                called == model
                or (called.startswith(model + ".") and method in _MODEL_OUTPUT_METHODS)
                for model in models
            ):
                return None
        elif isinstance(node, ast.Attribute):
            path = dotted_name(node)
            if path is not None:
                owner = next((m for m in models if path.startswith(m + ".")), None)
                found = found or owner
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in variables:
                found = found or node.id
    return found


def _tensor_number(name: str, namespace: Mapping[str, Any]) -> bool:
    """Whether ``name`` holds a tensor of shape ``()`` after the cell."""
    held = namespace.get(name)
    described = describe(name, held) if held is not None else None
    return described is not None and described.kind == "tensor" and described.shape == ()


def _reduction(value: ast.expr) -> bool:
    return (isinstance(value, ast.Call) and call_name(value) in _REDUCTIONS) or any(
        isinstance(node, ast.Call) and call_name(node) in _REDUCTIONS
        for node in ast.iter_child_nodes(value)
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "GradientTape" not in source:
        return []
    for term, top_level, text in _candidates(source):
        # At the top level the value is read: one number, not a copy of the weights.
        if not top_level or _tensor_number(term, namespace):
            return [reports.note(text, SECTION)]
    return []


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _candidates(source: str) -> tuple[tuple[str, bool, str], ...]:
    """(term, whether it is at the cell's top level, the note's text) of each term the
    source alone shows; a cell run again costs one lookup."""
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[tuple[str, bool, str]] = []
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        for block in nodes:
            if not isinstance(block, ast.With):
                continue
            tape = next(iter(tape_names(block)), None)
            if tape is not None:
                found.extend(_block_candidates(block, tape, nodes, scope, source))
    return tuple(found[:_MAX_CANDIDATES])


def _block_candidates(
    block: ast.With,
    tape: str,
    nodes: list[ast.AST],
    scope: ast.AST,
    source: str,
) -> list[tuple[str, bool, str]]:
    found: list[tuple[str, bool, str]] = []
    top_level = isinstance(scope, ast.Module)
    inside = [n for statement in block.body for n in ast.walk(statement)]
    assigned_inside = set().union(*(_assigned_names(n) for n in inside)) if inside else set()
    for loss, sources in _gradient_calls(nodes, tape):
        models, variables = _weight_owners(sources)
        loss_assignment = next(
            (
                n
                for n in reversed(inside)
                if isinstance(n, ast.Assign) and loss in _assigned_names(n)
            ),
            None,
        )
        if loss_assignment is None:
            continue
        read = [
            n.id
            for n in ast.walk(loss_assignment.value)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ]
        model_roots = {m.split(".", 1)[0] for m in models}
        recorded = {n for n in read if n in assigned_inside or n in model_roots or n in variables}
        if not recorded:
            # No term of the loss is recorded: its gradient is None, which the
            # tape.gradient hook tells (variables/tape_gradients.py).
            continue
        for term in dict.fromkeys(read):
            if term in recorded:
                continue
            before = [
                n
                for n in nodes
                if isinstance(n, ast.Assign)
                and n.lineno < block.lineno
                and term in _assigned_names(n)
            ]
            if not before:
                continue
            assignment = before[-1]
            owner = _reads_weights(assignment.value, models, variables)
            if owner is None or (not top_level and not _reduction(assignment.value)):
                continue
            line = source_segment(source, assignment)
            opening = source_segment(source, block)
            if line is None or opening is None or "\n" in line:
                continue
            opening = opening.split("\n", 1)[0].strip()
            whose = f"`{owner}`'s weights" if owner in models else f"`{owner}`"
            where = ""
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                where = f", in `{scope.name}`"
            sources_text = source_segment(source, sources) or "..."
            text = (
                f"`{line}` (line {assignment.lineno} of this cell{where}) computes `{term}` "
                f"from {whose} before `{opening}` (line {block.lineno}) opens: the tape "
                f"records only what runs inside its block, so in `{loss}` the term `{term}` "
                f"is a constant and `{tape}.gradient({loss}, {sources_text})` gets nothing "
                f"from it. The weights train exactly as without `{term}`, while the loss "
                "printed includes it; nothing raises. Compute it inside the tape: move "
                f"`{line}` into the `with` block, before `{loss}` is computed."
            )
            found.append((term, top_level, text))
    return found
