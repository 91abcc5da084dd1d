"""A mean (or minimum, product) taken over a ragged tensor padded into a rectangle.

``ragged.to_tensor()`` fills the short rows with 0 (or its ``default_value``) up to the
longest row. ``tf.reduce_mean(padded, axis=1)`` then counts that padding as values: a
row of 2 scores among rows of 4 gets half its true mean, ``reduce_min`` finds the 0,
``reduce_prod`` gives 0. Nothing raises. ``tf.reduce_mean(ragged, axis=1)`` averages each
row over its own values.

After a cell that completed (a cell without both ``to_tensor`` and ``reduce_mean``,
``reduce_min`` or ``reduce_prod`` costs two substring tests), each top-level call of those
reductions is read: its first argument is ``R.to_tensor(...)``, written there or
assigned to a name earlier in the cell (followed up to 4 assignments), and ``R`` holds a
``tf.RaggedTensor`` (a name or an attribute chain) whose rows differ in length (its
``row_lengths``, TensorFlow's own method). The note names the reduction, the padded
tensor and the row lengths; fix: the same call on ``R``.

Reads type names and row lengths only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import INTEGERS, held_array, parse_cell
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
MAX_ROWS = 1_000_000
_REDUCTIONS = frozenset({"reduce_mean", "reduce_min", "reduce_prod"})
_EFFECTS = {
    "reduce_mean": "count in each row's mean: the shorter rows get too-low means",
    "reduce_min": "are the minimum of every shorter row",
    "reduce_prod": "make the product of every shorter row the padding value",
}


def _row_lengths(value: Any) -> list[int] | None:
    """The shortest and longest row of a 2-D ``tf.RaggedTensor`` (at most ``MAX_ROWS``
    rows), from its stored ``row_splits`` tensor: no TensorFlow op is made."""
    if type(value).__name__ != "RaggedTensor" or "tensorflow" not in type(value).__module__:
        return None
    splits = held_array(library_attribute(value, "row_splits"), MAX_ROWS + 1, INTEGERS, ndim=1)
    if splits is None or splits.shape[0] < 2:
        return None
    lengths = splits[1:] - splits[:-1]
    return [int(lengths.min()), int(lengths.max())]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a reduction that counts a ragged tensor's padding, if any."""
    if "to_tensor" not in source or len(source) > MAX_CELL_CHARS:
        return []
    if not any(name in source for name in _REDUCTIONS):
        return []
    code = parse_cell(source)
    if code is None:
        return []
    for node in code.nodes:
        if not isinstance(node, ast.Call) or call_name(node) not in _REDUCTIONS or not node.args:
            continue
        padded = node.args[0]
        origin = code.origin(padded, node.lineno)
        if not (
            isinstance(origin, ast.Call)
            and call_name(origin) == "to_tensor"
            and isinstance(origin.func, ast.Attribute)
        ):
            continue
        ragged = origin.func.value
        path = reference_path(ragged)
        if path is None or code.rebound_after(path, node.lineno):
            continue
        found, value = held_at(path, namespace)  # type: ignore[arg-type]
        span = _row_lengths(value) if found else None
        if span is None or span[0] == span[1]:
            continue
        note = _note(code.segment(node), code.segment(padded), code.segment(ragged), node, span)
        if note is not None:
            return [note]
    return []


def _note(
    call: str | None, padded: str | None, ragged: str | None, node: ast.Call, span: list[int]
) -> Note | None:
    if call is None or padded is None or ragged is None:
        return None
    reduction = call_name(node) or "reduce_mean"
    start = node.args[0].col_offset - node.col_offset
    stop = start + len(padded)
    if call[start:stop] != padded:
        return None
    fixed = call[:start] + ragged + call[stop:]
    if padded.endswith(".to_tensor()"):
        held = f"`{padded}`"
    else:
        held = f"`{padded}`, which holds `{ragged}.to_tensor()`,"
    text = (
        f"`{call}` (line {node.lineno} of this cell) reduces {held} where the rows of "
        f"`{ragged}` hold {span[0]} to {span[1]} values: `to_tensor` pads every row "
        f"shorter than {span[1]} with a padding value (0 by default), and those values "
        f"{_EFFECTS[reduction]}. Nothing raises. Reduce the ragged tensor itself, which "
        f"reads each row's own values: `{fixed}`."
    )
    return reports.note(text, SECTION)
