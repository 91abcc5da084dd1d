"""A layer computing in float16 whose output overflowed: inf, NaN, or zeros everywhere.

Under a ``mixed_float16`` policy a layer keeps float32 weights but computes in float16,
whose largest number is 65504. Inputs of a few hundred squared (a norm, a variance, an
RMS) or a few tens exponentiated pass it: the intermediate becomes ``inf``, and what
follows turns it into ``inf``, NaN, or 0 (``x / sqrt(inf)``). Nothing raises; the layer
works with small inputs and in float32.

After a completed cell, each top-level ``out = layer(x, ...)`` whose ``layer`` holds a
Keras layer (not a model: which of its layers overflowed is not known) and ``out`` a
float16 tensor: its values are read (TensorFlow's own ``numpy``, at most
``MAX_ELEMENTS``) with those of ``x`` (a name holding a finite float array or tensor).
Told: ``inf``/NaN in ``out`` while ``x``'s largest magnitude ``A`` explains an overflow
(``A`` squared above 65504, ``A`` > 256, or ``exp(A)`` above it, ``A`` > 11.1); or rows
(first axis) of ``out`` that are 0 everywhere where ``x``'s row squared passes 65504 and
the learner's own layer class squares something in ``call`` (``square``, ``** 2``,
``norm``, ``pow``: its source read with ``inspect``), so the zeros are not a ReLU's.
The fix is the layer computing in float32: ``dtype="float32"`` added where the cell
creates it (when its class accepts ``dtype`` or ``**kwargs``), or scaled-down inputs.
Small inputs, a float32 layer and a finite non-zero output stay silent.
"""

from __future__ import annotations

import ast
import inspect
import math
import sys
import types
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import numpy_values
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, library_attribute
from jupyterlab_tfcoach.monitor.syntax import outside_scopes, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "mixed-precision"
MAX_ELEMENTS = 1_000_000
MAX_CALL_SOURCE = 20_000
FLOAT16_MAX = 65504.0
_HALF = ("float16", "half")


def _kind(value: Any) -> str | None:
    described = describe("", value)
    return described.kind if described is not None else None


def _values(value: Any) -> tuple[str, Any] | None:
    """(dtype name, a NumPy copy) of a tensor or array of at most ``MAX_ELEMENTS``."""
    described = describe("", value)
    if described is None or described.kind not in ("tensor", "array", "variable"):
        return None
    copy = numpy_values(described, MAX_ELEMENTS)
    if copy is None:
        return None
    return described.dtype or "", copy


def _calls(tree: ast.Module) -> list[tuple[ast.Assign, str, str]]:
    """``out = layer(x, ...)`` at the top level: (the statement, ``layer``, ``x``)."""
    found = []
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        call = node.value
        if not (
            isinstance(node.targets[0], ast.Name)
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.args
            and isinstance(call.args[0], ast.Name)
        ):
            continue
        found.append((node, call.func.id, call.args[0].id))
    return found


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    for statement, layer_name, input_name in _calls(tree):
        target = statement.targets[0]
        assert isinstance(target, ast.Name)
        # The output's dtype first (a float16 result is rare), its values last.
        held = describe("", namespace.get(target.id))
        if held is None or held.kind != "tensor" or not (held.dtype or "").startswith(_HALF):
            continue
        layer = namespace.get(layer_name)
        if layer is None or _kind(layer) != "layer":
            continue
        output = _values(namespace.get(target.id))
        if output is None:
            continue
        given = _values(namespace.get(input_name))
        if given is None or not given[0].startswith(("float", "half")):
            continue
        values, inputs = output[1], given[1]
        if not bool(numpy.all(numpy.isfinite(inputs))):
            continue
        largest = float(numpy.max(numpy.abs(inputs)))
        squared = largest * largest > FLOAT16_MAX
        if not bool(numpy.all(numpy.isfinite(values))):
            if squared or largest > math.log(FLOAT16_MAX):
                return [
                    _note(tree, source, statement, layer_name, input_name, layer, largest, None)
                ]
            continue
        rows = _zero_rows(numpy, values, inputs)
        if rows and squared and _squares(layer):
            row_largest = float(numpy.max(numpy.abs(inputs[rows])))
            return [
                _note(tree, source, statement, layer_name, input_name, layer, row_largest, rows)
            ]
    return []


