"""A Keras probability metric given values that are not probabilities.

``keras.metrics.Precision``, ``Recall``, ``TruePositives`` (and the other counts) and
``BinaryAccuracy`` count a prediction as positive when it is above their threshold, 0.5
unless ``thresholds=``/``threshold=`` was given. ``AUC`` and the ``...AtRecall`` /
``...AtSensitivity`` family sweep thresholds between 0 and 1. Fed raw errors, distances or
logits (values below 0 or above 1), the threshold metrics decide "positive" by
``value > 0.5``, which is not the cut the learner chose, and the sweeping ones put every
value above 1 (or below 0) into one bucket, so ties replace the ranking. Nothing raises;
the figure does not describe the learner's predictions.

Found after a completed cell (``cell_reading``: top-level calls, parsed once per source):
``m.update_state(Y, V)`` or ``m(Y, V)`` (``y_pred=V`` too) where ``m`` holds a Keras metric
of those classes at its default setting (``init_thresholds`` None, ``threshold`` 0.5,
``_from_logits`` False: read from what the metric stores) and ``V`` is a name or attribute
chain, not bound again later in the cell, holding a float array or tensor of at most
``MAX_RANGE_ELEMENTS`` values whose smallest value is below 0 or largest above 1.

The fix keeps the metric and changes what it is given:

- a threshold metric: when the learner cut the same values elsewhere (``V > T`` in this
  cell or one of the last ``HISTORY_CELLS`` cells), the predictions cut at that ``T``
  (``m.update_state(Y, V > T)``: a bool counts as 0/1); else, for values of both signs
  (raw scores, logits: a score of 0 is a probability of 0.5), ``V > 0``; else at a name of
  the learner's that says it is a cut (``threshold``, ``cutoff``) holding a number between
  the values' extremes, when one such name is singled out; else (values from 0 up, such as
  errors) the cut is the learner's to choose and is asked for in words;
- a sweeping metric (AUC): ``tf.sigmoid(V)`` for values of both signs (what
  ``from_logits=True`` does), ``V / np.max(V)`` for values from 0 up: both keep the order of
  the values, which is all an AUC reads.

Silent: values within [0, 1], integer or bool values, a metric given its own threshold or
``from_logits=True``, a call whose predictions are an expression (not read).
"""

from __future__ import annotations

import ast
import sys
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, stored
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    value_at,
    value_range,
)
from jupyterlab_tfcoach.monitor.syntax import held_at, numpy_name, parsed_source, walk_nodes

SECTION = "from-logits"
MAX_NOTES = 2
HISTORY_CELLS = 12
HISTORY_CHARS = 20_000
# Float noise around a probability's bounds is not a value outside them.
_TOLERANCE = 1e-6
# Metrics that cut each prediction at one threshold (0.5 unless given).
_CUT_METRICS = frozenset(
    {
        "Precision",
        "Recall",
        "TruePositives",
        "FalsePositives",
        "TrueNegatives",
        "FalseNegatives",
        "BinaryAccuracy",
    }
)
# Metrics that sweep thresholds over [0, 1].
_SWEEP_METRICS = frozenset(
    {
        "AUC",
        "PrecisionAtRecall",
        "RecallAtPrecision",
        "SensitivityAtSpecificity",
        "SpecificityAtSensitivity",
    }
)


def _metric_kind(value: Any) -> tuple[str, bool] | None:
    """(class name, whether it sweeps thresholds rather than cutting at one) of a Keras
    metric left at its default threshold setting; None for anything else."""
    for cls in class_mro(value):
        if not (cls.__module__.startswith("keras") and is_library_class(cls)):
            continue
        if cls.__name__ in _CUT_METRICS:
            if cls.__name__ == "BinaryAccuracy":
                threshold = stored(value, "threshold", 0.5)
                default = type(threshold) in (float, int) and float(threshold) == 0.5
            else:
                default = stored(value, "init_thresholds", 0) is None
            return (type(value).__name__, False) if default else None
        if cls.__name__ in _SWEEP_METRICS:
            if stored(value, "_from_logits", False) is not False:
                return None
            if stored(value, "_init_from_thresholds", False):
                return None  # thresholds of the learner's own
            return type(value).__name__, True
    return None


