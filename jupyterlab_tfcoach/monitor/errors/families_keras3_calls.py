"""Calls tf.keras 2 (or TensorFlow 1) had and Keras 3 removed, with the Keras 3 way in the
learner's names (issue #25).

``families_api_names`` tells a missing TensorFlow or Keras name: a rename (``lr`` ->
``learning_rate``) or the closest spelling. Some removed calls have no new name: the same
work is written another way. ``keras.backend.set_value(v, x)`` is the variable's own
``v.assign(x)`` (the optimizer's ``learning_rate`` is a variable in Keras 3);
``keras.backend.get_value(v)`` / ``eval(v)`` is ``v.numpy()``; ``keras.backend.variable``
is ``keras.Variable``; an optimizer's ``minimize(loss_fn, var_list)`` is a step written
with a ``GradientTape`` and ``apply_gradients``; ``set_learning_phase`` is the
``training=`` argument of each call. The table below says, per (owner kind, name), how the
failing call is read and rewritten: the arguments are the learner's own, taken from the
call on the failing line, and a fix is printed only when they can be read (a variable
checked to be one, a loss given as a function of no arguments).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import Finding, tf_alias

_SECTION = "keras-model-api"
_LOOP_SECTION = "training-loop"
_TRAINING_SECTION = "training-argument"
# Module 8's section on float16 compute and loss scaling.
_SCALING_SECTION = "mixed-precision"
_VARIABLE_KINDS = ("variable", "keras_variable")
_VALUE_KINDS = ("variable", "keras_variable", "tensor")
_MAX_LISTED = 400


def _call_of(node: ast.Attribute, line: FailingLine) -> ast.Call | None:
    """The call whose function is the missing attribute, on the failing line."""
    for part in line.frame.header():
        for found in ast.walk(part):
            if isinstance(found, ast.Call) and found.func is node:
                return found
    return None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[position] if len(call.args) > position else None


def _one_line(text: str | None) -> bool:
    return bool(text) and "\n" not in (text or "")


def _call_rewritten(line: FailingLine, call: ast.Call, replacement: str) -> str | None:
    """The failing statement with the call replaced, as inline code (one line only)."""
    statement = line.statement
    fixed = rewrite(line.frame, statement, call, replacement) if statement is not None else None
    if not fixed or "\n" in fixed or statement is None:
        return None
    # The statement takes the failing line's place (a new call, not one run before it).
    if statement.lineno == statement.end_lineno and _in_this_cell(line):
        return f"on line {statement.lineno} {code(fixed)}"
    return code(fixed)


def _in_this_cell(line: FailingLine) -> bool:
    """The failing line is at the top of the running cell (its numbers are the cell's)."""
    return "of this cell" in line.where and "(in `" not in line.where


def _set_value(
    node: ast.Attribute, call: ast.Call | None, line: FailingLine, context: ErrorContext
) -> Finding:
    rule = (
        "Keras 3's `keras.backend` has no `set_value` (a tf.keras 2 function): a variable "
        "sets its own value with `.assign(...)`, and an optimizer's `learning_rate` is such "
        "a variable in Keras 3"
    )
    target = _argument(call, 0, "x") if call is not None else None
    value = _argument(call, 1, "value") if call is not None else None
    if call is None or target is None or value is None:
        return Finding(rule + ".", None, section=_SECTION)
    found, held = value_of(target, line.frame, context)
    target_text, value_text = line.frame.segment(target), line.frame.segment(value)
    if not found or value_kind(held) not in _VARIABLE_KINDS:
        return Finding(rule + ".", None, section=_SECTION)
    if not _one_line(target_text) or not _one_line(value_text):
        return Finding(rule + ".", None, section=_SECTION)
    fix = _call_rewritten(line, call, f"{target_text}.assign({value_text})")
    return Finding(rule + ".", fix, section=_SECTION)


def _get_value(
    node: ast.Attribute, call: ast.Call | None, line: FailingLine, context: ErrorContext
) -> Finding:
    rule = (
        f"Keras 3's `keras.backend` has no `{node.attr}` (a tf.keras 2 function): a variable "
        "or an eager tensor gives its value as a NumPy array with `.numpy()` (`float(...)` "
        "for one number)"
    )
    target = _argument(call, 0, "x") if call is not None else None
    if call is None or target is None or len(call.args) + len(call.keywords) != 1:
        return Finding(rule + ".", None, section=_SECTION)
    found, held = value_of(target, line.frame, context)
    shown = line.frame.segment(target)
    if not found or value_kind(held) not in _VALUE_KINDS or not _one_line(shown):
        return Finding(rule + ".", None, section=_SECTION)
    return Finding(rule + ".", _call_rewritten(line, call, f"{shown}.numpy()"), section=_SECTION)


def _variable(
    node: ast.Attribute, call: ast.Call | None, line: FailingLine, context: ErrorContext
) -> Finding:
    rule = (
        "Keras 3's `keras.backend` has no `variable` (a tf.keras 2 function): a Keras "
        "variable is made with `keras.Variable(...)`"
    )
    keras_name = context.module_alias("keras", "keras")
    written = line.frame.segment(call) if call is not None else None
    callee = line.frame.segment(node)
    if call is None or not _one_line(written) or not callee or keras_name not in context.namespace:
        return Finding(rule + ".", None, section=_SECTION)
    assert written is not None
    replaced = f"{keras_name}.Variable" + written[len(callee) :]
    return Finding(rule + ".", _call_rewritten(line, call, replaced), section=_SECTION)


def _learning_phase(
    node: ast.Attribute, call: ast.Call | None, line: FailingLine, context: ErrorContext
) -> Finding:
    rule = (
        f"Keras 3's `keras.backend` has no `{node.attr}` (a tf.keras 2 global): whether "
        "dropout and batch normalization act as in training is said per call, "
        "`model(x, training=True)` in a training step, `model(x)` (or `training=False`) "
        "to predict; `fit`, `evaluate` and `predict` set it themselves"
    )
    return Finding(rule + ".", None, section=_TRAINING_SECTION)


def _step_value(value: Any) -> bool:
    """What an earlier step left under a name (a tensor, a tape, a list of gradients):
    overwriting it loses nothing."""
    if value_kind(value) in ("tensor", "symbolic"):
        return True
    if type(value) is list and value and len(value) <= _MAX_LISTED:
        return all(value_kind(item) == "tensor" or item is None for item in value)
    return type(value).__name__ == "GradientTape"


def _fresh_name(preferred: tuple[str, ...], line: FailingLine, context: ErrorContext) -> str:
    """The first of ``preferred`` that the cell does not use and the namespace holds no
    value of the learner's under (a previous step's tensor may be overwritten)."""
    tree = line.frame.tree()
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} if tree is not None else set()
    for name in preferred:
        if name in used:
            continue
        if name not in context.namespace or _step_value(context.namespace.get(name)):
            return name
    return preferred[-1] + "_"


