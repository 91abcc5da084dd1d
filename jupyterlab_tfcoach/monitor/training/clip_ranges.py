"""A clip to a range far wider than the data's own: on unit-scale data it never binds.

``tf.clip_by_value(x_noisy, 0, 255)`` on images that live in [0, 1] keeps nothing in their
valid range: the bound meant for raw pixels is 255 times the data's largest value, so values
pushed past 1 by noise or a gradient step stay there, and every figure computed from them
(an accuracy under attack, a comparison of two perturbations) describes inputs the model
never sees. Nothing raises.

After a completed cell holding ``clip``, its calls of ``clip_by_value``/``clip`` (TensorFlow,
NumPy, ``keras.ops``) whose upper bound is a written number of at least ``WIDE_BOUND`` are
read with ``ast``; the data is what the clipped expression reads: each name it reads, or,
for a name the clip's statement (or a later one) rebinds, the names the cell's assignment of
it before the clip read (one step back), whose value is a float NumPy array or eager
tensor of more than one value (at most ``MAX_VALUES``: a larger one is not read). Told
when every such value lies within [-1, 1] (and one exists): the bound is ``WIDE_BOUND``
times the data's scale or more. The fix is the call with the data's range as bounds
(``0.0, 1.0`` for data never below 0, else ``-1.0, 1.0``). A clip to [0, 1] of unit data,
a clip of raw pixels to [0, 255] stay silent.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name, last_assignment_before, parsed_source

SECTION = "tf-data"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 5_000_000
WIDE_BOUND = 50.0  # an upper bound this many times the data's largest magnitude never binds
_CLIPS = frozenset({"clip_by_value", "clip"})


def float_values(value: Any) -> Any | None:
    """A float NumPy array of ``value`` (an ndarray, or an eager tensor's ``numpy()``) with
    more than one and at most ``MAX_VALUES`` values; None for anything else."""
    try:
        cls = type(value)
        if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
            array = value
        elif "tensorflow" in cls.__module__ and cls.__name__ == "EagerTensor":
            shape = library_attribute(value, "shape")
            if shape is None or math.prod(int(d) for d in shape) > MAX_VALUES:
                return None
            numpy = library_attribute(value, "numpy")
            array = numpy() if numpy is not None else None
        else:
            return None
        if array is None or array.dtype.kind != "f" or not 1 < array.size <= MAX_VALUES:
            return None
        return array
    except Exception:
        return None


def value_range(value: Any) -> tuple[float, float] | None:
    """(lowest, highest) of a float array or eager tensor (see ``float_values``), finite."""
    array = float_values(value)
    if array is None:
        return None
    try:
        low, high = float(array.min()), float(array.max())
    except Exception:
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def _number(node: ast.AST) -> float | None:
    """A written number (``255``, ``255.0``, ``-1``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    return None


def _names_read(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _rebound(tree: ast.Module, name: str, line: int) -> bool:
    """Whether a top-level statement of the cell at or after ``line`` assigns ``name``."""
    return any(
        isinstance(statement, ast.Assign)
        and (statement.end_lineno or statement.lineno) >= line
        and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
        for statement in tree.body
    )


def _data_ranges(
    tree: ast.Module, clipped: ast.AST, line: int, namespace: Mapping[str, Any]
) -> list[tuple[str, float, float]]:
    """(name, lowest, highest) of each array the clipped expression's data comes from."""
    ranges: list[tuple[str, float, float]] = []
    seen: set[str] = set()
    for name in _names_read(clipped):
        # A name the clip's statement (or a later one) rebinds holds the clipped result
        # after the cell: its data is what the cell's assignment before the clip read.
        assignment = None
        if _rebound(tree, name, line):
            assignment = last_assignment_before(tree, name, line)
        origin = None if assignment is None else assignment.value
        sources = [name] if origin is None else _names_read(origin)
        for source in sources:
            if source in seen:
                continue
            seen.add(source)
            found = value_range(namespace.get(source))
            if found is not None:
                ranges.append((source, *found))
    return ranges


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) and abs(value) < 1e6 else f"{value:.3g}"


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first clip of the cell whose upper bound never binds, if any."""
    if len(source) > MAX_CELL_CHARS or "clip" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or call_name(call) not in _CLIPS:
            continue
        if len(call.args) < 3 or call.keywords:
            continue
        high = _number(call.args[2])
        if high is None or high < WIDE_BOUND:
            continue
        note = _note(source, tree, call, high, namespace)
        if note is not None:
            return [note]
    return []


def _note(
    source: str, tree: ast.Module, call: ast.Call, high: float, namespace: Mapping[str, Any]
) -> Note | None:
    text = ast.get_source_segment(source, call)
    clipped = ast.get_source_segment(source, call.args[0])
    low_text = ast.get_source_segment(source, call.args[1])
    high_text = ast.get_source_segment(source, call.args[2])
    if not text or not clipped or not low_text or not high_text or "\n" in text:
        return None
    ranges = _data_ranges(tree, call.args[0], call.lineno, namespace)
    if not ranges or any(low < -1.0 or hi > 1.0 for _, low, hi in ranges):
        return None
    lowest = min(low for _, low, _ in ranges)
    highest = max(hi for _, _, hi in ranges)
    if max(abs(lowest), abs(highest)) * WIDE_BOUND > high:
        return None
    fixed_low = "0.0" if lowest >= 0.0 else "-1.0"
    said = ", ".join(
        f"`{name}` in [{_number_text(round(low, 3))}, {_number_text(round(hi, 3))}]"
        for name, low, hi in ranges[:3]
    )
    func = ast.get_source_segment(source, call.func) or "clip"
    fixed = f"{func}({clipped}, {fixed_low}, 1.0)"
    return reports.note(
        f"`{text}` (line {call.lineno} of this cell) clips `{clipped}` to "
        f"[{low_text}, {high_text}], but its data lives in [{fixed_low}, 1.0] ({said}): an upper "
        f"bound of {high_text} never binds, so values pushed past 1.0 stay outside the data's "
        "valid range and every figure computed from them describes inputs unlike the real "
        f"ones. Nothing raises. Clip to the data's own range: `{fixed}`.",
        SECTION,
    )
