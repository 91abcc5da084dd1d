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

A ``keras.Sequential([keras.Input((None, 3)), layers.Flatten(), layers.Dense(64)])`` fails
on the line that makes it (the model runs its layers as it is made): its list is read as
written, an ``Input`` declaring an open axis followed by ``Flatten()``, and fixed alike.

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

SECTION = "labels-and-loss"
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


def _declared_shape(node: ast.AST) -> tuple[int | None, ...] | None:
    """``(None, 3)`` for ``keras.Input((None, 3))`` or ``Input(shape=(None, 3))``: the
    sizes written as numbers and None."""
    if not isinstance(node, ast.Call) or _class_of(node) != "Input":
        return None
    written = node.args[0] if node.args else None
    for keyword in node.keywords:
        if keyword.arg == "shape":
            written = keyword.value
    if written is None:
        return None
    try:
        shape = ast.literal_eval(written)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if type(shape) is int:
        shape = (shape,)
    if type(shape) not in (tuple, list) or not all(
        size is None or type(size) is int for size in shape
    ):
        return None
    return tuple(shape)


def _sequential_flatten(error: Recognised, line: FailingLine) -> Finding | None:
    """``keras.Sequential([keras.Input((None, 3)), layers.Flatten(), layers.Dense(64)])``
    on the failing line: the model builds its layers as it is made, and the layer after
    ``Flatten`` cannot size its weights. Read from the list as written: the ``Input``, then
    ``Flatten()`` right after it."""
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not (
            _class_of(node) == "Sequential"
            and isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.List)
        ):
            continue
        items = node.args[0].elts
        for at in range(len(items) - 2):
            declared = _declared_shape(items[at])
            flatten = items[at + 1]
            if (
                declared is None
                or len(declared) < 2
                or None not in declared
                or _class_of(flatten) != "Flatten"
            ):
                continue
            after = _named_layer(items[at + 2 :], error.group("path"))
            return _sequential_finding(error, line, items[at], declared, flatten, after)
    return None


def _named_layer(items: list[ast.expr], path: str) -> ast.expr:
    """The layer the message's variable path names (``sequential/dense/kernel``: the first
    ``Dense``, or the layer given that ``name``), else the first after ``Flatten``."""
    parts = path.split("/")
    wanted = parts[-2] if len(parts) >= 2 else ""
    for item in items:
        for keyword in getattr(item, "keywords", []):
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                if keyword.value.value == wanted:
                    return item
    base = re.sub(r"_\d+$", "", wanted)
    for item in items:
        name = _class_of(item)
        if name and re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", name).lower() == base:
            return item
    return items[0]


def _sequential_finding(
    error: Recognised,
    line: FailingLine,
    given: ast.expr,
    declared: tuple[int | None, ...],
    flatten: ast.expr,
    after: ast.expr,
) -> Finding | None:
    written_input = line.frame.segment(given)
    written_flatten = line.frame.segment(flatten)
    written_after = line.frame.segment(after)
    if not written_input or not written_flatten or not written_after:
        return None
    rule = (
        f"{code(written_after)} makes its weights the first time it runs, sized by the last "
        f"axis of its input (the variable {code(error.group('path'))} of shape "
        f"({error.group('shape')}) in the message), and a `Sequential` model given an "
        "`Input` runs its layers in turn as it is made. Its input comes from "
        f"{code(written_flatten)}: `Flatten` multiplies the sizes of every axis after the "
        f"batch, and {code(written_input)} declares an axis of size None (any length), so "
        "the product is unknown"
    )
    pooling = _POOLING.get(len(declared) + 1)
    if pooling is None or declared[-1] is None or not isinstance(flatten, ast.Call):
        return Finding(rule + ".", None)
    if flatten.args or flatten.keywords:
        return Finding(rule + ".", None)
    func = flatten.func
    module = segment_of(line, func.value) + "." if isinstance(func, ast.Attribute) else ""
    replacement = f"{module}{pooling}()"
    rule += (
        ". Pool over the open axis instead, which gives one value per feature whatever the "
        f"number of rows ({code(pooling)}; `GlobalMaxPooling` keeps the largest), or give "
        "that axis a size in the `Input` when every example has the same"
    )
    statement = line.statement
    fixed = rewrite(line.frame, statement, flatten, replacement) if statement else None
    if fixed and "\n" not in fixed and len(fixed) <= _MAX_SHOWN:
        return Finding(rule + ".", code(fixed))
    return Finding(rule + ".", f"in place of {code(written_flatten)}, {code(replacement)}")


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    sequential = _sequential_flatten(error, line)
    if sequential is not None:
        return sequential
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