def _loss_expression(loss: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """What computes the loss, from ``minimize``'s first argument: a lambda of no
    arguments gives its body; a name holding a function (or a Keras loss-free callable)
    gives its call."""
    if isinstance(loss, ast.Lambda):
        arguments = loss.args
        if arguments.args or arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs:
            return None
        body = line.frame.segment(loss.body)
        return body if _one_line(body) else None
    if isinstance(loss, ast.Name):
        found, held = value_of(loss, line.frame, context)
        if found and type(held).__name__ == "function":
            return f"{loss.id}()"
    return None


def _minimize(
    node: ast.Attribute, call: ast.Call | None, line: FailingLine, context: ErrorContext
) -> Finding:
    owner = line.frame.segment(node.value) or "the optimizer"
    rule = (
        "Keras 3 optimizers have no `minimize` (tf.keras 2 had it): one step is written "
        "with a `GradientTape` that records the loss, then `tape.gradient` of the loss "
        f"with respect to the variables, then `{owner}.apply_gradients` of the pairs"
    )
    loss = _argument(call, 0, "loss") if call is not None else None
    variables = _argument(call, 1, "var_list") if call is not None else None
    if call is None or loss is None or variables is None or not _one_line(owner):
        return Finding(rule + ".", None, section=_LOOP_SECTION)
    computed = _loss_expression(loss, line, context)
    listed = line.frame.segment(variables)
    if computed is None or isinstance(variables, ast.Lambda) or not _one_line(listed):
        return Finding(rule + ".", None, section=_LOOP_SECTION)
    statement = line.statement
    if not isinstance(statement, ast.Expr) or statement.value is not call:
        return Finding(rule + ".", None, section=_LOOP_SECTION)
    tf = tf_alias(context)
    tape = _fresh_name(("tape", "step_tape"), line, context)
    loss_name = _fresh_name(("loss", "loss_value", "step_loss"), line, context)
    gradients = _fresh_name(("grads", "gradients", "step_grads"), line, context)
    recorded = f"with {tf}.GradientTape() as {tape}: {loss_name} = {computed}"
    taken = f"{gradients} = {tape}.gradient({loss_name}, {listed})"
    applied = f"{owner}.apply_gradients(zip({gradients}, {listed}))"
    rule += (
        f". Write in place of line {line.frame.position.line}, at its indentation, the three lines"
    )
    fix = f"{code(recorded)}, then {code(taken)}, then {code(applied)}"
    return Finding(rule + ".", fix, section=_LOOP_SECTION)


# tf.keras 2's LossScaleOptimizer methods -> how Keras 3 writes the same work.
_KERAS2_SCALING = ("get_scaled_loss", "get_unscaled_gradients")


def _scaling_fixed(statement: ast.stmt, call: ast.Call, line: FailingLine) -> str | None:
    """``name = opt.get_scaled_loss(loss)`` -> ``name = opt.scale_loss(loss)``;
    ``name = opt.get_unscaled_gradients(grads)`` -> ``name = grads`` (``apply_gradients``
    unscales). Only a single-name assignment of the call itself is rewritten."""
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.value is call
        and isinstance(call.func, ast.Attribute)
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    owner = line.frame.segment(call.func.value)
    argument = line.frame.segment(call.args[0])
    if not _one_line(owner) or not _one_line(argument):
        return None
    target = statement.targets[0].id  # type: ignore[attr-defined]
    if call.func.attr == "get_scaled_loss":
        return f"{target} = {owner}.scale_loss({argument})"
    return f"{target} = {argument}"


def _statement_of(tree: ast.AST, node: ast.AST) -> ast.stmt | None:
    """The innermost statement holding ``node``."""
    found: ast.stmt | None = None
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt) and not isinstance(
            statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.For)
        ):
            if any(part is node for part in ast.walk(statement)):
                found = statement
    return found


