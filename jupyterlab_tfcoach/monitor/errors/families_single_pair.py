"""One gradient and one variable given to an optimizer as if they were lists (issue #25).

``grad = tape.gradient(loss, canvas)`` with ``canvas`` one ``tf.Variable`` returns one
tensor. ``opt.apply_gradients(zip(grad, canvas))`` then walks both along their first axis:
``zip`` pairs the gradient's first row with the variable's first row, and a row of a
variable is a plain tensor, so Keras fails on it (``object has no attribute
'_unique_id'``; ``Cannot iterate over a scalar tensor`` for a scalar; inside a
``tf.function``, ``Iterating over a symbolic tf.Tensor is not allowed``). The same
mistake written as ``opt.apply_gradients((grad, canvas))``, one pair where a list of pairs
goes, fails on unpacking. Whatever the message, a teacher sees the call: a list of
(gradient, variable) pairs is wanted, and here there is one pair.

Recognised by reading alone: the failing call is ``<opt>.apply_gradients(zip(G, V))`` or
``<opt>.apply_gradients((G, V))`` where ``V`` holds one TensorFlow or Keras variable (not
a list). The fix is the call given one pair, ``[(G, V)]``, or, when ``G`` holds a list of
gradients (``tape.gradient(loss, [w])``), ``zip(G, [V])``.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    innermost_function,
    one_line_code,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised

SECTION = "training-loop"
_VARIABLE_KINDS = ("variable", "keras_variable")


def _given_pair(call: ast.expr | None) -> tuple[ast.expr, ast.expr, ast.expr, bool] | None:
    """(the argument, G, V, whether written with zip) of ``X.apply_gradients(zip(G, V))``
    or ``X.apply_gradients((G, V))``."""
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "apply_gradients"
        and len(call.args) == 1
    ):
        return None
    given = call.args[0]
    if (
        isinstance(given, ast.Call)
        and isinstance(given.func, ast.Name)
        and given.func.id == "zip"
        and len(given.args) == 2
        and not given.keywords
    ):
        return given, given.args[0], given.args[1], True
    if isinstance(given, ast.Tuple) and len(given.elts) == 2:
        return given, given.elts[0], given.elts[1], False
    return None


def _applying_call(line: FailingLine) -> ast.expr | None:
    """The failing ``apply_gradients`` call, or the one whose argument is the failing call
    (``zip`` itself raises for a scalar variable, before the optimizer is called)."""
    call = line.call
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "zip":
        for node in ast.walk(line.statement) if line.statement is not None else ():
            if isinstance(node, ast.Call) and node.args and node.args[0] is call:
                return node
        return None
    return call


def _gradient_for(node: ast.expr, variable: ast.expr, line: FailingLine) -> bool:
    """Whether ``node`` is ``<tape>.gradient(loss, V)`` with ``V`` the variable itself,
    written on the line or as the newest assignment of the name ``node`` above it in its
    function (a traced function's local): the gradient of one variable is one tensor."""
    if isinstance(node, ast.Name):
        tree = line.frame.tree()
        function = innermost_function(tree, line.frame.position.line) if tree else None
        assigned = (
            last_assignment(
                function if function is not None else tree, node.id, line.frame.position.line
            )
            if tree
            else None
        )
        if assigned is None:
            return False
        node = assigned.value
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and len(node.args) >= 2
        and line.frame.segment(node.args[1]) == line.frame.segment(variable)
    )


def _read_single_pair(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    pair = _given_pair(_applying_call(line))
    if pair is None or line.statement is None:
        return None
    given, gradient_node, variable_node, zipped = pair
    found, variable = value_of(variable_node, line.frame, context)
    if not found or value_kind(variable) not in _VARIABLE_KINDS:
        return None
    found, gradient = value_of(gradient_node, line.frame, context)
    if found:
        gradients_listed = type(gradient) in (list, tuple)
    elif _gradient_for(gradient_node, variable_node, line):
        gradients_listed = False  # ``tape.gradient(loss, V)`` of the one variable: a tensor
    else:
        return None
    if not zipped and gradients_listed:
        return None
    frame = line.frame
    gradient_source, variable_source = frame.segment(gradient_node), frame.segment(variable_node)
    given_source = frame.segment(given)
    if not gradient_source or not variable_source or not given_source:
        return None
    if gradients_listed:
        fixed = rewrite(frame, line.statement, variable_node, f"[{variable_source}]")
        rule = (
            f"{code(gradient_source)} is a list of gradients but {code(variable_source)} is "
            f"one variable, not a list: {code(given_source)} walks {code(variable_source)} "
            f"along its first axis and pairs each gradient with a slice of it, a plain "
            f"tensor the optimizer cannot assign. Put the variable in a list"
        )
        return Finding(rule + ".", one_line_code(fixed))
    fixed = rewrite(frame, line.statement, given, f"[({gradient_source}, {variable_source})]")
    if zipped:
        rule = (
            f"{code(gradient_source)} is one gradient and {code(variable_source)} one "
            f"variable, so {code(given_source)} does not make one pair: it walks both along "
            f"their first axis and pairs slice with slice, and a slice of a variable is a "
            f"plain tensor the optimizer cannot assign. `zip` is for lists of gradients and "
            f"variables; `apply_gradients` takes a list of (gradient, variable) pairs, here "
            f"a list of one pair"
        )
    else:
        rule = (
            f"`apply_gradients` takes a list of (gradient, variable) pairs, and "
            f"{code(given_source)} is one pair: it reads {code(gradient_source)} and "
            f"{code(variable_source)} each as a pair. Put the pair in a list"
        )
    return Finding(rule + ".", one_line_code(fixed))


SINGLE_PAIR = ErrorFamily(
    "one gradient and one variable given to apply_gradients as lists",
    messages=(),
    read=_read_single_pair,
    section=SECTION,
)
