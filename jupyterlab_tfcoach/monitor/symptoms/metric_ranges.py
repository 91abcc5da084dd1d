"""An image metric told another dynamic range than the images have (issue #25):
``tf.image.psnr(sr, hr, max_val=255.0)`` on images in [0, 1] (``convert_image_dtype``
scales to [0, 1]) adds 20 * log10(255) = 48 dB to every PSNR, and ``max_val=1.0`` on pixels
in [0, 255] makes it 48 dB too low; SSIM's constants are scaled by ``max_val`` too, so its
scores drift towards 1 or towards nothing. Nothing raises.

After a cell that completed, its calls of ``psnr``, ``ssim`` and ``ssim_multiscale`` whose
``max_val`` (keyword or third argument) is a written number are read with ``ast``; the
images are the call's first two arguments:

- names the notebook holds (a float NumPy array or eager tensor, ``clip_ranges``' reading);
- inside a function of the cell, a name bound by a ``for`` over one of its parameters
  (``for lr, hr in ds``), the cell calling the function with a ``tf.data`` dataset there:
  the matching item of that dataset's first element, read only when tf.data can give it
  without the user's Python or a large buffer (``input_ranges.cheap_to_read``).

Told when every image read lies within [0, 1] and ``max_val`` is at least
``WIDE_MAX_VAL``, or every image's largest value is above ``RAW_PIXELS`` and ``max_val``
is at most 2 (images on two scales are left to the inputs' range note);
the fix is the call with ``max_val`` the data's range (1.0 or 255.0). Every such
call of the cell is named and fixed in one note (a PSNR fixed while the SSIM beside it
keeps the wrong range leaves one figure off); SSIM's effect is said from its constants,
(0.01 * max_val)**2 and (0.03 * max_val)**2. A
``max_val`` that matches the data, or data that is not read, stays silent.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.training.clip_ranges import value_range
from jupyterlab_tfcoach.monitor.training.input_ranges import cheap_to_read

SECTION = "tf-data"
MAX_CELL_CHARS = 50_000
_METRICS = frozenset({"psnr", "ssim", "ssim_multiscale"})
WIDE_MAX_VAL = 50.0  # a max_val this large is meant for raw pixels
RAW_PIXELS = 2.0  # images whose largest value is above this are not in [0, 1]
_MAX_CALLS = 8


def _number(node: ast.AST | None) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    return None


def _max_val(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "max_val":
            return keyword.value
    return call.args[2] if len(call.args) >= 3 else None


def _enclosing_function(tree: ast.Module, call: ast.Call) -> ast.FunctionDef | None:
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and any(n is call for n in ast.walk(statement)):
            return statement
    return None


def _dataset_item(
    name: str, function: ast.FunctionDef, tree: ast.Module, namespace: Mapping[str, Any]
) -> Any | None:
    """The item of a dataset's first element that ``name`` is bound to by a ``for`` over a
    parameter of ``function``, the dataset being what the cell passes there."""
    parameters = [a.arg for a in function.args.args]
    for loop in ast.walk(function):
        if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Name):
            continue
        if loop.iter.id not in parameters:
            continue
        target = loop.target
        if isinstance(target, ast.Tuple):
            names = [t.id if isinstance(t, ast.Name) else None for t in target.elts]
            if name not in names:
                continue
            position: int | None = names.index(name)
        elif isinstance(target, ast.Name) and target.id == name:
            position = None
        else:
            continue
        dataset = _passed(function.name, parameters.index(loop.iter.id), loop.iter.id, tree)
        value = namespace.get(dataset) if dataset is not None else None
        if value is None or not cheap_to_read(value):
            return None
        take = library_attribute(value, "take")
        if take is None:
            return None
        for element in take(1):
            if position is None:
                return element
            if type(element) is tuple and position < len(element):
                return element[position]
        return None
    return None


def _passed(function: str, index: int, parameter: str, tree: ast.Module) -> str | None:
    """The one name the cell's calls of ``function`` give for its ``index``-th parameter."""
    found = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == function
        ):
            continue
        argument = node.args[index] if index < len(node.args) else None
        for keyword in node.keywords:
            if keyword.arg == parameter:
                argument = keyword.value
        if not isinstance(argument, ast.Name):
            return None
        found.add(argument.id)
    return found.pop() if len(found) == 1 else None


def _ranges(
    call: ast.Call, tree: ast.Module, namespace: Mapping[str, Any]
) -> list[tuple[str, float, float]]:
    function = _enclosing_function(tree, call)
    ranges = []
    for argument in call.args[:2]:
        if not isinstance(argument, ast.Name):
            continue
        name = argument.id
        if function is None:
            value = namespace.get(name)
        else:
            value = _dataset_item(name, function, tree, namespace)
        found = value_range(value) if value is not None else None
        if found is not None:
            ranges.append((name, *found))
    return ranges


