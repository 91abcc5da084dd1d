"""A probability threshold applied to raw scores (logits).

``preds = tf.cast(logits > 0.5, tf.float32)`` or ``tf.round(scores)`` turns probabilities
into 0/1 predictions. On the output of a layer without a sigmoid (any real number) the
cut at 0.5 is in the wrong place: a raw score of 0 is a probability of 0.5, so every
example scored between 0 and 0.5 is counted as a negative, and the accuracy computed
from those predictions is wrong without any error.

Found after a cell that completed, from its source (``cell_reading``, parsed once per
source) and what its names hold: a top-level ``x > t`` / ``x >= t`` / ``t < x`` /
``tf.greater(x, t)`` with a constant ``0 < t < 1``, or ``tf.round(x)`` / ``np.round(x)``,
where ``x`` is a name or attribute chain not bound again later in the cell, holding a
float tensor, variable or array of at most a million values with a value below 0 or
above 1 (read as its minimum and maximum, never shown). Only thresholds used as
predictions are told: the result is compared with something (``==``, ``tf.equal``) or
given to a metric (``accuracy_score``, ``update_state``), directly or through a name
assigned in the cell, or ``x`` was assigned in the cell from a model or a layer call,
``predict`` or a matrix product. A cut of data (``np.mean(readings > 0.5)``) stays silent.

The fix keeps the value's kind: the same comparison at the score whose sigmoid is ``t``
(``logits > 0.0`` for 0.5), or for a tensor ``tf.sigmoid(logits) > 0.5``; a round of
the sigmoid (``tf.round(tf.sigmoid(scores))``, ``np.round(1 / (1 + np.exp(-scores)))``).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    unwrap,
    value_at,
    value_kind_at,
    value_range,
)

SECTION = "from-logits"
MAX_NOTES = 2
_OPERATORS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}
_THRESHOLD_CALLS = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<="}
_ROUND_CALLS = frozenset({"round", "rint"})
# Calls that score predictions against labels.
_METRIC_CALLS = frozenset(
    {
        "accuracy_score",
        "f1_score",
        "precision_score",
        "recall_score",
        "confusion_matrix",
        "classification_report",
        "update_state",
    }
)
# Calls whose result is a model's raw output.
_SCORE_CALLS = frozenset({"predict", "predict_on_batch", "matmul", "dense"})


@dataclass(frozen=True)
class Threshold:
    """``x > t`` or a round of ``x``, as written."""

    node: ast.AST
    text: str
    operand: ast.expr  # as written: ``logits``, ``logits.numpy()``
    operand_text: str
    cut: float
    line: int
    # For a comparison: ``{0}`` for the operand, ``{1}`` for the cut, operator between.
    template: str | None
    round_module: str | None  # ``tf``, ``np`` for a round


def _cut(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = float(node.value)
        if 0.0 < value < 1.0:
            return value
    return None


def _threshold(code: CellCode, node: ast.AST) -> Threshold | None:
    operand: ast.expr | None = None
    cut: float | None = None
    template: str | None = None
    round_module: str | None = None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        symbol = _OPERATORS.get(type(node.ops[0]))
        left, right = node.left, node.comparators[0]
        if symbol is not None and _cut(right) is not None:
            operand, cut, template = left, _cut(right), "{0} " + symbol + " {1}"
        elif symbol is not None and _cut(left) is not None:
            operand, cut, template = right, _cut(left), "{1} " + symbol + " {0}"
    elif isinstance(node, ast.Call) and len(node.args) >= 1 and not node.keywords:
        name = call_name(node)
        func = node.func
        if name in _THRESHOLD_CALLS and len(node.args) == 2 and _cut(node.args[1]) is not None:
            operand, cut = node.args[0], _cut(node.args[1])
            template = "{0} " + _THRESHOLD_CALLS[name] + " {1}"
        elif name in _ROUND_CALLS and len(node.args) == 1 and isinstance(func, ast.Attribute):
            round_module = code.segment(func.value)
            operand, cut = node.args[0], 0.5
    if operand is None or cut is None or reference_path(unwrap(operand, reshapes=True)) is None:
        return None
    text, operand_text = code.segment(node), code.segment(operand)
    if text is None or operand_text is None:
        return None
    line = getattr(node, "lineno", 0)
    return Threshold(node, text, operand, operand_text, cut, line, template, round_module)


def _used_as_predictions(code: CellCode, found: Threshold) -> bool:
    """The result is compared with something or given to a metric, directly or through
    names assigned in the cell."""
    for node, left, right in code.comparisons():
        line = getattr(node, "lineno", 0)
        if found.node in (code.origin(left, line), code.origin(right, line)):
            return True
    for node in code.nodes:
        if isinstance(node, ast.Call) and call_name(node) in _METRIC_CALLS:
            line = getattr(node, "lineno", 0)
            if any(code.origin(argument, line) is found.node for argument in node.args):
                return True
    return False


def _scores_made_here(code: CellCode, found: Threshold, namespace: dict[str, Any]) -> bool:
    """``x`` was assigned in the cell from a model or layer call, ``predict`` or a
    matrix product (a bias added or not)."""
    held = unwrap(found.operand, reshapes=True)
    if not isinstance(held, ast.Name):
        return False
    value: ast.AST | None = code.assignment_before(held.id, found.line)
    while isinstance(value, ast.Subscript):  # ``net(x)[:, 0]``
        value = value.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        if isinstance(value.left, ast.BinOp) and isinstance(value.left.op, ast.MatMult):
            return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult):
        return True
    if isinstance(value, ast.Call):
        if call_name(value) in _SCORE_CALLS:
            return True
        return value_kind_at(value.func, namespace) in ("model", "layer")
    return False


def _logit(cut: float) -> str:
    """The raw score whose sigmoid is ``cut``, as code."""
    score = math.log(cut / (1.0 - cut))
    return "0.0" if abs(score) < 1e-12 else f"{score:.4g}"


def fixes(found: Threshold, kind: str) -> tuple[str, str | None]:
    """The threshold on raw scores, and (for a tensor) on their sigmoid."""
    operand = found.operand_text
    if found.round_module is not None:
        module = found.round_module
        if module.split(".")[0] in ("np", "numpy"):
            return f"{module}.round(1 / (1 + {module}.exp(-{operand})))", None
        return f"{module}.round(tf.sigmoid({operand}))", None
    assert found.template is not None
    cut_text = f"{found.cut:g}"
    on_scores = found.template.format(operand, _logit(found.cut))
    if kind == "array":
        return on_scores, None
    return on_scores, found.template.format(f"tf.sigmoid({operand})", cut_text)


def _candidates(code: CellCode) -> list[tuple[Threshold, bool]]:
    """The cell's thresholds and whether each is used as predictions (source only, kept
    with the parsed cell)."""
    found = code.memo.get("thresholds")
    if found is None:
        found = []
        for node in code.nodes:
            threshold = _threshold(code, node)
            if threshold is not None:
                found.append((threshold, _used_as_predictions(code, threshold)))
        code.memo["thresholds"] = found
    return found


def threshold_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    told: set[str] = set()
    for found, used in _candidates(code):
        if found.text in told:
            continue
        held = unwrap(found.operand, reshapes=True)
        path = reference_path(held)
        if path is None or code.rebound_after(path, found.line):
            continue
        held_text = code.segment(held) or found.operand_text
        operand = value_at(held, namespace, held_text)
        if operand is None:
            continue
        span = value_range(operand)
        if span is None or (0.0 <= span[0] and span[1] <= 1.0):
            continue
        if not (used or _scores_made_here(code, found, namespace)):
            continue
        told.add(found.text)
        # ``logits.numpy() > 0.5`` is NumPy code: its fix stays NumPy code.
        kind = operand.kind if held is found.operand else "array"
        text = _text(found, held_text, operand.description, span, kind)
        notes.append(reports.note(text, SECTION))
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _text(found: Threshold, held: str, described: str, span: tuple[float, float], kind: str) -> str:
    low, high = span
    outside = (
        "values below 0 and above 1"
        if low < 0.0 and high > 1.0
        else ("values below 0" if low < 0.0 else "values above 1")
    )
    on_scores, on_probabilities = fixes(found, kind)
    operand = found.operand_text
    if found.round_module is not None:
        what = f"rounds `{operand}` to 0 or 1 as if it held probabilities"
        where_wrong = "a raw score of 0.3 rounds to 0 while its probability is 0.57"
        fix = f"Round their probabilities instead: `{on_scores}`."
    else:
        what = f"cuts `{operand}` at {found.cut:g} as if it held probabilities"
        where_wrong = (
            f"a raw score of 0 is a probability of 0.5, and a cut at {found.cut:g} "
            "is in the wrong place"
        )
        fix = f"Cut the raw scores where the probability is {found.cut:g}: `{on_scores}`"
        if on_probabilities is not None:
            fix += f", or turn them into probabilities first: `{on_probabilities}`"
        fix += "."
    return (
        f"`{found.text}` (line {found.line} of this cell) {what}, but `{held}`, "
        f"{described}, has {outside}: raw scores (logits) from a layer without a sigmoid. "
        f"For such scores {where_wrong}: the predictions and any accuracy computed "
        f"from them are wrong, without any error. {fix}"
    )
