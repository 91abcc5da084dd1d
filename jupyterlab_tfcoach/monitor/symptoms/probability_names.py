"""A value named for probabilities that holds a model's raw scores (logits).

A classifier whose last ``Dense`` has no activation outputs logits: any real numbers, rows
that do not sum to 1. ``p_avg = logits.mean(axis=0)  # average of the members'
probabilities`` (an ensemble), ``probs = model.predict(x)`` then read as confidences, a
log-loss of them: the learner reads the scores as probabilities, the log of a negative one
is NaN, a "confidence" of 3.7 means nothing. Nothing raises.

The symptom, read after a cell that completed (a cell without ``prob`` in its text costs
one regular-expression search): a name the cell assigns at its top level is named for
probabilities (its words ``prob``, ``probs``, ``proba``, ``probas``, ``probability``,
``probabilities``; or a name whose first word is ``p`` on a line whose comment says
probabilities; never a name holding ``log``, a log-probability), and it holds a float
array (or eager tensor) of at most ``MAX_ELEMENTS``
values with one below 0 or above 1. The cause is read from the expression that computed it
(names followed to their assignments in the cell): a call of a Keras model
(``m.predict(x)``, ``m.predict_on_batch(x)``, ``m(x)``; ``m`` a name, or the variable of a
comprehension over a list of models) whose last layer has no activation
(``loss_agreement.model_ending``), and which no softmax or sigmoid in the expression
already squashes (``probs = probs + tf.nn.softmax(m(x)).numpy()`` summed over passes is
probabilities added up, not logits). The fix applies the softmax (a sigmoid for one unit) to
the scores where they enter the statement: the name holding them, or the model's call
(``tf.nn.softmax(logits, axis=-1).numpy().mean(axis=0)``), when the cell's namespace holds
TensorFlow as ``tf``.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path

SECTION = "from-logits"
MAX_ELEMENTS = 2_000_000
WANTED = re.compile(r"(?i)prob")
_PROBABILITY_WORDS = frozenset({"prob", "probs", "proba", "probas", "probability", "probabilities"})
_PREDICTS = frozenset({"predict", "predict_on_batch"})
_RAW = (None, "linear")
_FOLLOW = 4
# Calls that turn scores into probabilities: a model call under one of them is squashed
# already, and a value outside [0, 1] comes from what the cell did with the probabilities
# (a sum over passes, a count), not from raw scores.
_SQUASHES = frozenset({"softmax", "sigmoid", "expit"})


def _named_for_probabilities(code: CellCode, name: str, line: int) -> bool:
    words = identifier_words(name)
    if "log" in name.lower():
        return False  # log-probabilities (``log_probs``) are negative by design
    if _PROBABILITY_WORDS.intersection(words):
        return True
    if not words or words[0] != "p":
        return False
    lines = code.source.split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    comment = text.split("#", 1)[1] if "#" in text else ""
    return "probabilit" in comment.lower()


def _outside_unit_range(value: Any) -> tuple[float, float] | None:
    array = held_array(value, MAX_ELEMENTS, ("float",))
    numpy = sys.modules.get("numpy")
    if array is None or numpy is None or array.size == 0:
        return None
    low, high = float(numpy.nanmin(array)), float(numpy.nanmax(array))
    return (low, high) if low < -1e-6 or high > 1 + 1e-6 else None


def _comprehension_lists(root: ast.AST) -> dict[str, ast.AST]:
    """Comprehension variables and what they walk: ``m`` -> ``models``."""
    found: dict[str, ast.AST] = {}
    for node in ast.walk(root):
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            for generator in node.generators:
                if isinstance(generator.target, ast.Name):
                    found[generator.target.id] = generator.iter
    return found


def _model_of(holder: ast.AST, walked: dict[str, ast.AST], namespace: dict[str, Any]) -> Any:
    if isinstance(holder, ast.Name) and holder.id in walked:
        found, listed = held_at(reference_path(walked[holder.id]), namespace)
        if not found or type(listed) not in (list, tuple) or not listed:
            return None
        return listed[0]
    found, model = held_at(reference_path(holder), namespace)
    return model if found else None


def _squashed_nodes(root: ast.AST) -> set[int]:
    """The ids of the nodes under the arguments of a softmax or sigmoid call in ``root``."""
    inside: set[int] = set()
    for node in ast.walk(root):
        if isinstance(node, ast.Call) and call_name(node) in _SQUASHES:
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                inside.update(id(n) for n in ast.walk(argument))
    return inside


def _raw_call(
    root: ast.AST, namespace: dict[str, Any]
) -> tuple[ast.Call, ast.AST, int, dict[str, ast.AST]] | None:
    """The call of a model with a raw last layer under ``root``, its holder, its units and
    the comprehension variables around it."""
    from jupyterlab_tfcoach.monitor.training.loss_agreement import model_ending

    walked = _comprehension_lists(root)
    squashed = _squashed_nodes(root)
    for node in ast.walk(root):
        if not isinstance(node, ast.Call) or id(node) in squashed:
            continue
        func = node.func
        holder = func.value if isinstance(func, ast.Attribute) and func.attr in _PREDICTS else func
        if isinstance(func, ast.Attribute) and func.attr not in _PREDICTS:
            continue
        model = _model_of(holder, walked, namespace)
        if model is None:
            continue
        try:
            ending = model_ending(model)
        except Exception:
            ending = None
        if ending is None or ending[0] not in _RAW or not ending[1]:
            continue
        return node, holder, int(ending[1]), walked
    return None


def _tf_module(namespace: dict[str, Any]) -> bool:
    module = namespace.get("tf")
    try:
        return type(module).__name__ == "module" and module.__dict__.get("__name__") == (
            "tensorflow"
        )
    except Exception:
        return False


def probability_name_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None or not _tf_module(namespace):
        return []
    for name, assignments in code.assigned.items():
        line, value = assignments[-1]
        if code.rebound_after((name,), line) or name not in namespace:
            continue
        if not _named_for_probabilities(code, name, line):
            continue
        span = _outside_unit_range(namespace[name])
        if span is None:
            continue
        note = _note(code, name, line, value, span, namespace)
        if note is not None:
            return [note]
    return []


def _entry(
    code: CellCode, value: ast.AST, line: int, namespace: dict[str, Any]
) -> tuple[ast.AST, ast.Call, ast.AST, int, dict[str, ast.AST]] | None:
    """Where the raw scores enter the statement (a name or the model's call), the call,
    the model's holder and its units."""
    found = _raw_call(value, namespace)
    if found is not None:
        return found[0], *found
    for node in ast.walk(value):
        if not isinstance(node, ast.Name):
            continue
        root: ast.AST | None = code.assignment_before(node.id, line)
        for _ in range(_FOLLOW):
            if root is None:
                break
            found = _raw_call(root, namespace)
            if found is not None:
                return node, *found
            inner = next((n for n in ast.walk(root) if isinstance(n, ast.Name)), None)
            root = code.assignment_before(inner.id, line) if inner is not None else None
    return None


def _note(
    code: CellCode,
    name: str,
    line: int,
    value: ast.AST,
    span: tuple[float, float],
    namespace: dict[str, Any],
) -> Note | None:
    entry = _entry(code, value, line, namespace)
    if entry is None:
        return None
    node, call, holder, units, walked = entry
    statement = next(
        (s for s in code.nodes if isinstance(s, ast.Assign) and s.lineno == line), None
    )
    entered, called, held = code.segment(node), code.segment(call), code.segment(holder)
    if statement is None or entered is None or called is None or held is None:
        return None
    entered_value = namespace.get(entered) if isinstance(node, ast.Name) else None
    numpy = sys.modules.get("numpy")
    as_numpy = (
        ".numpy()"
        if numpy is not None
        and (isinstance(entered_value, numpy.ndarray) or call_name(call) in _PREDICTS)
        else ""
    )
    squash = (
        f"tf.nn.softmax({entered}, axis=-1){as_numpy}"
        if units > 1
        else f"tf.math.sigmoid({entered}){as_numpy}"
    )
    fixed = code.replaced_in(statement, node, squash)
    if fixed is None:
        return None
    function = "softmax" if units > 1 else "sigmoid"
    shown = f"`{held}`"
    if isinstance(holder, ast.Name) and holder.id in walked:
        listed = code.segment(walked[holder.id])
        shown = f"`{held}` (each model of `{listed}`)" if listed else shown
    kind = "raw scores (logits)"
    text = (
        f"`{name}` is named for probabilities, but it holds values from {span[0]:.3g} to "
        f"{span[1]:.3g}: probabilities lie in [0, 1] (and a softmax's rows sum to 1). "
        f"`{called}` gives {kind}: the last layer of {shown} has no activation. Averaged, "
        f"compared or logged, they are not probabilities (the log of a negative one is "
        f"NaN). Nothing raises. Apply the {function} to the scores first (to each member's "
        f"output before an average). Fix: `{fixed}`."
    )
    return reports.note(text, SECTION)
