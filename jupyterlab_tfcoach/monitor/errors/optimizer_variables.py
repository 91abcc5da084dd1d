"""One optimizer stepping a second set of the learner's own variables ("Unknown variable").

A Keras 3 optimizer makes its slots (Adam's moments, a momentum) for the variables of its
first step and refuses any other variable afterwards. ``opt`` stepped ``canvas`` in one
loop, then ``opt.apply_gradients([(g, sketch)])`` in another raises "Unknown variable"
for ``sketch``. ``explain_shared_optimizer`` tells the case of several models; this is the
case of plain ``tf.Variable``s (an image being optimised, hand-made weights).

Told when the variables the failing call gives that the optimizer does not know are held
by names of the namespace, and the variables it was built for are too (by other names):
two live sets of variables, not a model that remade its own (whose old variables no name
holds any more). The entry names both sets and prints two statements in the learner's
names: a new optimizer made as the old one was (its statement in the cells), once, above
the loop or function holding the failing line, and the failing line stepping with it.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    instance_attribute,
    rewrite,
    value_kind,
)

_STEPS = ("apply_gradients", "apply")
_MAX_VARIABLES = 5000
_VARIABLE_KINDS = ("variable", "keras_variable")


def _given_variables(call: ast.Call) -> list[ast.expr] | None:
    """The expressions a step call gives as its variables: ``[(g, v), ...]``,
    ``zip(G, V)``, ``list(zip(G, V))``, Keras 3's ``apply(G, V)``."""
    if call.func.attr == "apply" and len(call.args) == 2:  # type: ignore[union-attr]
        return [call.args[1]]
    if not call.args:
        return None
    given = call.args[0]
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id == "list":
        given = given.args[0] if given.args else given
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id == "zip":
        return [given.args[1]] if len(given.args) == 2 else None
    if isinstance(given, (ast.List, ast.Tuple)) and all(
        isinstance(pair, ast.Tuple) and len(pair.elts) == 2 for pair in given.elts
    ):
        return [pair.elts[1] for pair in given.elts]  # type: ignore[attr-defined]
    return None


def _variables_of(value: Any) -> list[Any]:
    if value_kind(value) in _VARIABLE_KINDS:
        return [value]
    if type(value) in (list, tuple) and len(value) <= _MAX_VARIABLES:
        items = list(value)
        if items and all(value_kind(item) in _VARIABLE_KINDS for item in items):
            return items
    return []


def _names_of(variables: list[Any], namespace: Any) -> list[str] | None:
    """The namespace names of the variables (one each), or None when one has none."""
    from jupyterlab_tfcoach.monitor.names import name_bound_to

    names = []
    for variable in variables[:8]:
        name = name_bound_to(id(variable), namespace)
        if name is None:
            return None
        names.append(name)
    return names


def _listed(names: list[str]) -> str:
    shown = [code(name) for name in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _top_statement(tree: ast.Module, line: int) -> ast.stmt | None:
    return next(
        (
            statement
            for statement in tree.body
            if statement.lineno <= line <= (statement.end_lineno or statement.lineno)
        ),
        None,
    )


def explain_optimizer_other_variables(parsed: Any, context: ErrorContext) -> tuple[str, str] | None:
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells
    from jupyterlab_tfcoach.monitor.errors.failing_line import read_failing_line, value_of
    from jupyterlab_tfcoach.monitor.errors.families_keras_lifecycle import is_optimizer
    from jupyterlab_tfcoach.monitor.stored_state import contained_values

    line = read_failing_line(context)
    call = line.call if line is not None else None
    if (
        line is None
        or not isinstance(call, ast.Call)
        or not isinstance(call.func, ast.Attribute)
        or call.func.attr not in _STEPS
    ):
        return None
    found, optimizer = value_of(call.func.value, line.frame, context)
    if not found or not is_optimizer(optimizer):
        return None
    has, stored_list = instance_attribute(optimizer, "_trainable_variables")
    built_for = contained_values(stored_list, sequences_only=True) if has else None
    if not built_for or len(built_for) > _MAX_VARIABLES:
        return None
    given_nodes = _given_variables(call)
    if not given_nodes:
        return None
    given: list[Any] = []
    for node in given_nodes:
        found, value = value_of(node, line.frame, context)
        variables = _variables_of(value) if found else []
        if not variables:
            return None
        given.extend(variables)
    known = {id(variable) for variable in built_for}
    unknown = [variable for variable in given if id(variable) not in known]
    if not unknown or len(unknown) < len(given):
        return None  # some are the optimizer's own: another cause
    unknown_names = _names_of(unknown, context.namespace)
    old_names = _names_of(list(built_for), context.namespace)
    if not unknown_names or not old_names or set(unknown_names) & set(old_names):
        return None
    optimizer_name = line.frame.segment(call.func.value) or ""
    kind = type(optimizer).__name__
    other = "are other variables" if len(unknown) > 1 else "is another variable"
    rule = (
        f"{code(optimizer_name)} (one {kind} optimizer) was built for {_listed(old_names)}, "
        f"the variable{'s' if len(old_names) > 1 else ''} of its first step: a Keras 3 "
        f"optimizer makes its state for those variables and steps no other, and "
        f"{_listed(unknown_names)} {other}. "
        f"Give {_listed(unknown_names)} an optimizer of its own, made once, before the "
        f"steps"
    )
    made = next(iter(assignments_in_cells(optimizer_name, context)), None)
    maker = made[0].segment(made[1].value) if made is not None else None
    tree = line.frame.tree()
    outer = _top_statement(tree, line.frame.position.line) if tree is not None else None
    statement = line.frame.statement()
    if (
        not maker
        or "\n" in maker
        or not isinstance(made[1].value, ast.Call)  # type: ignore[index]
        or outer is None
        or statement is None
    ):
        return (f"{rule} (a new optimizer object).", "parameters-are-variables")
    new_name = f"{unknown_names[0]}_optimizer" if len(unknown_names) == 1 else f"{optimizer_name}_2"
    if new_name in context.namespace:
        return (f"{rule} (a new {code(maker)}).", "parameters-are-variables")
    fixed = rewrite(line.frame, statement, call.func.value, new_name)
    if not fixed or "\n" in fixed:
        return (f"{rule} (a new {code(maker)}).", "parameters-are-variables")
    creation = f"{new_name} = {maker}"
    place = "above it" if outer is statement else f"above line {outer.lineno} ({_holder(outer)})"
    return (
        f"{rule}. Fix: {code(creation)} as a line of its own {place}, then step with it: "
        f"{code(fixed)}.",
        "parameters-are-variables",
    )


def _holder(outer: ast.stmt) -> str:
    """What the top-level statement holding the step is, for the learner."""
    if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"the `def {outer.name}` that holds the step"
    if isinstance(outer, (ast.For, ast.AsyncFor, ast.While)):
        return "the loop that holds the step"
    return "the block that holds the step"
