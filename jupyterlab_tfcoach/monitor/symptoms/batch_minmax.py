"""A batch of maps min-max scaled with one minimum and one maximum for the whole batch.

``heat = (heat - tf.reduce_min(heat)) / (tf.reduce_max(heat) - tf.reduce_min(heat))``
reduces over every axis, the batch axis included: the strongest map of the batch reaches
1 and every weaker one is squashed towards 0, so the maps cannot be compared with their
own images (a saliency, Grad-CAM or attribution map is read per example). Nothing raises.

Told after a completed cell from its top-level statements ``Y = (A - MIN) / (MAX - MIN
[+ eps])`` (also ``/ MAX`` alone after the subtraction) where ``MIN``/``MAX`` are
``tf.reduce_min``/``reduce_max``, ``np.min``/``np.max``/``amin``/``amax`` or ``A.min()``/
``A.max()`` of the same ``A`` without an axis; the name ``Y`` speaks of a per-example map
(``heat``, ``heatmap``, ``cam``, ``saliency``, ``attribution``, ``importance``,
``relevance``, ``explanation``, ``map``); and the symptom holds: ``Y`` then holds a float
tensor or array of rank 3 or more with at least 2 examples (at most ``MAX_VALUES``
values) of which one spans less than ``SQUASHED`` of [0, 1]. The fix is the statement
with each of those reductions over every axis but the first, ``keepdims=True``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 30_000
MAX_VALUES = 2_000_000
# A map scaled on its own spans [0, 1]; one that spans less than this was squashed by a
# stronger map of the batch.
SQUASHED = 0.8
_REDUCTIONS = frozenset({"reduce_min", "reduce_max", "min", "max", "amin", "amax"})
_MAP_WORDS = frozenset(
    {
        "heat",
        "heatmap",
        "heatmaps",
        "cam",
        "cams",
        "gradcam",
        "saliency",
        "saliencies",
        "attribution",
        "attributions",
        "importance",
        "importances",
        "relevance",
        "explanation",
        "explanations",
        "map",
        "maps",
    }
)


_MAP_STEMS = ("heat", "cam", "salien", "attribut", "importan", "relevan", "explan", "map")


def _whole(node: ast.AST) -> tuple[str, ast.Call] | None:
    """``(A, call)`` for a min or max of ``A`` over every axis."""
    if not isinstance(node, ast.Call) or call_name(node) not in _REDUCTIONS:
        return None
    if any(k.arg in ("axis", "keepdims") for k in node.keywords):
        return None
    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        owner = node.func.value.id
        if owner not in ("tf", "np", "numpy", "ops", "math") and not node.args:
            return owner, node  # A.min()
    if isinstance(node.func, ast.Attribute) and len(node.args) == 1:
        operand = node.args[0]
        if isinstance(operand, ast.Name):
            return operand.id, node
    return None


def _scaled(value: ast.expr) -> tuple[str, list[ast.Call]] | None:
    """``(A, reductions)`` for ``(A - MIN) / (MAX - MIN + eps)`` or ``(A - MIN) / MAX``."""
    if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Div):
        return None
    top = value.left
    if not (isinstance(top, ast.BinOp) and isinstance(top.op, ast.Sub)):
        return None
    if not isinstance(top.left, ast.Name):
        return None
    name = top.left.id
    low = _whole(top.right)
    if low is None or low[0] != name:
        return None
    calls = [low[1]]
    for node in ast.walk(value.right):
        if isinstance(node, ast.Call) and call_name(node) in _REDUCTIONS:
            found = _whole(node)
            if found is None or found[0] != name:
                return None  # a reduction of something else, or over an axis already
            calls.append(found[1])
    if len(calls) < 2:
        return None
    return name, calls


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a batch of maps scaled with one minimum and maximum, if any."""
    if len(source) > MAX_CELL_CHARS or ("min" not in source or "max" not in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        lowered = target.id.lower()
        if not any(stem in lowered for stem in _MAP_STEMS):
            continue  # a substring test before the name is split into words
        if not set(identifier_words(target.id)) & _MAP_WORDS:
            continue
        scaled = _scaled(statement.value)
        if scaled is None:
            continue
        note = _checked(source, statement, target.id, scaled[0], scaled[1], namespace)
        if note is not None:
            return [note]
    return []


def _checked(
    source: str,
    statement: ast.Assign,
    result: str,
    operand: str,
    calls: list[ast.Call],
    namespace: Mapping[str, Any],
) -> Note | None:
    values = held_array(namespace.get(result), MAX_VALUES, ("float",))
    if values is None or values.ndim < 3 or values.shape[0] < 2:
        return None
    numpy = sys.modules["numpy"]
    flat = values.reshape(values.shape[0], -1)
    spans = flat.max(axis=1) - flat.min(axis=1)
    if not numpy.all(numpy.isfinite(spans)) or float(spans.min()) >= SQUASHED:
        return None
    line = ast.get_source_segment(source, statement)
    if line is None or "\n" in line:
        return None
    axes = "(" + ", ".join(str(axis) for axis in range(1, values.ndim)) + ")"
    fixed = _with_axes(line, statement, calls, axes)
    if fixed is None:
        return None
    weakest = int(spans.argmin())
    text = (
        f"`{line}` (line {statement.lineno} of this cell) scales `{result}` with one "
        f"minimum and one maximum for the whole batch of {values.shape[0]} maps: the "
        "reductions have no axis, so they run over the batch axis too. Only the strongest "
        f"map reaches 1; map {weakest} spans just {float(spans.min()):.2f} of [0, 1], "
        "squashed by the others, so each map no longer shows its own example's pattern. "
        "Nothing raises. Scale each map on its own, reducing every axis but the first "
        f"with keepdims=True: `{fixed}`."
    )
    return reports.note(text, SECTION)


def _with_axes(line: str, statement: ast.Assign, calls: list[ast.Call], axes: str) -> str | None:
    """The line with ``axis=..., keepdims=True`` added to each whole-array reduction."""
    raw = line.encode("utf-8")
    inserts: list[tuple[int, bytes]] = []
    for call in calls:
        if call.end_lineno != statement.lineno or call.end_col_offset is None:
            return None
        stop = call.end_col_offset - statement.col_offset - 1
        if raw[stop : stop + 1] != b")":
            return None
        separator = b", " if call.args else b""
        inserts.append((stop, separator + f"axis={axes}, keepdims=True".encode()))
    for stop, text in sorted(inserts, reverse=True):
        raw = raw[:stop] + text + raw[stop:]
    return raw.decode("utf-8")
