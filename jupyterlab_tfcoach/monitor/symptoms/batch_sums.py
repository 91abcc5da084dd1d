"""A loss function that sums over the batch axis: its value grows with the batch size.

``tf.reduce_sum(kl, axis=0)`` on a ``(batch, latent)`` tensor, or
``tf.reduce_sum(keras.losses.binary_crossentropy(x, x_hat), axis=-1)`` (the Keras function
already averaged the features and returns one value per example), adds up the examples,
not the features: the loss of 64 examples is 8 times that of 8, and its weight against
another term changes with the batch size. Nothing raises.

Read by the first-call watch of ``call_broadcast.py``, at the return of the learner's
function the first time a cell calls it: the ``reduce_sum`` calls of its body with a
constant ``axis`` (``batch_sum_calls``, from its source), the operand a name (its value's
shape) or a ``keras.losses`` function of two names (the first one's shape without its last
axis); the batch size is the leading size every parameter of rank 2 or more shares. A sum
over axis 0 of such an operand, with that leading size (more than 1), in a function that
returns a scalar, gets a note naming the call and the fix: sum over the other axis, then
average over the batch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name

SECTION = "reducing-tensors"
_KERAS_PER_EXAMPLE = frozenset(
    {
        "binary_crossentropy",
        "categorical_crossentropy",
        "sparse_categorical_crossentropy",
        "mean_squared_error",
        "mean_absolute_error",
        "mse",
        "mae",
        "huber",
        "kl_divergence",
    }
)


@dataclass(frozen=True)
class BatchSum:
    text: str  # ``tf.reduce_sum(kl, axis=0)``
    line: int
    axis: int
    operand: str  # ``kl``, or the first argument of a keras.losses function
    per_example: bool  # the operand is a keras.losses function of ``operand``


def batch_sum_calls(source: str, body: list[ast.stmt]) -> list[BatchSum]:
    found: list[BatchSum] = []
    for statement in body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call) or call_name(node) != "reduce_sum":
                continue
            axis = next((k.value for k in node.keywords if k.arg == "axis"), None)
            if axis is None and len(node.args) > 1:
                axis = node.args[1]
            if isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub):
                value = axis.operand.value if isinstance(axis.operand, ast.Constant) else None
                axis_value = -value if type(value) is int else None
            else:
                value = axis.value if isinstance(axis, ast.Constant) else None
                axis_value = value if type(value) is int else None
            if axis_value is None or not node.args:
                continue
            operand = node.args[0]
            text = ast.get_source_segment(source, node)
            if text is None or "\n" in text:
                text = ast.unparse(node)
            if isinstance(operand, ast.Name):
                found.append(BatchSum(text, node.lineno, axis_value, operand.id, False))
            elif (
                isinstance(operand, ast.Call)
                and call_name(operand) in _KERAS_PER_EXAMPLE
                and ".losses." in f".{dotted_name(operand.func) or ''}"
                and len(operand.args) >= 2
                and isinstance(operand.args[0], ast.Name)
            ):
                found.append(BatchSum(text, node.lineno, axis_value, operand.args[0].id, True))
    return found


def batch_size(values: Any, parameters: list[str]) -> int | None:
    """The leading size every parameter of rank 2 or more shares (None if they differ)."""
    sizes = set()
    for name in parameters:
        if name not in values:
            continue
        described = describe(name, values[name])
        shape = described.shape if described is not None else None
        if shape is not None and len(shape) >= 2:
            sizes.add(shape[0])
    if len(sizes) != 1:
        return None
    size = next(iter(sizes))
    return size if type(size) is int and size > 1 else None


def summed_over_batch(found: BatchSum, values: Any, size: int) -> tuple[int, ...] | None:
    """The operand's shape when the sum runs over its batch axis, else None."""
    if found.operand not in values:
        return None
    described = describe(found.operand, values[found.operand])
    shape = described.shape if described is not None else None
    if shape is None or not shape:
        return None
    if found.per_example:
        shape = shape[:-1]  # the Keras function reduced the last axis
    if not shape or len(shape) > 2:
        return None
    axis = found.axis + len(shape) if found.axis < 0 else found.axis
    if axis != 0 or shape[0] != size:
        return None
    return tuple(shape)  # type: ignore[arg-type]


def batch_sum_text(found: BatchSum, shape: tuple[int, ...], where: str, function: str) -> str:
    if found.per_example:
        what = (
            f"the Keras loss function already averaged each example's features and returns "
            f"one value per example, {show_shape(shape)}, so `axis={found.axis}` adds up the "
            f"{shape[0]} examples"
        )
        fix = (
            "use the element-wise `keras.ops.binary_crossentropy` (one value per feature), "
            "sum it over `axis=-1`, then average over the batch with `tf.reduce_mean`"
            if "binary_crossentropy" in found.text
            else "average the per-example values over the batch with `tf.reduce_mean`"
        )
    else:
        other = 1 if len(shape) == 2 else None
        what = (
            f"`{found.operand}` is {show_shape(shape)}, one row per example, so "
            f"`axis={found.axis}` adds up the {shape[0]} examples"
        )
        fix = (
            f"sum each example's values and average over the batch: "
            f"`tf.reduce_mean(tf.reduce_sum({found.operand}, axis={other}))`"
            if other is not None
            else "average over the batch with `tf.reduce_mean`"
        )
    return (
        f"`{found.text}` ({where}, in `{function}`) sums over the batch axis: {what}. The "
        "loss then grows with the batch size (twice the examples, twice the loss) "
        f"and its weight against other terms changes with it, without any error. Instead, {fix}."
    )