def _loss_scaling(
    node: ast.Attribute, call: ast.Call | None, line: FailingLine, context: ErrorContext
) -> Finding:
    del context  # the rewrite is read from the cell's source alone
    owner = line.frame.segment(node.value) or "opt"
    owner = owner if _one_line(owner) and len(owner) <= 40 else "opt"
    rule = (
        f"{code(owner + '.' + node.attr)} is tf.keras 2's: Keras 3's `LossScaleOptimizer` has "
        "no `get_scaled_loss` and no `get_unscaled_gradients`. Under the tape the loss is "
        f"scaled with {code(owner + '.scale_loss(loss)')}, the tape's gradients of that "
        f"scaled loss go to {code(owner + '.apply_gradients')} as they are, and it divides "
        "them by the scale itself (and skips a step whose gradients overflowed)"
    )
    tree = line.frame.tree()
    if call is None or tree is None:
        return Finding(rule + ".", None, section=_SCALING_SECTION)
    statement = _statement_of(tree, call)
    fixed = _scaling_fixed(statement, call, line) if statement is not None else None
    if fixed is None:
        return Finding(rule + ".", None, section=_SCALING_SECTION)
    # The cell's other tf.keras 2 scaling calls fail next once this one is fixed.
    others: list[str] = []
    for other in sorted(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and n is not call
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in _KERAS2_SCALING
        ),
        key=lambda n: (n.lineno, n.col_offset),
    ):
        other_statement = _statement_of(tree, other)
        other_fixed = (
            _scaling_fixed(other_statement, other, line) if other_statement is not None else None
        )
        if other_fixed is None or other_statement is None:
            return Finding(rule + ".", None, section=_SCALING_SECTION)
        others.append(f"on line {other_statement.lineno} {code(other_fixed)}")
    where = f"on line {statement.lineno} " if statement.lineno == line.frame.position.line else ""
    fix = f"{where}{code(fixed)}"
    if others:
        fix = f"{', '.join(others)}, and {fix}"
    return Finding(rule + ".", fix, section=_SCALING_SECTION)


Reading = Callable[[ast.Attribute, ast.Call | None, FailingLine, ErrorContext], Finding]

# (the kind of owner, as ``families_api_names`` names it; the missing name) -> the reading.
REMOVED_CALLS: dict[tuple[str, str], Reading] = {
    ("keras.backend", "set_value"): _set_value,
    ("keras.backend", "get_value"): _get_value,
    ("keras.backend", "eval"): _get_value,
    ("keras.backend", "variable"): _variable,
    ("keras.backend", "set_learning_phase"): _learning_phase,
    ("keras.backend", "learning_phase"): _learning_phase,
    ("optimizer", "minimize"): _minimize,
    ("optimizer", "get_scaled_loss"): _loss_scaling,
    ("optimizer", "get_unscaled_gradients"): _loss_scaling,
}


def removed_call(
    kind: str, node: ast.Attribute, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """The Keras 3 way of a call Keras 3 removed, or None when the name is not one."""
    reading = REMOVED_CALLS.get((kind, node.attr))
    if reading is None:
        return None
    return reading(node, _call_of(node, line), line, context)
