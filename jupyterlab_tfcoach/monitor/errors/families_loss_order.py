"""A Keras loss called with predictions first and labels second: one family (issue #25).

Every Keras loss (and metric function) is called ``loss(y_true, y_pred)``. A custom
training step written ``loss_fn(logits, labels)`` hands the scores over as the labels and
the labels as the scores; a sparse loss then raises about ranks (``Argument `output` must
have rank (ndim) `target.ndim - 1`. Received: target.shape=(32, 3), output.shape=(32,)``),
which reads as if the model's output had the wrong shape.

Read from the failing line, for an error raised through the library: a call of a Keras
loss (an object of a ``keras.losses.Loss`` class, or a function of Keras's losses or
metrics modules, read without calling anything) with its first two arguments positional,
the first holding what predictions look like (a float array or tensor of rank 2 or more,
more than one column) and the second what labels look like (integers, or one value per
example), with the same number of examples when both are known. The fix is the call with
the two swapped, the rest of its arguments kept.
"""

from __future__ import annotations

import ast
from types import FunctionType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, class_mro, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    Operand,
    describe,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.families_norm_axes import through_modules
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    raised_through_library,
)
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

SECTION = "labels-and-loss"
_VALUE_KINDS = ("tensor", "array", "variable", "keras_variable")
_LOSS_MODULES = ("keras.src.losses", "keras.src.metrics")


def _is_keras_loss(value: Any) -> bool:
    """A Keras loss object, or one of Keras's loss and metric functions."""
    if type(value) is FunctionType:
        module = value.__module__
        return type(module) is str and module.startswith(_LOSS_MODULES)
    loss_class = loaded_class("keras.src.losses.loss", "Loss")
    return loss_class is not None and loss_class in class_mro(value)


def _operand(node: ast.expr, line: FailingLine, context: ErrorContext) -> Operand | None:
    source = line.frame.segment(node)
    if not source or "\n" in source:
        return None
    found, value = value_of(node, line.frame, context)
    described = describe(source, value) if found else None
    if described is None or described.kind not in _VALUE_KINDS:
        return None
    return described


def _looks_like_scores(operand: Operand) -> bool:
    shape, dtype = operand.shape, operand.dtype or ""
    return (
        dtype.startswith(("float", "bfloat", "half"))
        and shape is not None
        and len(shape) >= 2
        and (shape[-1] or 0) > 1
    )


def _looks_like_labels(operand: Operand, scores: Operand) -> bool:
    shape, dtype = operand.shape, operand.dtype or ""
    if shape is None or scores.shape is None:
        return False
    if not (dtype.startswith(("int", "uint")) or len(shape) == 1):
        return False
    if len(shape) >= len(scores.shape) and not (len(shape) == len(scores.shape) and shape[-1] == 1):
        return False
    first, examples = (shape[0] if shape else None), scores.shape[0]
    return first is None or examples is None or first == examples


def _loss_calls(line: FailingLine, context: ErrorContext) -> list[ast.Call]:
    calls = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args[:2]):
                continue
            found, callee = value_of(node.func, line.frame, context)
            if not found:
                callee = through_modules(node.func, line, context)
            if callee is not None and _is_keras_loss(callee):
                calls.append(node)
    return calls


def _read_loss_order(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if not raised_through_library(context, error.parsed):
        return None
    calls = _loss_calls(line, context)
    if len(calls) != 1:
        return None
    call = calls[0]
    first, second = call.args[0], call.args[1]
    scores, labels = _operand(first, line, context), _operand(second, line, context)
    if scores is None or labels is None:
        return None
    if not _looks_like_scores(scores) or not _looks_like_labels(labels, scores):
        return None
    callee = line.frame.segment(call.func)
    written = line.frame.segment(call)
    if not callee or not written or "\n" in written:
        return None
    rule = (
        f"A Keras loss is called {code(callee + '(y_true, y_pred)')}: the labels first, then "
        f"the predictions. Here the first argument, {code(scores.source)}, is "
        f"{scores.description} (one score per class: predictions) and the second, "
        f"{code(labels.source)}, is {labels.description} (labels), so the loss read the "
        "scores as the labels and the labels as the predictions: swap them"
    )
    rest = [line.frame.segment(node) for node in [*call.args[2:], *call.keywords]]
    if any(not part or "\n" in part for part in rest):
        return Finding(rule + ".", None, section=SECTION)
    arguments = ", ".join([labels.source, scores.source, *[p for p in rest if p]])
    statement = line.statement
    swapped = f"{callee}({arguments})"
    fixed = rewrite(line.frame, statement, call, swapped) if statement is not None else None
    fix = code(fixed) if fixed and "\n" not in fixed else code(swapped)
    return Finding(rule + ".", fix, section=SECTION)


LOSS_ORDER = ErrorFamily(
    "a Keras loss given the predictions first and the labels second",
    messages=(),
    read=_read_loss_order,
    section=SECTION,
)
