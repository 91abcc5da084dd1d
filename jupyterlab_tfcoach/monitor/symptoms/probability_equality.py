"""Probabilities compared with labels by equality, without a threshold.

``np.mean(probs == labels)``, with ``probs`` a sigmoid model's outputs (0.03, 0.71, ...)
and ``labels`` 0/1, counts the pairs where a probability is exactly 0 or 1: almost none,
so the accuracy comes out near 0 whatever the model learned. Nothing raises. The
probabilities need turning into classes first: ``(probs > 0.5) == labels``.

Found after a cell that completed, from its top-level ``a == b`` / ``a != b``
(``cell_reading``: parsed once per source, names followed to the values they hold after
the cell; a name bound again later in the cell is not read): one side holds a float
tensor, variable or array whose values all lie in [0, 1] and are not all whole numbers
(probabilities), the other holds labels of the same shape (integers, booleans, or floats
that are all whole numbers). Values read as NumPy copies of at most a million values.
The note names the comparison, both values, how many pairs are equal, and gives the
comparison with the probabilities cut at 0.5 (``(probs > 0.5) == ys`` for an array;
``tf.cast(probs > 0.5, ys.dtype) == ys`` for a tensor, whose ``==`` needs one dtype).
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    numpy_values,
    reference_path,
    unwrap,
    value_at,
)

SECTION = "from-logits"
MAX_NOTES = 2


def _held(code: CellCode, node: ast.AST, line: int, namespace: dict[str, Any]) -> Operand | None:
    held = unwrap(node, reshapes=True)
    path = reference_path(held)
    text = code.segment(held)
    if path is None or text is None or code.rebound_after(path, line):
        return None
    return value_at(held, namespace, text)


def _probabilities(values: Any, numpy: Any) -> tuple[float, float] | None:
    if values.dtype.kind != "f":
        return None
    low, high = float(numpy.min(values)), float(numpy.max(values))
    if not (0.0 <= low and high <= 1.0):
        return None
    if numpy.all(values == numpy.round(values)):
        return None  # whole numbers: classes already
    return low, high


def _labels(values: Any, numpy: Any) -> bool:
    if values.dtype.kind in "iub":
        return True
    return values.dtype.kind == "f" and bool(numpy.all(values == numpy.round(values)))


def probability_equality_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    notes: list[Note] = []
    for node, left, right in code.comparisons():
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Compare):
            continue
        line = node.lineno
        operands = (_held(code, left, line, namespace), _held(code, right, line, namespace))
        if operands[0] is None or operands[1] is None:
            continue
        for (probs_node, probs), (labels_node, labels) in (
            ((left, operands[0]), (right, operands[1])),
            ((right, operands[1]), (left, operands[0])),
        ):
            if probs is None or labels is None or probs.shape != labels.shape:
                continue
            probs_values, label_values = numpy_values(probs), numpy_values(labels)
            if probs_values is None or label_values is None:
                continue
            spread = _probabilities(probs_values, numpy)
            if spread is None or not _labels(label_values, numpy):
                continue
            equal = int(numpy.sum(probs_values == label_values))
            text = _note(code, node, probs_node, labels_node, probs, spread, equal)
            if text is not None:
                notes.append(reports.note(text, SECTION))
            break
    return notes


def _note(
    code: CellCode,
    node: ast.Compare,
    probs_node: ast.AST,
    labels_node: ast.AST,
    probs: Operand,
    spread: tuple[float, float],
    equal: int,
) -> str | None:
    written = code.segment(node)
    probs_text, labels_text = code.segment(probs_node), code.segment(labels_node)
    if written is None or probs_text is None or labels_text is None:
        return None
    if probs.kind == "array":
        cut = f"({probs_text} > 0.5)"
    else:
        cut = f"tf.cast({probs_text} > 0.5, {labels_text}.dtype)"
    start = getattr(probs_node, "col_offset", 0) - node.col_offset
    end = start + len(probs_text.encode("utf-8"))
    raw = written.encode("utf-8")
    fixed = (raw[:start] + cut.encode("utf-8") + raw[end:]).decode("utf-8")
    shape = show_shape(probs.shape or ())
    low, high = spread
    count = 1
    for size in probs.shape or ():
        count *= size or 1
    return (
        f"`{written}` (line {node.lineno} of this cell) compares `{probs_text}`, a {shape} "
        f"{probs.dtype} {'array' if probs.kind == 'array' else 'tensor'} of probabilities "
        f"(from {low:.3g} to {high:.3g}), with the labels `{labels_text}`, whole numbers: "
        f"a probability is almost never exactly 0 or 1, so only {equal} of the "
        f"{count} pairs are equal and an accuracy made from it is near 0 whatever the "
        "model learned. Nothing raises. Turn the probabilities into classes first: "
        f"`{fixed}`."
    )
