"""Predictions on a centred (or standardised) scale compared with the raw targets.

A model fitted to ``y_c = y - y_mean`` (or ``(y - y_mean) / y_std``) predicts on that scale:
its outputs must be given the training statistics back (``pred + y_mean``,
``pred * y_std + y_mean``) before they are compared with targets on the original scale.
Without it, an error or metric computed from the two mostly measures the offset, and a
plot of the predictions sits below (or above) the data. Nothing raises.

After a completed cell holding a subtraction, each error it computes is read with ``ast``:
a difference ``a - b`` squared, given to ``abs``/``square`` (NumPy, TensorFlow, Keras ops)
or a metric call ``mean_squared_error(b, a)`` (a name with ``error`` or ``mse``/``mae``/
``rmse``/``r2_score``), both operands names holding float arrays of one shape (NumPy or
eager tensors, more than ``MIN_VALUES`` values). A statistic is a name of the namespace
holding one finite number, a word of it ``mean``/``mu``/``avg``/``center``/``centre``/
``offset`` (with a scale, ``std``/``sigma``/``scale``/``sd``). Told when one operand given
the statistic back fits the other far better: the root mean squared difference falls to
under ``GAIN`` of what it was (``pred + m``; ``pred * s + m`` only when that beats the
offset alone by as much again). The fix is the assignment of the prediction in the cell
with the statistics applied (``pred_test = mean_fit.numpy() + y_mean``), else the comparison
with the name so written (``(pred + y_mean) - y``). A cell that adds the mean back stays silent: the
difference is then small already.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    last_assignment_before,
    parsed_source,
    walk_nodes,
)
from jupyterlab_tfcoach.monitor.training.clip_ranges import float_values

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
MIN_VALUES = 4
GAIN = 0.5  # the error with the statistic given back is under half of the error without it
_WRAPPERS = frozenset({"abs", "absolute", "square"})
_METRIC_WORDS = frozenset({"mse", "mae", "rmse", "r2_score"})
_OFFSET_WORDS = frozenset({"mean", "mu", "avg", "center", "centre", "offset"})
_SCALE_WORDS = frozenset({"std", "sigma", "scale", "sd"})


def _number(value: Any) -> float | None:
    """One finite number: a Python or NumPy scalar, or a NumPy array of one value."""
    try:
        cls = type(value)
        if cls in (int, float) or cls.__module__ == "numpy":
            if cls.__module__ == "numpy" and value.size != 1:
                return None
            # NumPy's own conversion, no user code (``item`` reads a one-value array too).
            number = float(value.item()) if cls.__module__ == "numpy" else float(value)
            return number if math.isfinite(number) and number != 0.0 else None
    except Exception:
        return None
    return None


def _name_pattern(words: frozenset[str]) -> re.Pattern[str]:
    """A name one of whose words (the runs between ``_`` and digits, any case) is one of
    ``words``, as one compiled search: cheaper than reading each value."""
    alternatives = "|".join(sorted(words))
    return re.compile(rf"(?i)(?:^|[_\d])(?:{alternatives})(?:$|[_\d])")


_OFFSET_NAME = _name_pattern(_OFFSET_WORDS)
_SCALE_NAME = _name_pattern(_SCALE_WORDS)


def _joined_names(namespace: Mapping[str, Any]) -> tuple[list[Any], str | None, str | None]:
    """The namespace's names, and when they are ASCII strings without a newline, the same
    joined by newlines and that text in lower case: read once for both kinds of statistic."""
    names = list(namespace)
    try:
        joined = "\n".join(names)
    except TypeError:  # a key that is not a string
        return names, None, None
    # Only ASCII names without a newline keep one line each and their case folding simple.
    if not joined.isascii() or joined.count("\n") != len(names) - 1:
        return names, None, None
    return names, joined, joined.lower()


def _candidate_names(
    joined_names: tuple[list[Any], str | None, str | None],
    pattern: re.Pattern[str],
    words: frozenset[str],
) -> list[str]:
    """The namespace's names ``pattern`` finds a word in, not starting with ``_``, in the
    namespace's order. A notebook's namespace holds thousands of names and a search per
    name costs close to a millisecond: the names are joined in one text first, and only
    the few whose lines hold one of ``words`` (``str.find``, at C speed) are searched."""
    names, joined, lowered = joined_names
    if joined is None or lowered is None:
        return [
            n for n in names if isinstance(n, str) and not n.startswith("_") and pattern.search(n)
        ]
    starts: set[int] = set()
    for word in words:
        at = lowered.find(word)
        while at != -1:
            starts.add(lowered.rfind("\n", 0, at) + 1)
            at = lowered.find(word, at + 1)
    found = []
    for start in sorted(starts):
        end = joined.find("\n", start)
        name = joined[start : end if end != -1 else len(joined)]
        if not name.startswith("_") and pattern.search(name):
            found.append(name)
    return found


def _statistics(
    namespace: Mapping[str, Any],
    joined_names: tuple[list[Any], str | None, str | None],
    pattern: re.Pattern[str],
    words: frozenset[str],
) -> list[tuple[str, float]]:
    found = []
    # The names first: reading a value costs more than finding the names worth reading.
    for name in _candidate_names(joined_names, pattern, words):
        number = _number(namespace.get(name))
        if number is not None:
            found.append((name, number))
    return found


def _compared_pairs(tree: ast.Module) -> Iterator[tuple[ast.Name, ast.Name, ast.expr]]:
    """(a, b, the node comparing them) for each error of the cell between two names."""
    for node in walk_nodes(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            inner = node.left
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub):
                if isinstance(inner.left, ast.Name) and isinstance(inner.right, ast.Name):
                    yield inner.left, inner.right, inner
        elif isinstance(node, ast.Call):
            name = call_name(node) or ""
            if name in _WRAPPERS and node.args:
                inner = node.args[0]
                if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub):
                    if isinstance(inner.left, ast.Name) and isinstance(inner.right, ast.Name):
                        yield inner.left, inner.right, inner
            elif ("error" in name.lower() or name.lower() in _METRIC_WORDS) and len(node.args) >= 2:
                first, second = node.args[:2]
                if isinstance(first, ast.Name) and isinstance(second, ast.Name):
                    yield second, first, node


def _rms(values: Any) -> float:
    return float((values**2).mean()) ** 0.5


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first error of the cell between a centred and a raw array, if any."""
    if len(source) > MAX_CELL_CHARS or ("-" not in source and "error" not in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    offsets: list[tuple[str, float]] | None = None
    scales: list[tuple[str, float]] = []
    for left, right, node in _compared_pairs(tree):
        arrays = [float_values(namespace.get(n.id)) for n in (left, right)]
        if any(a is None for a in arrays) or arrays[0].shape != arrays[1].shape:
            continue
        if arrays[0].size <= MIN_VALUES:
            continue
        if offsets is None:
            joined_names = _joined_names(namespace)
            offsets = _statistics(namespace, joined_names, _OFFSET_NAME, _OFFSET_WORDS)
            if not offsets:
                return []
            scales = _statistics(namespace, joined_names, _SCALE_NAME, _SCALE_WORDS)
        for predicted, target in ((0, 1), (1, 0)):
            found = _restoring(arrays[predicted], arrays[target], offsets, scales)
            if found is not None:
                names = (left, right)
                note = _note(source, tree, names[predicted], names[target], node, *found)
                if note is not None:
                    return [note]
    return []


def _restoring(
    predicted: Any,
    target: Any,
    offsets: list[tuple[str, float]],
    scales: list[tuple[str, float]],
) -> tuple[str, str | None] | None:
    """(the offset's name, the scale's name or None) that bring ``predicted`` to
    ``target``'s scale, when one does far better than nothing."""
    try:
        before = _rms(predicted - target)
        if not math.isfinite(before) or before == 0.0:
            return None
        shifted = min((_rms(predicted + offset - target), name) for name, offset in offsets)
        bar = min(before, shifted[0])
        scaled = [
            (_rms(predicted * scale + offset - target), name, scale_name)
            for scale_name, scale in scales
            for name, offset in offsets
        ]
        if scaled and min(scaled)[0] < GAIN * bar:
            return min(scaled)[1], min(scaled)[2]
        if shifted[0] < GAIN * before:
            return shifted[1], None
    except Exception:
        return None
    return None


def _note(
    source: str,
    tree: ast.Module,
    predicted: ast.Name,
    target: ast.Name,
    node: ast.expr,
    offset: str,
    scale: str | None,
) -> Note | None:
    compared = ast.get_source_segment(source, node)
    if not compared or "\n" in compared:
        return None
    pred, raw = predicted.id, target.id
    restored = f"* {scale} + {offset}" if scale else f"+ {offset}"
    statistics = f"`{scale}` and `{offset}`" if scale else f"`{offset}`"
    scale_said = "standardised" if scale else "centred"
    assignment = last_assignment_before(tree, pred, node.lineno, one_line=True)
    if assignment is not None:
        value = ast.get_source_segment(source, assignment.value)
        if not value:
            return None
        needs_brackets = scale is not None and not isinstance(
            assignment.value, ast.Name | ast.Call | ast.Attribute | ast.Subscript
        )
        value = f"({value})" if needs_brackets else value
        fix = f"{pred} = {value} {restored}"
    else:
        bracketed = f"({pred} {restored})"
        fix = re.sub(rf"\b{re.escape(pred)}\b", lambda _: bracketed, compared, count=1)
    return reports.note(
        f"`{compared}` (line {node.lineno} of this cell) compares `{pred}` with `{raw}`, but "
        f"`{pred}` is on the {scale_said} scale the model was fitted on: given {statistics} "
        f"back it matches `{raw}` far better, so the figure mostly measures the missing "
        f"offset. Nothing raises. Undo the {'standardisation' if scale else 'centring'} "
        f"before comparing: `{fix}`.",
        SECTION,
    )
