"""A ``LearningRateScheduler`` schedule written in optimizer steps, called with epochs.

Keras calls the schedule once per epoch, ``schedule(epoch, lr)``, with the epoch index. A
schedule written for steps (``def warmup(step): if step < WARMUP_STEPS: ...`` with a warm-up
of a few hundred steps) then only ever sees 0, 1, ..., epochs - 1: its comparison with the
step threshold comes out the same at every call and the other branch (the decay after the
warm-up, the drop after a milestone) never runs. Nothing raises; the rates are in the
History, under ``learning_rate``.

Told in the cell that fits with it: after a completed cell holding
``LearningRateScheduler`` and ``.fit(`` (substring tests otherwise), each
``LearningRateScheduler(f)`` written in the cell, ``f`` a name holding a Python function,
whose source (read from ``linecache``, never by running it) compares its first parameter
with a number (a literal or a global name holding an int or a float); the parameter's or
the threshold's name reads as steps (``step``, ``iter``, ``batch``), and over the epoch
indices the model's History lists (``history.epoch``) the comparison never changes its
value. The fix calls the function with the step each epoch starts at (``epoch * steps``,
steps per epoch from the History's ``params``), or a per-step schedule object.
"""

from __future__ import annotations

import ast
import functools
import inspect
import operator
import textwrap
import types
from collections.abc import Callable, Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, stored
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "callback-mode"
MAX_CELL_CHARS = 50_000
MAX_FUNCTION_CHARS = 20_000
MAX_EPOCHS = 100_000
MAX_REMEMBERED = 64
_CACHED_SOURCES = 32
_STEP_WORDS = ("step", "iter", "batch")
_OPERATORS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_MIRRORED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}


def _reads_as_steps(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _STEP_WORDS)


