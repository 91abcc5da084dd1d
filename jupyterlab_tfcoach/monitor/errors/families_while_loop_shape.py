"""A ``tf.while_loop`` loop variable whose shape changes from one iteration to the next.

Inside a ``tf.function``, ``tf.while_loop(cond, body, [tf.constant(0), h0])`` checks that
``body`` gives every loop variable back with the shape it entered with. A start value
made smaller than what the body computes (``h0 = tf.zeros((1, units))`` that the body
broadcasts to ``(batch, units)``, an empty vector the body concatenates to) raises
``Input tensor `zeros:0` enters the loop with shape (1, 8), but has shape (32, 8) after
one iteration``: the message names a graph tensor, not the learner's variable.

The reading finds the failing ``tf.while_loop`` call, its ``loop_vars`` (third argument
or keyword; a list or tuple written in the call) and the one whose value (read from the
traced frame) is the tensor named, or the only one of the shape the message gives. It
names that variable and both shapes, and the axes that changed. The fix is the call with
``shape_invariants``: each loop variable's own shape, with ``None`` on the axes that
changed; printed only when every loop variable's shape is known (a value read from the
frame, or a Python number or ``tf.constant`` of one written in the call). Starting the
variable at the shape the body gives is the other way, said in the rule.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    shape_list,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_ENTERS = re.compile(
    r"Input tensor `(?P<tensor>[^`]+)` enters the loop with shape (?P<before>\([^)]*\)), "
    r"but has shape (?P<after>\([^)]*\)) after one iteration"
)
_MAX_VARS = 20


def _while_loop_call(line: FailingLine) -> ast.Call | None:
    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "while_loop":
                    return node
    return None


def _loop_vars(call: ast.Call) -> ast.List | ast.Tuple | None:
    node = next((k.value for k in call.keywords if k.arg == "loop_vars"), None)
    if node is None and len(call.args) >= 3:
        node = call.args[2]
    if isinstance(node, (ast.List, ast.Tuple)) and 0 < len(node.elts) <= _MAX_VARS:
        return node
    return None


def _number(node: ast.expr) -> bool:
    """A Python number, or ``tf.constant(<number>)``, written in the call: a scalar."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "constant":
            node = node.args[0]
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _shape_of(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[Any, ...] | None:
    if _number(node):
        return ()
    found, value = value_of(node, line.frame, context)
    described = describe("", value) if found else None
    if described is None or described.shape is None:
        return None
    return described.shape


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    before = shape_list(error.group("before").strip("()"))
    after = shape_list(error.group("after").strip("()"))
    call = _while_loop_call(line)
    written_vars = _loop_vars(call) if call is not None else None
    if before is None or after is None or call is None or written_vars is None:
        return None
    variables = list(written_vars.elts)
    shapes = [_shape_of(node, line, context) for node in variables]
    tensor = error.group("tensor")
    named = []
    for index, node in enumerate(variables):
        found, value = value_of(node, line.frame, context)
        if found and library_attribute(value, "name", None) == tensor:
            named.append(index)
    if len(named) != 1:
        named = [index for index, shape in enumerate(shapes) if shape == tuple(before)]
    if not named:
        # The traced frame may not hold the value: when every known variable has another
        # shape, the one whose shape is unknown is the one the message names.
        named = [index for index, shape in enumerate(shapes) if shape is None]
    if len(named) != 1:
        return None
    index = named[0]
    shapes[index] = tuple(before)
    written = line.frame.segment(variables[index])
    if not written or "\n" in written or len(before) != len(after):
        return None
    changed = [axis for axis, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    axes = ", ".join(str(axis) for axis in changed)
    rule = (
        f"`tf.while_loop` needs every loop variable to keep its shape: {code(written)} enters "
        f"the loop with shape {error.group('before')}, but the body gives it back with shape "
        f"{error.group('after')} (ax{'is' if len(changed) == 1 else 'es'} {axes} changed; "
        f"TensorFlow calls it `{tensor}`). Make {code(written)} start with the shape the "
        "body gives it, or declare the axes that change as `None` in `shape_invariants`"
    )
    if any(shape is None for shape in shapes):
        return Finding(rule + ".", None)
    tf = tf_alias(context)
    invariants = []
    for position, shape in enumerate(shapes):
        dims = [
            "None" if position == index and axis in changed else str(dim)
            for axis, dim in enumerate(shape or ())
        ]
        invariants.append(f"{tf}.TensorShape([{', '.join(dims)}])")
    opened_text = line.frame.segment(call) or ""
    if not opened_text.endswith(")") or any(k.arg == "shape_invariants" for k in call.keywords):
        return Finding(rule + ".", None)
    opened = opened_text[:-1].rstrip().rstrip(",")
    # The same nesting as loop_vars: TensorFlow refuses a list for a tuple.
    listed = ", ".join(invariants)
    if isinstance(written_vars, ast.Tuple):
        listed = f"({listed},)" if len(invariants) == 1 else f"({listed})"
    else:
        listed = f"[{listed}]"
    replacement = f"{opened}, shape_invariants={listed})"
    statement = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, statement, call, replacement)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


WHILE_LOOP_SHAPE = ErrorFamily(
    "a tf.while_loop variable whose shape changes across iterations",
    messages=(Message(_ENTERS),),
    read=_read,
    section="python-loops",
)
