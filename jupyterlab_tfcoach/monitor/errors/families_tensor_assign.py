"""A tensor given ``assign`` / ``assign_add`` / ``assign_sub`` as if it were a variable
(issue #25).

``acc = [tf.zeros_like(w) for w in net.trainable_variables]`` then, in a loop,
``for a, g in zip(acc, grads): a.assign_add(g)``: every TensorFlow op (``zeros_like``,
``zeros``, ``constant``, arithmetic) returns a new immutable tensor, and only a
``tf.Variable`` has the assign methods, so Python raises ``'EagerTensor' object has no
attribute 'assign_add'`` on the learner's line and no TensorFlow frame is involved. The
reading follows the failing call's owner back to the statement of the cell that made it:
the owner's own assignment, or, for a loop variable of ``for a, ... in zip(L, ...)`` /
``for a in L``, the list ``L``'s (a list display or comprehension). That statement is
rewritten with each made value wrapped in ``tf.Variable(...)`` (``trainable=False`` for a
running sum, ``assign_add``, that no tape differentiates); the rebinding form (a new tensor
each step, ``acc = [a + g for a, g in zip(acc, grads)]``) is said in words. Only a making
statement at a cell's top level is rewritten: a variable made inside a function would be
made again at every call (and a ``tf.function`` refuses that).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)

SECTION = "tensors-immutable"
_NO_ASSIGN = re.compile(
    r"'(?:[\w.]*\.)?(?P<cls>EagerTensor|SymbolicTensor|Tensor)' object has no attribute "
    r"'(?P<name>assign|assign_add|assign_sub)'"
)
_OPERATORS = {"assign_add": "+", "assign_sub": "-"}
_MAX_SHOWN = 160


def _assigned_value(statement: ast.stmt, name: str) -> ast.expr | None:
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
    ):
        return statement.value
    return None


def _top_level_making(tree: ast.Module, name: str, before: int) -> ast.Assign | None:
    """The cell's last top-level ``name = ...`` before line ``before``."""
    found = None
    for statement in tree.body:
        if statement.lineno >= before:
            break
        if _assigned_value(statement, name) is not None:
            found = statement
    return found if isinstance(found, ast.Assign) else None