def _number(node: ast.expr, globals_: Mapping[str, Any]) -> tuple[str, float] | None:
    """(how the source writes it, its value) for a numeric literal or a global number."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return str(node.value), float(node.value)
    if isinstance(node, ast.Name):
        value = globals_.get(node.id)
        if type(value) in (int, float):
            return node.id, float(value)
    return None


def _function_tree(function: types.FunctionType) -> ast.FunctionDef | None:
    code = function.__code__
    # Read once per definition: its code's place (a cell's file, a line) names it.
    return _tree_at(code.co_filename, code.co_firstlineno, code.co_name, function)


_TREES: dict[tuple[str, int, str], ast.FunctionDef | None] = {}


def _tree_at(filename: str, line: int, name: str, function: Any) -> ast.FunctionDef | None:
    key = (filename, line, name)
    if key in _TREES:
        return _TREES[key]
    tree = _parsed_function(function)
    if len(_TREES) >= MAX_REMEMBERED:
        _TREES.pop(next(iter(_TREES)))
    _TREES[key] = tree
    return tree


def _parsed_function(function: types.FunctionType) -> ast.FunctionDef | None:
    try:
        text = inspect.getsource(function)
    except Exception:
        return None
    if len(text) > MAX_FUNCTION_CHARS:
        return None
    try:
        tree = ast.parse(textwrap.dedent(text))
    except Exception:
        return None
    body = tree.body[0] if tree.body else None
    return body if isinstance(body, ast.FunctionDef) else None


def _one_branch_comparison(
    definition: ast.FunctionDef,
    parameter: str,
    globals_: Mapping[str, Any],
    epochs: list[int],
) -> tuple[str, str, float, bool] | None:
    """(the comparison as written, the threshold's spelling, its value, its constant
    truth value) for a comparison of ``parameter`` with a number that every epoch index
    answers alike."""
    for node in ast.walk(definition):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        op_type = type(node.ops[0])
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Name) and left.id == parameter:
            threshold, compare_type = right, op_type
        elif isinstance(right, ast.Name) and right.id == parameter:
            threshold, compare_type = left, _MIRRORED.get(op_type, op_type)
        else:
            continue
        compare = _OPERATORS.get(compare_type)
        number = _number(threshold, globals_)
        if compare is None or number is None:
            continue
        spelled, value = number
        if not (_reads_as_steps(parameter) or _reads_as_steps(spelled)):
            continue
        answers = {compare(epoch, value) for epoch in epochs}
        if len(answers) == 1:
            return ast.unparse(node), spelled, value, answers.pop()
    return None


def _history_of(model: Any) -> tuple[list[int], list[float], int | None] | None:
    """(epoch indices, learning rates, steps per epoch) of the model's last fit."""
    history = stored(model, "history")
    attributes = instance_dict(history) if history is not None else None
    if not attributes:
        return None
    epochs = attributes.get("epoch")
    logged = attributes.get("history")
    params = attributes.get("params")
    rates = logged.get("learning_rate") if type(logged) is dict else None
    if type(epochs) is not list or not epochs or len(epochs) > MAX_EPOCHS:
        return None
    if type(rates) is not list or len(rates) != len(epochs):
        return None
    try:
        epoch_numbers = [int(epoch) for epoch in epochs]
        rate_values = [float(rate) for rate in rates]
    except Exception:
        return None
    steps = params.get("steps") if type(params) is dict else None
    return epoch_numbers, rate_values, steps if type(steps) is int and steps > 0 else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (
        not source
        or len(source) > MAX_CELL_CHARS
        or "LearningRateScheduler" not in source
        or ".fit(" not in source
    ):
        return []
    fit_names, schedulers = _cell_calls(source)
    fitted = [namespace.get(name) for name in fit_names]
    histories = [found for found in map(_history_of, fitted) if found is not None]
    if not histories:
        return []
    epochs, rates, steps = histories[0]
    for line, shown in schedulers:
        function = namespace.get(shown)
        if type(function) is not types.FunctionType:
            continue
        code = function.__code__
        parameters = list(code.co_varnames[: code.co_argcount])
        if not parameters:
            continue
        definition = _function_tree(function)
        if definition is None:
            continue
        found = _one_branch_comparison(definition, parameters[0], function.__globals__, epochs)
        if found is None:
            continue
        comparison, threshold, value, answer = found
        figures = ", ".join(f"{rate:.4g}" for rate in rates[:5])
        more = ", ..." if len(rates) > 5 else ""
        ran = f"{len(epochs)} epochs" + (f" of {steps} steps" if steps else "")
        arguments = "epoch * " + (str(steps) if steps else "steps_per_epoch")
        if len(parameters) >= 2:
            arguments += ", lr"
        wrapped = f"LearningRateScheduler(lambda epoch, lr: {shown}({arguments}))"
        text = (
            f"`{shown}`, given to `LearningRateScheduler` (line {line} of this cell), "
            f"is written in optimizer steps: it compares `{parameters[0]}` with "
            f"`{threshold}` ({value:g}). Keras calls the schedule once per epoch with the "
            f"epoch index, here {epochs[0]} to {epochs[-1]} (fit ran {ran}), so "
            f"`{comparison}` is {answer} at every call and the other branch never runs. "
            f"The rates fit used were {figures}{more} "
            "(`history.history['learning_rate']`); nothing raises. Give it the step each "
            f"epoch starts at: `{wrapped}`, or pass a per-step "
            "`keras.optimizers.schedules.LearningRateSchedule` to the optimizer as its "
            "`learning_rate`, which Keras calls at every step."
        )
        return [reports.note(text, SECTION)]
    return []


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _cell_calls(source: str) -> tuple[tuple[str, ...], tuple[tuple[int, str], ...]]:
    """(names whose ``fit`` the cell calls, (line, function name) of each
    ``LearningRateScheduler(<name>)``): a cell run again costs one lookup."""
    tree = parsed_source(source)
    if tree is None:
        return (), ()
    fit_names: list[str] = []
    schedulers: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if (
            name == "fit"
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
        ):
            fit_names.append(node.func.value.id)
        elif name == "LearningRateScheduler":
            schedule = node.args[0] if node.args else None
            schedule = schedule or next(
                (k.value for k in node.keywords if k.arg == "schedule"), None
            )
            if isinstance(schedule, ast.Name):
                schedulers.append((node.lineno, schedule.id))
    return tuple(fit_names), tuple(schedulers)
