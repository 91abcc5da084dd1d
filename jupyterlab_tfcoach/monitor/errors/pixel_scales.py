"""Images of two value scales met in one op: integer pixels against a float image in [0, 1].

``tf.image.ssim(frame_u8, reference, max_val=255)`` with ``frame_u8`` uint8 (0 to 255) and
``reference`` float32 in [0, 1] fails on the dtypes. The dtype explainer's usual fix, a
``tf.cast`` of the integer side, runs but keeps its numbers 0 to 255 beside numbers 0 to 1:
the comparison (a similarity, a difference, an error) is then meaningless. What differs is
the scale, and the dtype only shows it. Told when the integer operand is a pixel dtype
(``uint8``, ``uint16``) holding values above 1 and the float operand's values all lie in
[0, 1]: the fix converts the integer image with ``tf.image.convert_image_dtype``, which
divides by the dtype's largest value (255 for uint8), and a ``max_val`` the call gives
above 1 becomes ``1.0``, the range both images then share. Values are read from what the
failing frame and the namespace hold (eager tensors and arrays of at most
``MAX_VALUES`` values); nothing runs the user's code.
"""

from __future__ import annotations

import ast
import math
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, code, rewrite_all
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

PIXEL_DTYPES = {"uint8": 255, "uint16": 65535}
MAX_VALUES = 5_000_000
# Image metrics whose ``max_val`` is the images' dynamic range, and its position.
_MAX_VAL_POSITION = {"ssim": 2, "psnr": 2, "ssim_multiscale": 2}


def value_bounds(value: Any) -> tuple[float, float] | None:
    """(lowest, highest) of a NumPy array or an eager tensor of numbers, integer or float,
    with at most ``MAX_VALUES`` values; None for anything else, empty or not finite."""
    try:
        cls = type(value)
        if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
            array = value
        elif "tensorflow" in cls.__module__ and cls.__name__ in ("EagerTensor", "ResourceVariable"):
            shape = library_attribute(value, "shape")
            if shape is None or math.prod(int(d) for d in shape) > MAX_VALUES:
                return None
            numpy = library_attribute(value, "numpy")
            array = numpy() if numpy is not None else None
        else:
            return None
        if sys.modules.get("numpy") is None or array is None:
            return None
        if array.dtype.kind not in "fiu" or not 0 < array.size <= MAX_VALUES:
            return None
        low, high = float(array.min()), float(array.max())
    except Exception:
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def _max_val(call: ast.Call) -> ast.expr | None:
    """The ``max_val`` argument an image metric's call gives (by keyword or position)."""
    for keyword in call.keywords:
        if keyword.arg == "max_val":
            return keyword.value
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    position = _MAX_VAL_POSITION.get(name)
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def _written_number(node: ast.expr | None) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    return None


def mixed_scales(
    frame: CellFrame,
    statement: ast.stmt | ast.expr,
    integer_node: ast.expr,
    integer_value: Any,
    integer_dtype: str,
    float_node: ast.expr,
    float_value: Any,
    call: ast.Call | None,
    tf: str,
) -> str | None:
    """The rule and fix when the integer operand is a pixel image (values above 1) and the
    float one an image in [0, 1]; None when the values do not say so."""
    top = PIXEL_DTYPES.get(integer_dtype)
    if top is None:
        return None
    pixels, unit = value_bounds(integer_value), value_bounds(float_value)
    if pixels is None or unit is None or pixels[1] <= 1.0:
        return None
    if not (unit[0] >= 0.0 and unit[1] <= 1.0):
        return None
    integer_source, float_source = frame.segment(integer_node), frame.segment(float_node)
    if not integer_source or not float_source:
        return None
    converted = f"{tf}.image.convert_image_dtype({integer_source}, {tf}.float32)"
    replacements: list[tuple[ast.AST, str]] = [(integer_node, converted)]
    range_said = ""
    max_val = _max_val(call) if call is not None else None
    written = _written_number(max_val)
    if max_val is not None and (written is None or written > 1.0):
        replacements.append((max_val, "1.0"))
        shown = frame.segment(max_val) or ""
        range_said = (
            f" and `max_val`, the images' dynamic range, becomes `1.0` (your {code(shown)} "
            f"is the range of raw pixels)"
        )
    fixed = rewrite_all(frame, statement, replacements)
    if not fixed or "\n" in fixed:
        return None
    return (
        f"The dtypes differ because the two images are on different scales: "
        f"{code(integer_source)} holds {integer_dtype} pixels from {pixels[0]:.0f} to "
        f"{pixels[1]:.0f} (0 to {top}), {code(float_source)} floats from {unit[0]:.3g} to "
        f"{unit[1]:.3g} (inside [0, 1]). A `tf.cast` would make the dtypes agree and keep the "
        f"numbers 0 to {top} beside numbers 0 to 1, so the result would compare nothing. "
        f"Bring {code(integer_source)} to [0, 1] with `tf.image.convert_image_dtype` (it "
        f"divides by {top}){range_said}. Fix: {code(fixed)}."
    )
