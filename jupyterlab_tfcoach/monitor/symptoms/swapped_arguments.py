"""A Keras loss or metric given the model's outputs first and the labels second.

Every Keras loss and metric takes ``(y_true, y_pred)``. Written the other way round,
``loss_fn(preds, y)``, ``keras.losses.BinaryCrossentropy()(probs, labels)`` or
``metric.update_state(preds, labels)``, most classification losses and metrics raise
nothing on TensorFlow 2.21 / Keras 3.15 (probed): a cross-entropy clips every 0 of the
labels, now read as predictions, to 1e-7 and gives a large number whatever the model
does; ``BinaryAccuracy`` and ``AUC`` fall to 0; ``Precision`` counts recall and
``Recall`` precision; ``SparseCategoricalAccuracy`` gives 1.0. (The sparse losses raise
on the shapes instead, and losses that treat both sides alike, such as ``mse`` or
``CategoricalAccuracy``, give the same number either way: not told.)

Established from values, not names, after a cell that completed (``cell_reading``: the
cell's top-level calls, parsed once per source): a call of a name holding a Keras
``Loss`` or ``Metric`` (its library class's name in ``_ASYMMETRIC``), its
``update_state``, a loss or metric built in the call itself, or a ``keras.losses`` /
``keras.metrics`` function, with two positional arguments where the second (``y_pred``'s
place) holds labels: an integer or boolean array, or floats that are all whole numbers
(class numbers or one-hot rows), while the first (``y_true``'s place) is a model's output:
a model or layer call written there, or a float value with fractions in it. The note names
the call, both values and what the number means now, and gives the call with the
arguments in order.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    numpy_values,
    reference_path,
    unwrap,
    value_at,
    value_kind_at,
)
from jupyterlab_tfcoach.monitor.syntax import held_at

SECTION = "labels-and-loss"
MAX_NOTES = 2
MAX_ELEMENTS = 1_000_000
# Library classes (and functions) whose result changes when the two are swapped.
_ASYMMETRIC = re.compile(
    r"crossentropy|accuracy|precision|recall|auc|kldivergence|kl_divergence|focal|hinge"
    r"|f1score|fbetascore|sensitivity|specificity|true|false|poisson",
    re.IGNORECASE,
)
# Symmetric in practice: the same number either way round.
_SYMMETRIC = frozenset({"accuracy", "categoricalaccuracy", "categorical_accuracy"})
_KERAS_PARTS = ("keras.src.losses", "keras.src.metrics")
_MODEL_CALLS = frozenset({"predict", "predict_on_batch"})
_MISSING = object()


@dataclass(frozen=True)
class KerasScorer:
    """What a call scores with: ``BinaryCrossentropy`` (a class), ``binary_accuracy``."""

    name: str
    is_metric: bool


def _library_class(value: Any) -> type | None:
    for cls in class_mro(value):
        if is_library_class(cls) and cls.__module__.startswith(_KERAS_PARTS):
            return cls
    return None


def _scorer_of_object(value: Any) -> KerasScorer | None:
    cls = _library_class(value)
    if cls is None:
        return None
    return KerasScorer(cls.__name__, cls.__module__.startswith("keras.src.metrics"))


def _scorer_of_function(value: Any) -> KerasScorer | None:
    module = getattr(type(value), "__module__", None)
    if module != "builtins" or type(value).__name__ != "function":
        return None
    own = getattr(value, "__module__", None)
    name = getattr(value, "__name__", None)
    if type(own) is not str or type(name) is not str or not own.startswith(_KERAS_PARTS):
        return None
    return KerasScorer(name, own.startswith("keras.src.metrics"))


def _held_anywhere(path: tuple[str, ...] | None, namespace: dict[str, Any]) -> tuple[bool, Any]:
    """``held_at``, and through plain modules too (``keras.losses.BinaryCrossentropy``):
    a module's own dictionary, never a lazy loader's attribute hook."""
    if path is None or path[0] not in namespace:
        return False, None
    value = namespace[path[0]]
    if type(value) is not types.ModuleType:
        return held_at(path, namespace)
    for attribute in path[1:]:
        if type(value) is not types.ModuleType:
            return False, None
        value = vars(value).get(attribute, _MISSING)
        if value is _MISSING:
            return False, None
    return True, value


def _scorer(call: ast.Call, namespace: dict[str, Any]) -> KerasScorer | None:
    """The Keras loss or metric a call scores with: ``loss_fn(a, b)``,
    ``acc.update_state(a, b)``, ``keras.losses.BinaryCrossentropy()(a, b)``,
    ``keras.losses.binary_crossentropy(a, b)``."""
    func = call.func
    scorer: KerasScorer | None = None
    if isinstance(func, ast.Attribute) and func.attr == "update_state":
        found, value = held_at(reference_path(func.value), namespace)
        scorer = _scorer_of_object(value) if found else None
        if scorer is not None and not scorer.is_metric:
            scorer = None
    elif isinstance(func, ast.Call):  # keras.losses.BinaryCrossentropy()(a, b)
        found, value = _held_anywhere(reference_path(func.func), namespace)
        if found and isinstance(value, type) and value.__module__.startswith(_KERAS_PARTS):
            scorer = KerasScorer(value.__name__, value.__module__.startswith(_KERAS_PARTS[1]))
    else:
        found, value = _held_anywhere(reference_path(func), namespace)
        if found:
            scorer = _scorer_of_object(value) or _scorer_of_function(value)
    if scorer is None:
        return None
    if scorer.name.lower() in _SYMMETRIC or not _ASYMMETRIC.search(scorer.name):
        return None
    return scorer


def _numbers(operand: Operand) -> Any:
    """A NumPy copy of a tensor, variable or array of at most ``MAX_ELEMENTS`` values."""
    return numpy_values(operand, MAX_ELEMENTS)


def _labels(operand: Operand) -> str | None:
    """``"class numbers"`` / ``"one-hot rows"`` / ``"0/1 labels"`` when the values are
    labels; None otherwise."""
    numpy = sys.modules.get("numpy")
    values = _numbers(operand)
    if numpy is None or values is None:
        return None
    dtype = (operand.dtype or "").lower()
    if dtype.startswith(("float", "bfloat", "half")):
        if not bool(numpy.all(numpy.isfinite(values))):
            return None
        if not bool(numpy.all(values == numpy.round(values))):
            return None
    elif not dtype.startswith(("int", "uint", "bool")):
        return None
    low, high = float(numpy.min(values)), float(numpy.max(values))
    if low < 0:
        return None
    if high <= 1 and values.ndim >= 2 and values.shape[-1] > 1:
        if bool(numpy.all(values.sum(axis=-1) == 1)):
            return "one-hot rows"
    if high <= 1:
        return "0/1 labels"
    return "class numbers"


def _outputs(operand: Operand) -> tuple[float, float] | None:
    """The lowest and highest value of a float value with fractions in it (a model's
    outputs: probabilities or raw scores); None for anything else."""
    numpy = sys.modules.get("numpy")
    dtype = (operand.dtype or "").lower()
    if not dtype.startswith(("float", "bfloat", "half")):
        return None
    values = _numbers(operand)
    if numpy is None or values is None:
        return None
    finite = values[numpy.isfinite(values)]
    if finite.size == 0 or bool(numpy.all(finite == numpy.round(finite))):
        return None
    return float(numpy.min(finite)), float(numpy.max(finite))


def _model_call(node: ast.AST, namespace: dict[str, Any]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    if call_name(node) in _MODEL_CALLS:
        return True
    return value_kind_at(node.func, namespace) in ("model", "layer")


def _meaning(scorer: KerasScorer, first: str, second: str) -> str:
    name = scorer.name.lower()
    if "precision" in name and "recall" not in name:
        return (
            f"with `{second}` in the place of the predictions it counts how many of the "
            "true positives the model found: that is recall, not precision"
        )
    if "recall" in name and "precision" not in name:
        return (
            f"with `{second}` in the place of the predictions it counts how many of the "
            "predicted positives are right: that is precision, not recall"
        )
    if "crossentropy" in name and "focal" not in name:
        return (
            f"Keras reads the labels `{second}` as the predictions: each 0 among them is "
            "clipped to 1e-7 before its log, so the number is not the cross-entropy of "
            f"`{first}`: it is about 16 (-log 1e-7) times the share of `{first}` on the "
            "wrong answers, large whatever the model predicts and not comparable with "
            "any loss Keras reports"
        )
    return (
        f"Keras compares the labels `{second}`, taken as predictions, with `{first}`, "
        "taken as the true values: the number does not measure the model's predictions"
    )


def _swapped_call(code: CellCode, call: ast.Call) -> str | None:
    func = code.segment(call.func)
    first, second = code.segment(call.args[0]), code.segment(call.args[1])
    if func is None or first is None or second is None:
        return None
    rest = [code.segment(node) for node in call.args[2:]]
    rest += [code.segment(keyword) for keyword in call.keywords]
    if any(part is None for part in rest):
        return None
    return f"{func}({', '.join([second, first, *(r for r in rest if r is not None)])})"


def _candidates(code: CellCode) -> list[ast.Call]:
    found: list[ast.Call] | None = code.memo.get("swapped_calls")
    if found is None:
        found = code.memo["swapped_calls"] = [
            node
            for node in code.nodes
            if isinstance(node, ast.Call)
            and len(node.args) >= 2
            and not any(k.arg in ("y_true", "y_pred") for k in node.keywords)
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ]
    return found


def _held(code: CellCode, node: ast.AST, line: int, namespace: dict[str, Any]) -> Operand | None:
    held = unwrap(node)
    path = reference_path(held)
    if path is None or code.rebound_after(path, line):
        return None
    text = code.segment(held)
    return value_at(held, namespace, text) if text is not None else None


def swapped_argument_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for call in _candidates(code):
        line = call.lineno
        second = _held(code, call.args[1], line, namespace)
        if second is None:
            continue
        labels = _labels(second)
        if labels is None:
            continue
        scorer = _scorer(call, namespace)
        if scorer is None:
            continue
        first_node = call.args[0]
        made_here = _model_call(first_node, namespace) or _model_call(
            code.origin(first_node, line), namespace
        )
        first = _held(code, first_node, line, namespace)
        span = _outputs(first) if first is not None else None
        if span is None and not made_here:
            continue
        if first is not None and first.shape and second.shape:
            if first.shape[0] is not None and second.shape[0] not in (None, first.shape[0]):
                continue
        text = _text(code, call, scorer, first, second, labels, span)
        if text is not None:
            notes.append(reports.note(text, SECTION))
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _text(
    code: CellCode,
    call: ast.Call,
    scorer: KerasScorer,
    first: Operand | None,
    second: Operand,
    labels: str,
    span: tuple[float, float] | None,
) -> str | None:
    call_text = code.segment(call)
    first_text = code.segment(call.args[0])
    second_text = code.segment(call.args[1])
    fixed = _swapped_call(code, call)
    if None in (call_text, first_text, second_text, fixed):
        return None
    assert first_text is not None and second_text is not None
    if first is not None and span is not None:
        low, high = span
        outputs = (
            f"`{first_text}`, {first.description} with values from {low:.3g} to {high:.3g}, "
            "is the model's output"
        )
    else:
        outputs = f"`{first_text}` is the model's output"
    what = "metric" if scorer.is_metric else "loss"
    return (
        f"`{call_text}` (line {call.lineno} of this cell) gives the {what} "
        f"`{scorer.name}` its arguments the wrong way round: Keras takes `(y_true, y_pred)`, "
        f"the labels first. Here {outputs}, and `{second_text}`, {second.description}, "
        f"holds {labels}. Nothing raises, but "
        f"{_meaning(scorer, first_text, second_text)}. Put the labels first: `{fixed}`."
    )
