"""A target computed from the network being trained, inside the tape, without
``tf.stop_gradient``.

A bootstrapped TD target (``r + gamma * q_net(s2)``), a self-distillation teacher
(``softmax(net(x_aug))``) or an EMA-style target is meant as a constant the prediction
moves towards. Computed inside ``tf.GradientTape`` from the same model whose variables
the tape differentiates, it is recorded like any other value: the gradient also flows
through the target, the optimizer moves the target towards the prediction as much as the
prediction towards the target (a residual-gradient update, not the TD or distillation
step meant). Nothing raises; learning is slower or collapses.

Told from the cell's source (after a completed cell holding ``GradientTape``; nothing is
run), in each scope (the cell's top level, each function): inside ``with
...GradientTape() as tape``, an assignment ``name = ...`` whose name has a word
``target``, ``teacher`` or ``bootstrap`` (the learner calls it a target) and whose value
calls ``M(...)`` (by name, not under ``stop_gradient``), where the scope's
``tape.gradient(..., M.trainable_variables)`` (or ``trainable_weights``) differentiates
that same ``M``; silent when the name is used under ``stop_gradient`` later, when the
target comes from another model (a target network) or from data. The fix is the line
with its value under ``tf.stop_gradient``.
"""

from __future__ import annotations

import ast
import functools
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_scopes,
    is_tape_gradient,
    parsed_source,
    scope_nodes,
    tape_names,
)

SECTION = "gradient-tape"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 1
_CACHED_SOURCES = 64
_TARGET_WORDS = frozenset({"target", "targets", "teacher", "bootstrap", "bootstrapped"})
_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})


def _words(name: str) -> set[str]:
    return {part for part in re.split(r"[_\d]+", name.lower()) if part}


def _differentiated(nodes: list[ast.AST], tape: str) -> set[str]:
    """The models ``M`` of ``tape.gradient(..., M.trainable_variables)`` in the scope."""
    models: set[str] = set()
    for node in nodes:
        if not (is_tape_gradient(node, tape) and len(node.args) >= 2):
            continue
        sources = node.args[1]
        if (
            isinstance(sources, ast.Attribute)
            and sources.attr in _VARIABLE_LISTS
            and isinstance(sources.value, ast.Name)
        ):
            models.add(sources.value.id)
    return models


def _model_call(value: ast.AST, models: set[str]) -> str | None:
    """The model of ``models`` the value calls, outside any ``stop_gradient``."""
    pending: list[ast.AST] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call):
            if call_name(node) == "stop_gradient":
                continue
            if isinstance(node.func, ast.Name) and node.func.id in models:
                return node.func.id
        if isinstance(node, ast.Lambda):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return None


def _stopped_later(nodes: list[ast.AST], name: str) -> bool:
    for node in nodes:
        if isinstance(node, ast.Call) and call_name(node) == "stop_gradient":
            for argument in node.args:
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(argument)):
                    return True
    return False


def _tensorflow_name(namespace: dict[str, Any]) -> str | None:
    for name in ("tf", "tensorflow"):
        value = namespace.get(name)
        if isinstance(value, types.ModuleType) and value.__name__ == "tensorflow":
            return name
    return None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "GradientTape" not in source:
        return []
    tf = _tensorflow_name(namespace)
    if tf is None:
        return []
    # A cell run again costs one lookup: what is told depends on its source alone.
    return [reports.note(text, SECTION) for text in _texts(source, tf)]


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str, tf: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[str] = []
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        for block in nodes:
            if not isinstance(block, ast.With):
                continue
            tape = next(iter(tape_names(block)), None)
            if tape is None:
                continue
            models = _differentiated(nodes, tape)
            if not models:
                continue
            for statement in (n for s in block.body for n in ast.walk(s)):
                if len(found) >= MAX_NOTES:
                    return tuple(found)
                note = _note(statement, models, nodes, scope, source, tf, tape)
                if note is not None:
                    found.append(note)
    return tuple(found)


def _note(
    statement: ast.AST,
    models: set[str],
    nodes: list[ast.AST],
    scope: ast.AST,
    source: str,
    tf: str,
    tape: str,
) -> str | None:
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return None
    name = statement.targets[0].id
    if not _words(name) & _TARGET_WORDS:
        return None
    model = _model_call(statement.value, models)
    if model is None or _stopped_later(nodes, name):
        return None
    line = ast.get_source_segment(source, statement)
    value = ast.get_source_segment(source, statement.value)
    if line is None or value is None or "\n" in line:
        return None
    fixed = f"{name} = {tf}.stop_gradient({value})"
    where = ""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        where = f", in `{scope.name}`"
    text = (
        f"`{line}` (line {statement.lineno} of this cell{where}) computes `{name}` from "
        f"`{model}` inside the `{tape}` block, and `{tape}.gradient` differentiates "
        f"`{model}`'s variables: the gradient flows through the target too, so each step "
        f"also moves `{name}` towards the prediction instead of treating it as the fixed "
        "value to reach (a different, slower and often unstable update). Nothing raises. "
        f"A target is a constant for the step: stop its gradient. Fix: `{fixed}`."
    )
    return text
