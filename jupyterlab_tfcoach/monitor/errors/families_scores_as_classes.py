"""Scores given where a call takes class numbers (issue #25):
``tf.math.confusion_matrix(y_val, logits)`` with ``logits`` of shape (N, C), one score
per class for each example, where the call takes one class number per example.

TensorFlow's message speaks of what it met (``predictions contains negative values``,
two shapes that differ), never of the scores. Recognised by reading, for any error raised
on a ``confusion_matrix`` line: one of labels and predictions holds N values and the
other an (N, C) array or tensor with C > 1; the fix takes the class with the highest
score, ``tf.argmax(scores, axis=-1)``, in the learner's line (for either argument: one-hot
labels are read the same way).
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    operand_of,
    tf_alias,
)

SECTION = "class-axis"
_CALLS = ("confusion_matrix",)
_PARAMETERS = ("labels", "predictions")


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    if len(call.args) > position and not isinstance(call.args[position], ast.Starred):
        return call.args[position]
    return None


def _is_argmax(node: ast.expr | None) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "argmax"


def _read_scores_as_classes(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error  # recognised by the reading
    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None:
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _CALLS:
        return None
    nodes = [_argument(call, i, keyword) for i, keyword in enumerate(_PARAMETERS)]
    if any(node is None for node in nodes):
        return None
    operands = [operand_of(node, line, context) for node in nodes if node is not None]
    shapes: list[tuple[int | None, ...] | None] = [
        tuple(o.shape) if o is not None and o.shape is not None else None for o in operands
    ]
    for i, node in enumerate(nodes):
        other = shapes[1 - i]
        if shapes[i] is None and _is_argmax(node) and other is not None and len(other) == 2:
            shapes[i] = other[:1]  # an argmax written in the call: one class per example
    if any(shape is None for shape in shapes):
        return None
    ranks = [len(shape) if shape is not None else 0 for shape in shapes]
    if sorted(ranks) != [1, 2]:
        return None
    wide = ranks.index(2)
    scores, other = shapes[wide], shapes[1 - wide]
    if scores is None or other is None or scores[0] != other[0] or (scores[1] or 0) < 2:
        return None
    node = nodes[wide]
    scored = operands[wide]
    if node is None or scored is None:
        return None
    tf = tf_alias(context)
    picked = f"{tf}.argmax({scored.source}, axis=-1)"
    rule = (
        f"`{name}` takes one class number per example for `{_PARAMETERS[wide]}`, and "
        f"{code(scored.source)} is {scored.description}: {scores[1]} scores per example, one "
        f"per class. The class is the one with the highest score, {code(picked)} "
        f"({scores[0]} class numbers)"
    )
    fixed = rewrite(line.frame, line.statement, node, picked)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


SCORES_AS_CLASSES = ErrorFamily(
    "scores given where a call takes class numbers",
    messages=(),
    read=_read_scores_as_classes,
    section=SECTION,
)