def _loop_source(tree: ast.Module, name: str, line: int) -> tuple[str, ast.For] | None:
    """For a loop variable ``name`` of a loop holding ``line``: the list it walks
    (``for a in L``, or ``for a, g in zip(L, G)`` with ``a`` in ``L``'s place)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.For) and node.lineno < line <= (node.end_lineno or 0)):
            continue
        target, walked = node.target, node.iter
        if isinstance(target, ast.Name) and target.id == name and isinstance(walked, ast.Name):
            return walked.id, node
        if (
            isinstance(target, ast.Tuple)
            and isinstance(walked, ast.Call)
            and isinstance(walked.func, ast.Name)
            and walked.func.id == "zip"
            and len(walked.args) == len(target.elts)
            and not walked.keywords
        ):
            for position, element in enumerate(target.elts):
                argument = walked.args[position]
                if (
                    isinstance(element, ast.Name)
                    and element.id == name
                    and isinstance(argument, ast.Name)
                ):
                    return argument.id, node
    return None


def _made_values(value: ast.expr) -> list[ast.expr] | None:
    """The values a making statement makes: the element of a list comprehension, the
    items of a list display, else the value itself; only calls (an op's result)."""
    if isinstance(value, ast.ListComp):
        made = [value.elt]
    elif isinstance(value, (ast.List, ast.Tuple)):
        made = list(value.elts)
    else:
        made = [value]
    return made if made and all(isinstance(m, ast.Call) for m in made) else None


def _wrapped(source: str, statement: ast.Assign, made: list[ast.expr], wrap: str) -> str | None:
    """The making statement with each made value wrapped (``wrap`` holds ``\\0``)."""
    start = (statement.lineno, statement.col_offset)
    lines = source.splitlines()
    text = ast.get_source_segment(source, statement)
    if not text or "\n" in text:
        return None
    row = lines[start[0] - 1]
    pieces: list[str] = []
    cursor = start[1]
    for value in sorted(made, key=lambda v: v.col_offset):
        if value.lineno != start[0] or value.end_lineno != start[0]:
            return None
        pieces.append(row[cursor : value.col_offset])
        pieces.append(wrap.replace("\0", row[value.col_offset : value.end_col_offset]))
        cursor = value.end_col_offset or 0
    pieces.append(row[cursor : statement.end_col_offset])
    return "".join(pieces)


def _differentiated(tree: ast.Module, name: str) -> bool:
    """``name`` read in a ``.gradient(...)`` call's sources: a parameter, not a sum."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "gradient"
            and any(
                isinstance(part, ast.Name) and part.id == name
                for argument in node.args[1:]
                for part in ast.walk(argument)
            )
        ):
            return True
    return False


def _read_tensor_assign(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    method = error.group("name")
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == method
        and isinstance(call.func.value, ast.Name)
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    owner = call.func.value.id
    given = line.frame.segment(call.args[0])
    tree = line.frame.tree()
    if tree is None or not given or "\n" in given:
        return None
    tf = tf_alias(context)
    failing = line.frame.position.line
    walked = _loop_source(tree, owner, failing)
    made_name, loop = walked if walked is not None else (owner, None)
    before = loop.lineno if loop is not None else failing
    making = _top_level_making(tree, made_name, before)
    made = _made_values(making.value) if making is not None else None
    maker = ""
    if made:
        function = made[0].func  # type: ignore[attr-defined]
        maker = line.frame.segment(function) or ""
        maker = maker if len(maker) <= 40 and "\n" not in maker else ""
    what = (
        f"{code(owner)} is a tensor, an item of {code(made_name)}"
        if loop is not None
        else f"{code(owner)} is a tensor"
    )
    origin = f", as {code(maker)} returns" if maker else ""
    rule = (
        f"{what}{origin}: every TensorFlow op returns a new, immutable tensor, which has no "
        f"{code(method)}; only a `{tf}.Variable` is changed in place"
    )
    operator = _OPERATORS.get(method)
    rebound = f"{owner} {operator} {given}" if operator is not None else given
    accumulates = method == "assign_add" and not _differentiated(tree, made_name)
    kept = " (`trainable=False`: a running sum that no tape differentiates)" if accumulates else ""
    if loop is not None:
        names = line.frame.segment(loop.target)
        walked_text = line.frame.segment(loop.iter)
        if names and walked_text and "\n" not in names + walked_text:
            rule += (
                f". Either make {code(made_name)}'s items variables{kept}, or build a new "
                f"list each step, "
                f"{code(f'{made_name} = [{rebound} for {names} in {walked_text}]')} in place "
                "of the loop"
            )
    else:
        rule += (
            f". Either make {code(owner)} a variable{kept}, or bind the name to a new "
            f"tensor, {code(f'{owner} = {rebound}')}"
        )
    if making is None or made is None:
        return Finding(rule + ".", None)
    wrap = f"{tf}.Variable(\0, trainable=False)" if accumulates else f"{tf}.Variable(\0)"
    fixed = _wrapped(line.frame.source(), making, made, wrap)
    if fixed is None or len(fixed) > _MAX_SHOWN:
        return Finding(rule + ".", None)
    if "of this cell" in line.where:
        return Finding(rule + ".", f"on line {making.lineno} {code(fixed)}")
    written = line.frame.segment(making) or ""
    return Finding(rule + ".", f"in place of {code(written)}, {code(fixed)}")


TENSOR_ASSIGN = ErrorFamily(
    "assign methods called on a tensor",
    messages=(Message(_NO_ASSIGN),),
    exception_type="AttributeError",
    read=_read_tensor_assign,
    section=SECTION,
    # Python raises it on the learner's line: no TensorFlow frame takes part.
    without_library=True,
)
