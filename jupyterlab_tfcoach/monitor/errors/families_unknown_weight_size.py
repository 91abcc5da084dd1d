"""A layer whose weights would be sized by an input axis of unknown size (issue #25).

Keras makes a layer's weights the first time the layer sees an input, sized by that
input's last axis (``Dense(64)`` on ``(batch, 12)`` makes a ``(12, 64)`` kernel). When
that axis is ``None`` the weights cannot be made, and Keras 3 says so about the variable
(``Shapes used to initialize variables must be fully-defined (no `None` dimensions).
Received: shape=(None, 64) for variable path='dense/kernel'``), without naming the layer
call or where the ``None`` came from.

The reading takes the layer call on the failing line (``layers.Dense(64)(x)``), the
symbolic input it was given, and checks that input's last axis is ``None``. It then
follows the input's name back to the statement that made it, in the same function or
cell, before the failing line:

- ``x = layers.Flatten()(points)`` where ``points`` has an open axis after the batch
  (``keras.Input((None, 3))``): Flatten multiplies the sizes of every axis after the
  batch, so its size is unknown. The fix pools over the open axis
  (``GlobalAveragePooling1D`` for a rank-3 input, ``2D`` for rank 4), which works for any
  number of rows;
- ``x = keras.Input((None,))``: the last axis itself was declared open; told without a
  fix (only the learner knows how many features an example has).

Nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
)

SECTION = "functional-api"
_MAX_SHOWN = 200
_UNKNOWN_SIZE = re.compile(
    r"Shapes used to initialize variables must be fully-defined \(no `None` dimensions\)\. "
    r"Received: shape=\((?P<shape>[^)]*)\) for variable path='(?P<path>[^']*)'"
)
# Global pooling over the open axes, by the rank of the input Flatten was given.
_POOLING = {3: "GlobalAveragePooling1D", 4: "GlobalAveragePooling2D", 5: "GlobalAveragePooling3D"}


def _class_of(node: ast.AST) -> str | None:
    """``Flatten`` for ``layers.Flatten()`` / ``keras.layers.Flatten()`` / ``Flatten()``."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _scope_of(tree: ast.Module, line_number: int) -> ast.AST:
    """The innermost function around ``line_number`` in the frame's source, else the cell."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno <= line_number <= (node.end_lineno or node.lineno)
            and node.lineno >= getattr(scope, "lineno", 0)
        ):
            scope = node
    return scope


def _made_before(name: str, line: FailingLine) -> ast.Assign | None:
    """The last statement ``name = ...`` of the failing line's scope before that line."""
    tree, statement = line.frame.tree(), line.statement
    if tree is None or statement is None:
        return None
    found: ast.Assign | None = None
    for node in ast.walk(_scope_of(tree, statement.lineno)):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and node.lineno < statement.lineno
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found


def _declared(name: str, line: FailingLine) -> str | None:
    """``keras.Input((None, 3))`` when ``name`` was made by an ``Input`` call."""
    made = _made_before(name, line)
    if made is None or _class_of(made.value) != "Input":
        return None
    return line.frame.segment(made.value)


def _flattened(
    made: ast.Assign, line: FailingLine, context: ErrorContext
) -> tuple[str, Finding | None] | None:
    """Why a ``Flatten()(source)`` output has no known size, and the pooling fix."""
    value = made.value
    if not (
        isinstance(value, ast.Call)
        and _class_of(value.func) == "Flatten"
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Name)
    ):
        return None
    source_node = value.args[0]
    source = operand_of(source_node, line, context)
    shape = source.shape if source is not None else None
    if shape is None or len(shape) < 3 or None not in shape[1:]:
        return None
    flattened = line.frame.segment(value) or ""
    declared = _declared(source_node.id, line)
    where = f", declared by {code(declared)}" if declared else ""
    why = (
        f"{code(made.targets[0].id)} comes from {code(flattened)}: `Flatten` multiplies the "
        f"sizes of every axis after the batch, and {code(source_node.id)} is "
        f"{show_shape(shape)}{where}, with an axis of size None (any length), so the "
        "product is unknown"
    )
    pooling = _POOLING.get(len(shape))
    layer = value.func
    if pooling is None or not isinstance(layer, ast.Call) or layer.args or layer.keywords:
        return why, None
    module = (
        segment_of(line, layer.func.value) + "." if isinstance(layer.func, ast.Attribute) else ""
    )
    fixed = rewrite(line.frame, made, layer, f"{module}{pooling}()")
    if not fixed or "\n" in fixed or len(fixed) > _MAX_SHOWN:
        return why, None
    rule = (
        f"{why}. Pool over the open axis instead, which gives one value per feature "
        f"whatever the number of rows ({code(pooling)}; `GlobalMaxPooling` keeps the "
        "largest), or give that axis a size in the `Input` when every example has the same"
    )
    return rule, Finding("", code(fixed))


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or len(call.args) != 1:
        return None
    given = call.args[0]
    operand = operand_of(given, line, context)
    shape = operand.shape if operand is not None else None
    if operand is None or shape is None or len(shape) < 2 or shape[-1] is not None:
        return None
    layer = segment_of(line, call.func)
    given_source = segment_of(line, given)
    if not layer or not given_source:
        return None
    rule = (
        f"{code(layer)} makes its weights the first time it runs, sized by the last axis of "
        f"its input (the variable {code(error.group('path'))} of shape "
        f"({error.group('shape')}) in the message), and {code(given_source)} is "
        f"{operand.description}: its last axis has no known size (None), so the weights "
        "cannot be made"
    )
    if not isinstance(given, ast.Name):
        return Finding(rule + ".", None)
    made = _made_before(given.id, line)
    if made is None:
        return Finding(rule + ".", None)
    flattened = _flattened(made, line, context)
    if flattened is not None:
        why, fix = flattened
        return Finding(f"{rule}. {why}.", fix.fix if fix is not None else None)
    declared = _declared(given.id, line)
    if declared is not None:
        rule += (
            f". {code(declared)} declares that axis open: give it the number of features "
            "each example has"
        )
    return Finding(rule + ".", None)


UNKNOWN_WEIGHT_SIZE = ErrorFamily(
    "a layer's weights sized by an input axis of unknown size",
    messages=(Message(_UNKNOWN_SIZE),),
    read=_read,
    section=SECTION,
)
