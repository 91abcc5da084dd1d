"""Class scores given to Keras's plain ``Accuracy`` metric: one family (issue #25).

``keras.metrics.Accuracy`` counts how often ``y_pred`` EQUALS ``y_true``, element by
element: it wants predicted labels of the labels' shape. Given integer labels (N,) and
class scores (N, C), its ``equal`` meets shapes that cannot broadcast, and the message
(``Incompatible shapes: [N] vs. [N,C] [Op:Equal]``) reads as a broadcasting slip. A teacher
sees the metric's kind: scores against integer labels are ``SparseCategoricalAccuracy``'s
job (against one-hot labels, ``CategoricalAccuracy``'s), which takes the argmax itself.

Recognised by reading, for any error TensorFlow or Keras raised: the failing call is
``metric.update_state(labels, scores)`` (or ``metric(labels, scores)``) where ``metric``
holds Keras's ``Accuracy`` and ``scores`` has one more axis of C > 1 classes than integer
labels of the same length. (One-hot labels of the scores' shape raise nothing: the metric
then compares elements silently.) The fix rewrites the metric's assignment
(``origins.newest_assignment``) with the sparse metric; with no such assignment, the
call's metric is named in words.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    operand_of,
)
from jupyterlab_tfcoach.monitor.errors.origins import newest_assignment

SECTION = "labels-and-loss"
_INTEGER = ("int8", "int16", "int32", "int64", "uint8")


def _keras_accuracy(value: object) -> bool:
    cls = type(value)
    module = getattr(cls, "__module__", "")
    return (
        getattr(cls, "__name__", "") == "Accuracy"
        and type(module) is str
        and module.startswith("keras.")
    )


def _metric_call(line: FailingLine) -> tuple[ast.expr, ast.expr, ast.expr] | None:
    """(the metric's expression, y_true, y_pred) of ``m.update_state(a, b)`` / ``m(a, b)``."""
    call = line.call
    if not isinstance(call, ast.Call) or len(call.args) < 2 or call.keywords:
        return None
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "update_state":
        return func.value, call.args[0], call.args[1]
    if isinstance(func, (ast.Name, ast.Attribute)):
        return func, call.args[0], call.args[1]
    return None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    del error
    found = _metric_call(line)
    if found is None:
        return None
    metric_node, true_node, pred_node = found
    found_metric, metric = value_of(metric_node, line.frame, context)
    metric_source = line.frame.segment(metric_node)
    if not found_metric or not _keras_accuracy(metric) or not metric_source:
        return None
    labels, scores = operand_of(true_node, line, context), operand_of(pred_node, line, context)
    if labels is None or scores is None or labels.shape is None or scores.shape is None:
        return None
    if len(scores.shape) != 2 or scores.shape[-1] in (None, 1):
        return None
    classes = scores.shape[-1]
    sparse = (
        labels.shape[:1] == scores.shape[:1]
        and len(labels.shape) in (1, 2)
        and (len(labels.shape) == 1 or labels.shape[-1] == 1)
        and labels.dtype in _INTEGER
    )
    if not sparse:
        return None
    kind = "SparseCategoricalAccuracy"
    rule = (
        f"{code(metric_source)} is Keras's plain `Accuracy`, which counts how often the "
        f"prediction EQUALS the label, element by element: it wants predicted labels of the "
        f"labels' shape, and {code(scores.source)} holds {classes} class scores per example. "
        f"For scores against integer labels, `{kind}` takes the argmax of the scores itself"
    )
    made = (
        newest_assignment(metric_node.id, line.frame, context)
        if isinstance(metric_node, ast.Name)
        else None
    )
    value = made.assignment.value if made is not None else None
    if (
        made is None
        or not isinstance(value, ast.Call)
        or value.args
        or value.keywords
        or not isinstance(value.func, ast.Attribute)
        or value.func.attr != "Accuracy"
    ):
        return Finding(rule + ".", None)
    module = made.cell.segment(value.func.value)
    if not module:
        return None
    fixed = f"{metric_node.id} = {module}.{kind}()"
    made_by = f"{code(metric_source)} was made by {code(made.statement)} ({made.where}): "
    return Finding(made_by + rule + ".", code(fixed))


ACCURACY_OF_SCORES = ErrorFamily(
    "class scores given to the plain Accuracy metric",
    messages=(),
    read=_read,
    section=SECTION,
)