def _zero_rows(numpy: Any, values: Any, inputs: Any) -> list[int]:
    """The rows (first axis) where the output is 0 everywhere and the input's square
    passes float16's range."""
    if values.ndim < 1 or inputs.ndim < 1 or values.shape[0] != inputs.shape[0]:
        return []
    count = values.shape[0]
    zero = numpy.all(values.reshape(count, -1) == 0, axis=1)
    peak = numpy.max(numpy.abs(inputs.reshape(count, -1)), axis=1)
    return [int(i) for i in numpy.nonzero(zero & (peak * peak > FLOAT16_MAX))[0]]


_SQUARING = word_gate(r"\b(square|norm|pow|rsqrt|l2_normalize)\s*\(|\*\*\s*2\b")


def _squares(layer: Any) -> bool:
    """Whether the learner's own layer class squares something in ``call`` (a norm, an
    RMS, a variance): an output of zeros is then the square's overflow divided into it,
    not an activation that is 0 (a ReLU of negative values)."""
    cls = type(layer)
    if is_library_class(cls):
        return False
    call = getattr(cls, "call", None)
    if not isinstance(call, types.FunctionType):
        return False
    try:
        text = inspect.getsource(call)
    except (OSError, TypeError):
        return False
    return len(text) <= MAX_CALL_SOURCE and _SQUARING.search(text) is not None


def _created(tree: ast.Module, source: str, name: str) -> ast.Call | None:
    """The cell's top-level ``name = Cls(...)``, the layer's creation."""
    for node in outside_scopes(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
        ):
            text = ast.get_source_segment(source, node.value)
            if text and "\n" not in text:
                return node.value
    return None


def _accepts_dtype(layer: Any) -> bool:
    """Whether the layer's class takes ``dtype=`` (itself or passed on by ``**kwargs``)."""
    try:
        parameters = inspect.signature(type(layer).__init__).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "dtype" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _note(
    tree: ast.Module,
    source: str,
    statement: ast.Assign,
    layer_name: str,
    input_name: str,
    layer: Any,
    largest: float,
    zero_rows: list[int] | None,
) -> Note:
    target = statement.targets[0]
    assert isinstance(target, ast.Name)
    call = ast.get_source_segment(source, statement.value) or f"{layer_name}({input_name})"
    if zero_rows is None:
        result = f"`{target.id}` holds inf or NaN"
    else:
        shown = ", ".join(str(i) for i in zero_rows[:5]) + (", ..." if len(zero_rows) > 5 else "")
        plural = "s" if len(zero_rows) > 1 else ""
        result = f"row{plural} {shown} of `{target.id}` {'are' if plural else 'is'} 0 everywhere"
    where = " in those rows" if zero_rows else ""
    name = library_attribute(library_attribute(layer, "dtype_policy"), "name")
    policy = (
        f"its dtype policy is `{name}`" if isinstance(name, str) else "a mixed-precision policy"
    )
    if largest * largest > FLOAT16_MAX:
        cause = (
            f"`{input_name}` reaches {largest:.4g} in magnitude{where}, and its square, "
            f"{largest * largest:.3g}, is above 65504, the largest float16 number"
        )
    else:
        cause = (
            f"`{input_name}` reaches {largest:.4g} in magnitude, and the exponential of "
            "anything above 11.1 is above 65504, the largest float16 number"
        )
    text = (
        f"`{target.id} = {call}` (line {statement.lineno} of this cell): `{layer_name}` "
        f"computes in float16 ({policy}), and {result}. "
        f"{cause}: an intermediate value inside the layer overflowed to inf, and what "
        "followed turned it into this output. Nothing raises. Loss scaling does not help "
        "here: it scales gradients, not activations. Compute this layer in float32"
    )
    created = _created(tree, source, layer_name)
    if created is not None and _accepts_dtype(layer):
        written = ast.get_source_segment(source, created) or ""
        inner = written[: written.rstrip().rfind(")")].rstrip()
        separator = "" if inner.endswith("(") else ", "
        text += f': `{layer_name} = {inner}{separator}dtype="float32")`'
    else:
        text += f' (create `{layer_name}` with `dtype="float32"`)'
    text += ", or scale its inputs down to a range float16 holds."
    return reports.note(text, SECTION)
