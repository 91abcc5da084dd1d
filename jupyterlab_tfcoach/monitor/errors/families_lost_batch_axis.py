"""One example given to a model or layer built on batches (issue #25): ``net(x_val[0])``
after ``net`` was trained on ``x_train`` of shape ``(N, 16)``.

The example has lost the batch axis, so every op inside the learner's own ``call``
(a ``tf.transpose(x, [1, 0, 2])``, a matmul, a reshape) meets a tensor one axis short and
fails there, deep in code that is right for batches; a fix read at that op (edit the
perm) would break the layer for real batches. This reading looks one level up, at the
running cell's line: when the error happened inside the learner's code that the line
called, and the line calls a built Keras model or layer with one positional argument
whose shape is the built input shape without its first axis, the argument is named as a
single example and given its batch axis back where it is written (``x_val[0]`` ->
``x_val[0:1]``, anything else ``arg[None]``), the layer left as it is.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    built_input_shape,
    describe,
    layer_input_shape,
    model_input_shapes,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised

# Module 2's section on the batch axis every Keras layer expects first.
SECTION = "batch-dimension"


def _built_shape(target: Any) -> tuple[int | None, ...] | None:
    shape = layer_input_shape(target)
    if shape is not None:
        return shape
    built = built_input_shape(target)
    if built is not None:
        return built
    shapes = model_input_shapes(target) if value_kind(target) == "model" else []
    return shapes[0] if len(shapes) == 1 else None


def _one_example(shape: tuple[int | None, ...], built: tuple[int | None, ...]) -> bool:
    """``shape`` is ``built`` without its first (batch) axis."""
    if len(shape) != len(built) - 1 or not shape:
        return False
    return all(b is None or s is None or s == b for s, b in zip(shape, built[1:], strict=True))


def _with_batch_axis(node: ast.expr, source: str) -> str:
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
        and node.slice.value >= 0
    ):
        base = source[: source.rfind("[")]
        index = node.slice.value
        return f"{base}[{index}:{index + 1}]" if index else f"{base}[:1]"
    atom = isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
    return f"{source}[None]" if atom else f"({source})[None]"


def _shape_of(node: ast.expr, frame: Any, context: ErrorContext) -> tuple[int | None, ...] | None:
    """The shape ``node`` holds; ``x[i]`` (a constant index) read as ``x``'s shape without
    its first axis, so no indexing runs."""
    index_dropped = (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    )
    target = node.value if isinstance(node, ast.Subscript) and index_dropped else node
    source = frame.segment(target)
    found, value = value_of(target, frame, context)
    if not found or not source:
        return None
    operand = describe(source, value)
    if operand is None or operand.shape is None:
        return None
    shape = tuple(operand.shape)
    if index_dropped:
        return shape[1:] if shape else None
    return shape


def _read_lost_batch_axis(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error  # recognised by the reading: any error inside the called code
    frames = context.frames()
    if len(frames) < 2 or frames[-1] is line.frame:
        return None
    outer = frames[-1]
    statement = outer.statement()
    if statement is None:
        return None
    for part in outer.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
                continue
            found, target = value_of(node.func, outer, context)
            if not found or value_kind(target) not in ("model", "layer"):
                continue
            built = _built_shape(target)
            argument = node.args[0]
            source = outer.segment(argument)
            shape = _shape_of(argument, outer, context) if source else None
            if built is None or shape is None or not source or not _one_example(shape, built):
                continue
            callee = outer.segment(node.func) or ""
            batched = _with_batch_axis(argument, source)
            rule = (
                f"{code(callee)} was built on batches {show_shape(built)}: its first axis "
                f"counts the examples. {code(source)} is {show_shape(shape)}, one "
                f"example without that axis, so the code it runs meets a tensor one axis "
                f"short and fails inside (where it is right for batches: leave it as it "
                f"is). Give it a batch of one, {code(batched)} "
                f"{show_shape((1, *shape))}"
            )
            fixed = rewrite(outer, statement, argument, batched)
            fix = code(fixed) if fixed and "\n" not in fixed else None
            return Finding(rule + ".", fix)
    return None


LOST_BATCH_AXIS = ErrorFamily(
    "one example given to a model built on batches",
    messages=(),
    read=_read_lost_batch_axis,
    section=SECTION,
)
