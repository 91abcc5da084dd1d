"""A training loss summed over the batch where the learning rate was meant for a mean.

``loss = tf.reduce_sum(tf.square(y - pred))`` (or a Keras loss built with
``reduction="sum"``) adds up the batch's per-example losses: its gradient is the batch
size times the mean's, so every step of an optimizer tuned for a mean is that many times
too large. Nothing raises; the loss grows from step to step and ends as inf or nan.

Told only on the symptom: the ``tape.gradient`` hook samples a call site's scalar target
at calls 1, 2, 4, 8, ... (``training_symptoms``: one read of a scalar per sample, so a
loop of n steps pays log2(n) reads), and the samples show the loss going non-finite or
ending more than twice as large as it started. The cause is then read from the code that
called ``tape.gradient`` (``training_causes.parse_scope``): the target's last assignment
before the call is ``tf.reduce_sum(...)`` over every axis (no ``axis``, or ``axis=0``),
or a call of a name holding a Keras loss whose stored ``reduction`` is ``"sum"``. The note
names the statement, the samples, the batch size when a name in the sum holds the batch,
and gives the statement with ``reduce_mean`` (or the loss built with
``reduction="sum_over_batch_size"``), or the learning rate divided by the batch size.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.errors.context import instance_attribute
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import value_at
from jupyterlab_tfcoach.monitor.variables import training_causes as causes

SECTION = "gradient-tape"
GROWTH = 2.0  # the last sample past this many times the first: the loss grew


@dataclass(frozen=True)
class SummedLoss:
    statement: str  # ``loss = tf.reduce_sum(tf.square(y - pred))``
    fix: str  # the statement reducing with a mean
    batch: int | None  # the batch size, when a name in the sum holds the batch
    kind: str  # "reduce_sum" or "reduction"


def diverged(samples: list[tuple[int, float]]) -> str | None:
    """How the sampled losses show divergence (``"went from 3.2 at step 1 to nan at step
    16"``), or None."""
    if len(samples) < 2:
        return None
    first_step, first = samples[0]
    last_step, last = samples[-1]
    if not math.isfinite(first):
        return None
    if not math.isfinite(last):
        finite = [(s, v) for s, v in samples if math.isfinite(v)]
        step, value = finite[-1]
        return (
            f"went from {first:.4g} at step {first_step} to {value:.4g} at step {step}, "
            f"and was {last} at step {last_step}"
        )
    if first > 0 and last > GROWTH * first:
        return f"grew from {first:.4g} at step {first_step} to {last:.4g} at step {last_step}"
    return None


def _segment(source: str, node: ast.AST) -> str | None:
    try:
        return ast.get_source_segment(source, node)
    except Exception:
        return None


def _over_the_batch(call: ast.Call) -> bool:
    """``tf.reduce_sum(x)`` or ``tf.reduce_sum(x, axis=0)``: the batch axis is summed."""
    axis: ast.expr | None = call.args[1] if len(call.args) >= 2 else None
    for keyword in call.keywords:
        if keyword.arg == "axis":
            axis = keyword.value
    if axis is None:
        return True
    return isinstance(axis, ast.Constant) and axis.value in (0, None)


def _batch_size(node: ast.AST, namespace: Mapping[str, Any]) -> int | None:
    """The first axis of a tensor or array a name in ``node`` holds after the cell."""
    for name in ast.walk(node):
        if not isinstance(name, ast.Name) or name.id not in namespace:
            continue
        held = value_at(name, dict(namespace), name.id)
        if held is None or held.kind == "variable" or not held.shape:
            continue
        size = held.shape[0]
        if type(size) is int and size > 1:
            return size
    return None


def summed_loss(
    scope: causes.Scope, call: causes.GradientCall, namespace: Mapping[str, Any]
) -> SummedLoss | None:
    """The loss statement that sums over the batch, from the code that called
    ``tape.gradient``; None when the loss is reduced some other way or is not found."""
    if not call.target.isidentifier():
        return None
    statement = last_assignment(scope.tree, call.target, call.line)
    if statement is None or not isinstance(statement.value, ast.Call):
        return None
    text = _segment(scope.source, statement)
    value = statement.value
    if text is None or "\n" in text:
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name == "reduce_sum" and value.args and _over_the_batch(value):
        func_text = _segment(scope.source, func)
        if func_text is None:
            return None
        mean = func_text[: -len("reduce_sum")] + "reduce_mean"
        fixed = text.replace(func_text, mean, 1)
        batch = _batch_size(value.args[0], namespace)
        return SummedLoss(text, fixed, batch, "reduce_sum")
    if isinstance(func, ast.Name) and func.id in namespace:
        found, reduction = instance_attribute(namespace[func.id], "reduction")
        if found and reduction == "sum":
            batch = _batch_size(value, namespace)
            return SummedLoss(text, "", batch, "reduction")
    return None


def summed_loss_note_text(
    call: causes.GradientCall,
    at: str,
    how: str,
    summed: SummedLoss,
    rate: str,
) -> str:
    batch = f"{summed.batch}" if summed.batch else "the batch size"
    head = (
        f"The loss {how} (`{call.target}` given to `{call.tape}.gradient`, {at}): training "
        f"diverges. `{summed.statement}` "
    )
    if summed.kind == "reduce_sum":
        cause = (
            "sums the per-example losses over the whole batch, so its gradient, and every "
            f"step, is {batch} times that of the mean loss a learning rate is usually "
            "tuned for. Average over the batch instead: "
            f"`{summed.fix}` (or divide the learning rate `{rate}` by {batch})."
        )
    else:
        cause = (
            'calls a Keras loss built with `reduction="sum"`: it sums over the batch, so '
            f"every step is {batch} times that of the mean loss a learning rate is usually "
            'tuned for. Build it with `reduction="sum_over_batch_size"` (the default), or '
            f"divide the learning rate `{rate}` by {batch}."
        )
    return head + cause