def _predictions(call: ast.Call) -> tuple[ast.expr, ast.expr] | None:
    """(owner of the metric, predictions argument) of ``m.update_state(y, v)``/``m(y, v)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "update_state":
        owner: ast.expr = func.value
    elif isinstance(func, ast.Name | ast.Attribute) and call_name(call) != "update_state":
        owner = func
    else:
        return None
    for keyword in call.keywords:
        if keyword.arg == "y_pred":
            return owner, keyword.value
    if len(call.args) >= 2:
        return owner, call.args[1]
    return None


def _module_name(namespace: dict[str, Any], module: str) -> str | None:
    for name in ("tf", "tensorflow") if module == "tensorflow" else (module,):
        value = namespace.get(name)
        if isinstance(value, types.ModuleType) and value.__name__ == module:
            return name
    return None


def _learner_cut(code: CellCode, text: str, namespace: dict[str, Any]) -> str | None:
    """``V > T`` as the learner wrote it for the same values ``V`` (this cell first, then
    the newest earlier cell), when ``T`` is a number or a name holding one; else None."""
    history = namespace.get("In")
    sources = [code.source]
    if type(history) is list:
        for source in reversed(history[-HISTORY_CELLS:]):
            if type(source) is str and source != code.source and len(source) <= HISTORY_CHARS:
                sources.append(source)
    for source in sources:
        if text not in source or ">" not in source:
            continue
        tree = parsed_source(source)
        if tree is None:
            continue
        for node in walk_nodes(tree):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            if not isinstance(node.ops[0], ast.Gt | ast.GtE):
                continue
            if ast.get_source_segment(source, node.left) != text:
                continue
            bound = node.comparators[0]
            if isinstance(bound, ast.Constant):
                if type(bound.value) not in (int, float):
                    continue
            else:
                found, held = held_at(reference_path(bound), namespace)
                if not found or not _is_number(held):
                    continue
            cut = ast.get_source_segment(source, bound)
            if cut is None or "\n" in cut:
                continue
            return f"{text} {'>' if isinstance(node.ops[0], ast.Gt) else '>='} {cut}"
    return None


_CUT_WORDS = frozenset({"threshold", "thresh", "thr", "cutoff", "cut"})
MAX_NAMES = 5_000


def _named_cut(namespace: dict[str, Any], text: str, low: float, high: float) -> str | None:
    """A name of the learner's that says it is a cut (``threshold``, ``err_thresh``,
    ``cutoff``) holding one number between the values' extremes: the cut they chose even
    when no ``V > T`` was written yet. Of several, the one sharing a word with the values'
    name (``score_cut`` for ``score``); when that does not single one out, none (a wrong
    cut in a printed fix is worse than asking for it)."""
    found: list[str] = []
    for name, value in list(namespace.items())[:MAX_NAMES]:
        if type(name) is not str or name.startswith("_") or not _is_number(value):
            continue
        if not {word.lower() for word in name.split("_")} & _CUT_WORDS:
            continue
        if low < float(value) < high:
            found.append(name)
    words = {word.lower() for word in text.replace(".", "_").split("_") if word}
    sharing = [name for name in found if {w.lower() for w in name.split("_")} & words]
    if len(sharing) == 1:
        return sharing[0]
    return found[0] if len(found) == 1 else None


def _is_number(value: Any) -> bool:
    """A Python number or a NumPy scalar (what ``np.percentile`` returns)."""
    if type(value) in (int, float):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.integer | numpy.floating)


def _fix(
    code: CellCode,
    sweeps: bool,
    text: str,
    bounds: tuple[float, float],
    namespace: dict[str, Any],
) -> tuple[str | None, str]:
    """(the predictions to give instead, why); None when the cut is the learner's to choose."""
    low, high = bounds
    both_signs = low < -_TOLERANCE
    if not sweeps:
        cut = _learner_cut(code, text, namespace)
        if cut is not None:
            return cut, "the predictions cut where you cut them"
        if both_signs:
            return f"{text} > 0", (
                "raw scores cut at 0, which is where their probability is 0.5 "
                "(or give the metric probabilities)"
            )
        named = _named_cut(namespace, text, low, high)
        if named is not None:
            return f"{text} > {named}", f"the predictions cut at your `{named}`"
        return None, ""
    if both_signs:
        tf = _module_name(namespace, "tensorflow")
        if tf is None:
            return None, ""
        return f"{tf}.sigmoid({text})", (
            "the raw scores as probabilities, what `from_logits=True` does; the order of the "
            "values, all an AUC reads, stays the same"
        )
    np = numpy_name(namespace)
    if np is None:
        return None, ""
    return f"{text} / {np}.max({text})", (
        "the values scaled into [0, 1]; their order, all an AUC reads, stays the same"
    )


def probability_metric_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call) or len(node.args) + len(node.keywords) < 2:
            continue
        found = _predictions(node)
        if found is None:
            continue
        owner, predictions = found
        path = reference_path(owner)
        if path is None:
            continue
        held, metric = held_at(path, namespace)
        if not held:
            continue
        kind = _metric_kind(metric)
        if kind is None:
            continue
        pred_path = reference_path(predictions)
        text = code.segment(predictions)
        if pred_path is None or text is None or code.rebound_after(pred_path, node.lineno):
            continue
        operand = value_at(predictions, namespace, text)
        if operand is None:
            continue
        bounds = value_range(operand)
        if bounds is None:
            continue
        low, high = bounds
        if low >= -_TOLERANCE and high <= 1 + _TOLERANCE:
            continue
        call_text, owner_text = code.segment(node), code.segment(owner)
        if call_text is None or owner_text is None:
            continue
        class_name, sweeps = kind
        replacement, why = _fix(code, sweeps, text, (low, high), namespace)
        if not sweeps:
            threshold = (
                "its `threshold`, 0.5 by default"
                if class_name == "BinaryAccuracy"
                else "its `thresholds`, 0.5 by default"
            )
            effect = f"so here `{text} > 0.5` decides what counts as positive, not a cut you chose"
        else:
            threshold = "thresholds spread over [0, 1]"
            effect = (
                "so every value above 1 (or below 0) falls into the same bucket and those "
                "examples count as ties instead of being ranked"
            )
        text_out = (
            f"`{call_text}` (line {node.lineno} of this cell) gives the Keras {class_name} "
            f"`{owner_text}` `{text}` ({operand.description}), which runs from {low:.4g} to "
            f"{high:.4g}: not probabilities. The metric compares each prediction with "
            f"{threshold}, {effect}. Nothing raises; the figure does not describe your "
            "predictions. "
        )
        start = predictions.col_offset - node.col_offset
        if (
            replacement is not None
            and predictions.lineno == node.lineno
            and call_text[start : start + len(text)] == text
        ):
            fixed = call_text[:start] + replacement + call_text[start + len(text) :]
            text_out += f"Give it {why}. Fix: `{fixed}`."
        else:
            text_out += (
                f"Give it 0/1 predictions cut where a value of `{text}` means positive "
                f"(`{text} > cut`, with the cut you choose), or probabilities in [0, 1]."
            )
        notes.append(reports.note(text_out, SECTION))
    return notes