def _text(value: float) -> str:
    return f"{value:.3g}"


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """One note for the cell's image metrics told another range than their data's: every
    such call is named and fixed (a PSNR fixed while the SSIM beside it keeps the wrong
    range still reports one figure off)."""
    if len(source) > MAX_CELL_CHARS or ("psnr" not in source and "ssim" not in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and call_name(node) in _METRICS
    ][:_MAX_CALLS]
    found: list[_Mismatch] = []
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        written = _max_val(call)
        max_val = _number(written)
        if written is None or max_val is None:
            continue
        mismatch = _mismatch(source, tree, call, written, max_val, namespace)
        if mismatch is not None:
            found.append(mismatch)
    return [_note(found)] if found else []


@dataclass(frozen=True)
class _Mismatch:
    """One metric call whose ``max_val`` is not its images' range."""

    text: str
    fixed: str
    line: int
    metric: str
    max_text: str
    max_val: float
    right: str
    scale: str
    said: str


def _mismatch(
    source: str,
    tree: ast.Module,
    call: ast.Call,
    written: ast.expr,
    max_val: float,
    namespace: Mapping[str, Any],
) -> _Mismatch | None:
    text = ast.get_source_segment(source, call)
    max_text = ast.get_source_segment(source, written)
    if not text or not max_text or "\n" in text:
        return None
    ranges = _ranges(call, tree, namespace)
    if not ranges:
        return None
    highest = max(high for _, _, high in ranges)
    lowest = min(low for _, low, _ in ranges)
    if max_val >= WIDE_MAX_VAL and lowest >= 0.0 and highest <= 1.0:
        right, scale = "1.0", "[0, 1]"
    elif (
        max_val <= 2.0
        and min(high for _, _, high in ranges) > RAW_PIXELS
        and lowest >= 0.0
        and highest <= 255.0
    ):
        # Every image on the raw scale: images on two scales (one in [0, 1]) are compared
        # wrongly whatever max_val says, which the inputs' range note tells.
        right, scale = "255.0", "[0, 255]"
    else:
        return None
    said = ", ".join(
        f"`{name}` from {_text(low)} to {_text(high)}" for name, low, high in ranges[:2]
    )
    start = written.col_offset - call.col_offset
    end = (written.end_col_offset or 0) - call.col_offset
    if written.lineno != call.lineno or start < 0 or end <= start:
        return None
    fixed = text[:start] + right + text[end:]
    return _Mismatch(
        text, fixed, call.lineno, call_name(call) or "", max_text, max_val, right, scale, said
    )


def _effect(found: _Mismatch) -> str:
    """What the wrong range does to this metric's figures."""
    wide = found.right == "1.0"
    if found.metric == "psnr":
        if wide:
            return (
                "PSNR = 10 * log10(max_val**2 / MSE), so every value is "
                f"20 * log10({found.max_text}) = {20 * math.log10(found.max_val):.0f} dB too high"
            )
        return (
            "PSNR = 10 * log10(max_val**2 / MSE), so every value is 20 * log10(255) = 48 dB too low"
        )
    small, large = (0.01 * found.max_val) ** 2, (0.03 * found.max_val) ** 2
    if wide:
        return (
            "SSIM adds (0.01 * max_val)**2 and (0.03 * max_val)**2 to its mean and variance "
            f"terms to keep them stable; with max_val={found.max_text} these are "
            f"{small:.3g} and {large:.3g}, far above anything images in [0, 1] hold, so the "
            "score is pushed near 1 whatever the prediction"
        )
    return (
        "SSIM adds (0.01 * max_val)**2 and (0.03 * max_val)**2 to its mean and variance "
        f"terms to keep them stable; with max_val={found.max_text} these are {small:.3g} "
        f"and {large:.3g}, nothing next to pixels up to 255, so flat regions give unstable "
        "scores"
    )


def _note(found: list[_Mismatch]) -> Note:
    parts = []
    for mismatch in found:
        parts.append(
            f"`{mismatch.text}` (line {mismatch.line} of this cell) tells the metric the "
            f"images span {mismatch.max_text}, but they are in {mismatch.scale} "
            f"({mismatch.said}): {_effect(mismatch)}."
        )
    fixes = " and ".join(f"`{mismatch.fixed}`" for mismatch in found)
    every = " each call" if len(found) > 1 else ""
    return reports.note(
        " ".join(parts) + " The figures cannot be compared with anyone else's, and nothing "
        "raises. `max_val` is the data's range (1.0 for images from "
        "`tf.image.convert_image_dtype` or divided by 255, 255.0 for raw pixels); "
        f"give it{every}: {fixes}.",
        SECTION,
    )
