"""Gradients applied to other variables than the ones they were taken for (issue #25).

``grads = tape.gradient(g_loss, critic.trainable_variables)`` then
``g_opt.apply_gradients(zip(grads, maker.trainable_variables))``: each gradient is paired
with a variable of another model, and the optimizer fails on the first pair whose shapes
differ (``Shapes (4, 32) and (2, 32) are incompatible`` or a broadcast message), or
silently updates the wrong weights when they agree. Recognised by reading, not by a
message: the failing line is an ``apply_gradients(zip(G, V))`` (or Keras 3's
``apply(G, V)``), and ``G``'s newest assignment before it in the same cell is
``tape.gradient(loss, S)`` with ``S`` holding other variables than ``V`` (read from the
frame: the two lists, compared item by item). The fix takes the gradients for the
variables the optimizer updates (``S`` written as ``V``).
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

SECTION = "training-loop"
_MAX_VARIABLES = 2000


def applied_pairs(call: ast.expr | None) -> tuple[str, ast.expr] | None:
    """(the gradients' name, the variables' expression) of ``opt.apply_gradients(zip(G,
    V))``, ``list(zip(G, V))`` or ``opt.apply(G, V)``."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args):
        return None
    if call.func.attr == "apply" and len(call.args) == 2 and isinstance(call.args[0], ast.Name):
        return call.args[0].id, call.args[1]
    if call.func.attr != "apply_gradients":
        return None
    first = call.args[0]
    if isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "list":
        first = first.args[0] if first.args else first
    if (
        isinstance(first, ast.Call)
        and isinstance(first.func, ast.Name)
        and first.func.id == "zip"
        and len(first.args) == 2
        and isinstance(first.args[0], ast.Name)
    ):
        return first.args[0].id, first.args[1]
    return None


def _gradient_taken(tree: ast.AST, name: str, before: int) -> tuple[ast.Assign, ast.expr] | None:
    """The newest ``name = <tape>.gradient(loss, S)`` above line ``before``: it and ``S``."""
    found: tuple[ast.Assign, ast.expr] | None = None
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Assign)
            and node.lineno < before
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            continue
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "gradient"
            and len(value.args) >= 2
            and (found is None or node.lineno > found[0].lineno)
        ):
            found = (node, value.args[1])
    return found


def _variables(node: ast.expr, line: FailingLine, context: ErrorContext) -> list[object] | None:
    found, value = value_of(node, line.frame, context)
    if not found or type(value) not in (list, tuple) or len(value) > _MAX_VARIABLES:
        return None
    return list(value)


def _shapes(variables: list[object]) -> str:
    shown = []
    for variable in variables[:3]:
        try:
            shown.append(show_shape(tuple(int(d) for d in variable.shape)))  # type: ignore[attr-defined]
        except Exception:
            return ""
    more = ", ..." if len(variables) > 3 else ""
    return f" ({', '.join(shown)}{more})"


def _optimizer_made_again(line: FailingLine, context: ErrorContext) -> str | None:
    """``opt = keras.optimizers.Adam(1e-3)`` from the cells, when the optimizer of the
    failing ``opt.apply_gradients(...)`` never applied an update (its ``iterations`` is 0):
    it built its state in the failed call."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells

    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
    ):
        return None
    name = call.func.value.id
    found, optimizer = value_of(call.func.value, line.frame, context)
    if not found:
        return None
    try:
        iterations = int(library_attribute(optimizer, "iterations"))  # type: ignore[arg-type]
    except Exception:
        return None
    if iterations != 0:
        return None
    for cell, statement in assignments_in_cells(name, context):
        written = cell.segment(statement)
        if written and "\n" not in written and isinstance(statement.value, ast.Call):
            return written
        return None
    return None


def _read_other_variables(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error  # recognised by reading the line
    applied = applied_pairs(line.call)
    tree = line.frame.tree()
    if applied is None or tree is None:
        return None
    gradients, variables_node = applied
    taken = _gradient_taken(tree, gradients, line.frame.position.line)
    if taken is None:
        return None
    assignment, sources_node = taken
    sources, variables = (
        _variables(sources_node, line, context),
        _variables(variables_node, line, context),
    )
    if sources is None or variables is None:
        return None
    if len(sources) == len(variables) and all(
        a is b for a, b in zip(sources, variables, strict=True)
    ):
        return None  # the same variables, however written
    sources_source = line.frame.segment(sources_node)
    variables_source = line.frame.segment(variables_node)
    written = line.frame.segment(assignment)
    if not sources_source or not variables_source or not written:
        return None
    rule = (
        f"{code(gradients)} holds the gradients for {code(sources_source)}, {len(sources)} "
        f"variables{_shapes(sources)} ({code(written)}, line {assignment.lineno}), and the "
        f"line pairs them with {code(variables_source)}, {len(variables)} other "
        f"variables{_shapes(variables)}: each gradient is applied to a variable it was not "
        "computed for. Take the gradients for the variables this optimizer updates"
    )
    fixed = rewrite(line.frame, assignment, sources_node, variables_source)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    remade = _optimizer_made_again(line, context)
    if remade is None:
        return Finding(rule + ".", code(fixed))
    return Finding(
        rule + ". This call was the optimizer's first: it built its state (Adam's moments, "
        "...) in the failed call, and that state stays broken, so make the optimizer again "
        "too",
        f"{code(fixed)}, and run {code(remade)} again before the next step",
    )


OTHER_VARIABLES = ErrorFamily(
    "gradients applied to other variables than they were taken for",
    messages=(),
    read=_read_other_variables,
    section=SECTION,
)
