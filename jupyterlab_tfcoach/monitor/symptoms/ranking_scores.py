"""A ranking metric (ROC or PR AUC) fed 0/1 predictions made by a threshold.

AUC measures how well the scores rank positives above negatives over every threshold.
Given predictions already cut at one threshold (``(p >= thr).astype("float32")``,
``tf.round(p)``, ``tf.cast(tf.greater(p, 0.5), ...)``), every example is 0 or 1: the ROC
curve has a single operating point, and the "AUC" is the area under two straight lines
through it (balanced accuracy, for ROC), not the model's ranking quality. Nothing raises.

Found after a cell that completed (``cell_reading``: top-level calls, parsed once per
source): ``m.update_state(y, preds)`` or ``m(y, preds)`` where ``m`` holds a Keras ``AUC``
metric, and scikit-learn's ``roc_auc_score``/``average_precision_score`` called by name,
whose predictions argument is, or is a name assigned in the cell from, a threshold
comparison, ``greater``/``greater_equal`` or a ``round`` of a value that holds a float
tensor or array (the scores). The fix is the call with the scores in its place.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    unwrap,
    value_at,
)
from jupyterlab_tfcoach.monitor.syntax import held_at

SECTION = "labels-and-loss"
MAX_NOTES = 2
_RANKING_FUNCTIONS = frozenset({"roc_auc_score", "average_precision_score"})
_CALLED = frozenset({"update_state", *_RANKING_FUNCTIONS})
_CUTS = frozenset({"greater", "greater_equal", "less", "less_equal", "round", "rint"})


def _is_auc_metric(value: Any) -> bool:
    return any(
        cls.__name__ == "AUC" and cls.__module__.startswith("keras") and is_library_class(cls)
        for cls in class_mro(value)
    )


def _predictions(call: ast.Call, namespace: dict[str, Any]) -> ast.expr | None:
    """The predictions argument of a ranking metric's call, else None."""
    func = call.func
    name = call_name(call)
    owner: ast.expr | None = None
    if name == "update_state" and isinstance(func, ast.Attribute):
        owner = func.value
    elif isinstance(func, ast.Name) and name not in _RANKING_FUNCTIONS:
        owner = func
    if owner is not None:
        found, value = held_at(reference_path(owner), namespace)
        if not found or not _is_auc_metric(value):
            return None
    elif name not in _RANKING_FUNCTIONS:
        return None
    for keyword in call.keywords:
        if keyword.arg in ("y_pred", "y_score", "y_scores"):
            return keyword.value
    return call.args[1] if len(call.args) >= 2 else None


def _cut_scores(node: ast.AST) -> ast.expr | None:
    """The scores a threshold or round is applied to in ``node``, else None."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        if not isinstance(node.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
            return None
        left, right = node.left, node.comparators[0]
        return right if isinstance(left, ast.Constant) else left
    if isinstance(node, ast.Call) and call_name(node) in _CUTS and node.args:
        return node.args[0]
    return None


def ranking_score_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call):
            continue
        if call_name(node) not in _CALLED and not isinstance(node.func, ast.Name):
            continue  # neither update_state, a ranking function, nor a metric called
        predictions = _predictions(node, namespace)
        if predictions is None:
            continue
        scores = _cut_scores(code.origin(predictions, node.lineno))
        if scores is None:
            continue
        held = unwrap(scores)
        scores_text, held_text = code.segment(scores), code.segment(held)
        if scores_text is None or held_text is None or reference_path(held) is None:
            continue
        operand = value_at(held, namespace, held_text)
        if operand is None or not (operand.dtype or "").startswith(("float", "bfloat")):
            continue
        call_text, written = code.segment(node), code.segment(predictions)
        if call_text is None or written is None:
            continue
        start = predictions.col_offset - node.col_offset
        if predictions.lineno != node.lineno or call_text[start : start + len(written)] != written:
            continue
        fixed = call_text[:start] + scores_text + call_text[start + len(written) :]
        notes.append(
            reports.note(
                f"`{call_text}` (line {node.lineno} of this cell) gives the AUC predictions "
                f"already cut at a threshold (`{written}`): every example is 0 or 1, so the "
                "curve has a single operating point and the number only reflects that one "
                f"threshold, not how well `{held_text}` ({operand.description}) ranks "
                "positives above negatives, without any error. An AUC is computed from the "
                f"scores themselves: `{fixed}`.",
                SECTION,
            )
        )
    return notes
