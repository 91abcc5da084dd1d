"""A tf.function that copies weights into new tf.Variables on every call.

``fast = [tf.Variable(w) for w in weights]`` (or ``fast_w = tf.Variable(w)``) in a
tf.function's body, ``weights`` made outside it and holding variables or tensors: the
second trace raises "tf.function only supports singleton tf.Variables created on the first
call". The usual advice, create the variables once outside the function, is wrong for a
copy: made once, it would keep the previous call's updates and never start again from
``weights``. A per-call copy is plain tensors, stepped by making new tensors (``f - lr * g``,
no ``assign``), which is also what lets an outer tape differentiate through the step
(MAML's inner loop). The fix is written in the learner's names: the copy as
``list(weights)`` (its items are the variables, which a tape watches by itself), and a
``for f, g in zip(fast, grads): f.assign_sub(...)`` loop as one functional line.
Read from the failing frame's source and the namespace (kinds only).
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, value_kind

_HELD_KINDS = frozenset({"variable", "keras_variable", "tensor"})
_VARIABLE_KINDS = frozenset({"variable", "keras_variable"})
# Attributes that list a model's or layer's variables.
_TRAINABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})
_WEIGHT_LISTS = _TRAINABLE_LISTS | {name.removeprefix("trainable_") for name in _TRAINABLE_LISTS}
_MAX_ITEMS = 1000


def _is_variable_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or len(node.args) < 1:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "Variable"


def _function_of(tree: ast.Module, statement: ast.stmt) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
            child is statement for child in ast.walk(node)
        ):
            return node
    return None


def _bound_inside(function: ast.FunctionDef) -> set[str]:
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _holds_weights(value: Any, many: bool) -> tuple[bool, bool]:
    """(variables or tensors, all variables) for a value (``many``: a list or tuple of them)."""
    items = list(value)[:_MAX_ITEMS] if many and type(value) in (list, tuple) else [value]
    if many and type(value) not in (list, tuple):
        return False, False
    kinds = [value_kind(item) for item in items]
    if not kinds or not all(kind in _HELD_KINDS for kind in kinds):
        return False, False
    return True, all(kind in _VARIABLE_KINDS for kind in kinds)


def _functional_update(
    function: ast.FunctionDef, copy: str, frame: CellFrame
) -> tuple[str | None, tuple[int, int] | None, bool]:
    """The copies' update written as one new list (``fast = [f - lr * g for f, g in
    zip(fast, grads)]``) and the lines it replaces; ``False`` third when the copies are
    updated some other way (an optimizer): no line to give."""
    found: tuple[str | None, tuple[int, int] | None] = (None, None)
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("apply_gradients", "minimize", "apply")
            and any(isinstance(n, ast.Name) and n.id == copy for n in ast.walk(node))
        ):
            return None, None, False
        if not (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name)
            and node.iter.func.id == "zip"
            and len(node.iter.args) == 2
            and isinstance(node.iter.args[0], ast.Name)
            and node.iter.args[0].id == copy
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
            and isinstance(node.target.elts[0], ast.Name)
            and len(node.body) == 1
            and isinstance(node.body[0], ast.Expr)
        ):
            continue
        item = node.target.elts[0].id
        call = node.body[0].value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == item
            and call.func.attr in ("assign_sub", "assign_add", "assign")
            and len(call.args) == 1
        ):
            continue
        step = frame.segment(call.args[0])
        header = frame.segment(node.iter)
        target = frame.segment(node.target)
        if not step or not header or not target or "\n" in step:
            continue
        argument = call.args[0]
        bare = not isinstance(argument, ast.BinOp | ast.BoolOp | ast.Compare | ast.IfExp) or (
            isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Mult | ast.Div)
        )
        term = step if bare else f"({step})"
        new = {
            "assign_sub": f"{item} - {term}",
            "assign_add": f"{item} + {term}",
            "assign": step,
        }[call.func.attr]
        found = (
            f"{copy} = [{new} for {target} in {header}]",
            (node.lineno, node.end_lineno or node.lineno),
        )
    return found[0], found[1], True


def per_call_copy(context: ErrorContext) -> str | None:
    """The entry for variables made as a per-call copy of weights made outside the
    function, or None when the failing line is not one."""
    found = context.failing_name_assignment()
    if found is None:
        return None
    frame, tree, statement, _ = found
    value = statement.value
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        generator = value.generators[0]
        if not (
            _is_variable_call(value.elt)
            and isinstance(generator.target, ast.Name)
            and isinstance(value.elt, ast.Call)
            and isinstance(value.elt.args[0], ast.Name)
            and value.elt.args[0].id == generator.target.id
            and not generator.ifs
        ):
            return None
        source, many = generator.iter, True
    elif _is_variable_call(value) and isinstance(value, ast.Call):
        source, many = value.args[0], False
    else:
        return None
    function = _function_of(tree, statement)
    line = frame.segment(statement)
    source_text = frame.segment(source)
    if function is None or not line or "\n" in line or not source_text:
        return None
    if {n.id for n in ast.walk(source) if isinstance(n, ast.Name)} & _bound_inside(function):
        return None  # made from the function's own values: another case
    weights, all_variables = False, False
    if isinstance(source, ast.Attribute) and source.attr in _WEIGHT_LISTS and many:
        weights, all_variables = True, True
    else:
        found, held = context.resolve(source, frame)
        if found:
            weights, all_variables = _holds_weights(held, many)
    if not weights:
        return None  # a variable made from a constant: an accumulator, created once outside
    copy = statement.targets[0].id
    what = f"new tf.Variables copying {code(source_text)}" if many else "a new tf.Variable"
    said = (
        f"{code(function.name)} makes {code(copy)} with {code(line)}: {what} on every call, "
        f"and a tf.function allows variables only on its first trace. Created once outside "
        f"the function instead, the copy would keep the previous call's updates and never "
        f"start again from {code(source_text)}. A copy of the weights made per call is plain "
        f"tensors, stepped by making new tensors rather than by `assign`, which also lets a "
        f"tape differentiate through the step."
    )
    if not many or not all_variables:
        return said + (
            f" Read {code(source_text)} directly (a tape watches variables by itself; "
            "watch a tensor with `tape.watch`) and write each step as a new tensor, "
            f"`{copy} = {copy} - lr * g`."
        )
    update, lines, writable = _functional_update(function, copy, frame)
    first = f"{copy} = list({source_text})"
    if not writable:
        return said + (
            f" Start from {code(first)} (its items are the variables themselves, watched by "
            "a tape) and write the optimizer's step as new tensors "
            f"(`{copy} = [f - lr * g for f, g in zip({copy}, grads)]`): an optimizer would "
            f"change {code(source_text)} in place."
        )
    fix = f" Fix: on line {statement.lineno} {code(first)}"
    if update is not None and lines is not None:
        span = f"lines {lines[0]}-{lines[1]}" if lines[1] > lines[0] else f"line {lines[0]}"
        fix += (
            f", and in place of {span} {code(update)} (the items of {code(copy)} are now "
            f"{code(source_text)}'s own variables: `assign` would change them)."
        )
    else:
        fix += "."
    return said + fix
