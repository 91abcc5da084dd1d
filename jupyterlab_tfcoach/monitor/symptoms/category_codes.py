"""Category codes outside the range a one-hot op or a layer expects, taken silently.

``tf.one_hot(labels, depth)`` (and ``keras.ops.one_hot``) turns a code ``>= depth`` or a
negative one into a row of zeros: no class at all, no error. A
``keras.layers.CategoryEncoding(num_tokens=n)`` does the same for codes ``>= n``, and a
Keras ``Embedding`` on the CPU reads a negative id from the end of its table (``-1`` is
the last row), as NumPy indexing does; an id ``>= input_dim`` raises there (an error
family), but on a GPU gives zeros (TensorFlow 2.21 / Keras 3.15, probed on the CPU). The
usual cause is a depth counted wrong: classes numbered from 1, or the depth taken from
a sample that did not hold the largest class.

Found after a cell that completed (``cell_reading``: its top-level calls, parsed once per
source): a ``one_hot(codes, depth)`` call, or a call of a name holding one of those two
layers, whose ``codes`` name an integer tensor or array (at most a million values: one
min/max pass), or are whole numbers written in the cell (``enc(np.array([1, 3, 5]))``),
with a value outside ``[0, depth)``; ``depth`` is a whole-number literal or a name
holding an int. The note names the call, the codes' range and the depth, and
gives the call with the depth the codes need (``max + 1``), or with the codes shifted to
start at 0 when they run from 1 to exactly the depth.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro, instance_attribute
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    numpy_values,
    reference_path,
    unwrap,
    value_at,
)
from jupyterlab_tfcoach.monitor.syntax import held_at, int_literal

SECTION = "joining-indexing"
MAX_NOTES = 2
MAX_ELEMENTS = 1_000_000
MAX_WRITTEN = 1000
# The layer classes that take codes silently, and the attribute holding their range.
_LAYER_RANGES = {
    ("keras.src.layers.preprocessing.category_encoding", "CategoryEncoding"): "num_tokens",
    ("keras.src.layers.core.embedding", "Embedding"): "input_dim",
}


@dataclass(frozen=True)
class Coded:
    """``tf.one_hot(labels, 3)`` or ``encoder(ids)``: the codes and where the range is."""

    call: ast.Call
    codes: ast.expr
    depth: ast.expr | None  # one_hot's depth; None for a layer (read from the layer)


def _depth_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("depth", "num_classes"):
            return keyword.value
    return call.args[1] if len(call.args) >= 2 else None


def _candidates(code: CellCode) -> list[Coded]:
    found: list[Coded] | None = code.memo.get("category_codes")
    if found is not None:
        return found
    found = code.memo["category_codes"] = []
    for node in code.nodes:
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if isinstance(node.args[0], ast.Starred):
            continue
        if call_name(node) == "one_hot" and isinstance(node.func, ast.Attribute):
            depth = _depth_argument(node)
            if depth is not None:
                found.append(Coded(node, node.args[0], depth))
        elif reference_path(node.func) is not None and len(node.args) == 1:
            found.append(Coded(node, node.args[0], None))
    return found


def _layer_range(func: ast.AST, namespace: dict[str, Any]) -> tuple[str, str, int] | None:
    """The layer's class name, the attribute holding its range and the range."""
    found, layer = held_at(reference_path(func), namespace)
    if not found:
        return None
    for cls in class_mro(layer):
        attribute = _LAYER_RANGES.get((cls.__module__, cls.__name__))
        if attribute is None:
            continue
        stored, size = instance_attribute(layer, attribute)
        if stored and type(size) is int and size > 0:
            return cls.__name__, attribute, size
        return None
    return None


def _depth(node: ast.expr, namespace: dict[str, Any]) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return int(node.value)
    found, value = held_at(reference_path(node), namespace)
    return int(value) if found and type(value) is int else None


def _written_codes(node: ast.AST, text: str | None) -> Operand | None:
    """Codes written in the cell (``enc(np.array([1, 3, 5]))``, ``enc([1, 3])``): at most
    ``MAX_WRITTEN`` whole numbers in a list or tuple, as an int64 NumPy array."""
    numpy = sys.modules.get("numpy")
    if numpy is None or text is None or not isinstance(node, ast.List | ast.Tuple):
        return None
    if not 0 < len(node.elts) <= MAX_WRITTEN:
        return None
    values = [int_literal(element) for element in node.elts]
    if any(value is None for value in values):
        return None
    count = len(values)
    array = numpy.array(values, dtype="int64")
    return Operand(text, "array", f"{count} codes written in the cell", (count,), "int64", array)


def _code_range(operand: Operand, depth: int) -> tuple[int, int, int] | None:
    """The smallest and largest code of an integer tensor, variable or array, and how
    many codes are outside ``[0, depth)``."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not (operand.dtype or "").startswith(("int", "uint")):
        return None
    value = numpy_values(operand, MAX_ELEMENTS)
    if value is None:
        return None
    low, high = int(numpy.min(value)), int(numpy.max(value))
    if 0 <= low and high < depth:
        return low, high, 0
    return low, high, int(numpy.count_nonzero((value < 0) | (value >= depth)))


def category_code_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for coded in _candidates(code):
        line = coded.call.lineno
        layer: tuple[str, str, int] | None = None
        if coded.depth is None:
            layer = _layer_range(coded.call.func, namespace)
            if layer is None:
                continue
            depth: int | None = layer[2]
        else:
            depth = _depth(coded.depth, namespace)
        if depth is None or depth < 1:
            continue
        held = unwrap(coded.codes)
        path = reference_path(held)
        if path is None:
            operand = _written_codes(held, code.segment(coded.codes))
        elif code.rebound_after(path, line):
            continue
        else:
            text = code.segment(held)
            operand = value_at(held, namespace, text) if text is not None else None
        span = _code_range(operand, depth) if operand is not None else None
        if operand is None or span is None:
            continue
        low, high, _ = span
        embedding = layer is not None and layer[0] == "Embedding"
        if low >= 0 and high < depth:
            continue
        if embedding and low >= 0:
            continue  # an id past the table raises on the CPU: the error families tell it
        note_text = _text(code, coded, operand, span, depth, layer)
        if note_text is not None:
            notes.append(reports.note(note_text, SECTION))
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _text(
    code: CellCode,
    coded: Coded,
    operand: Operand,
    span: tuple[int, int, int],
    depth: int,
    layer: tuple[str, str, int] | None,
) -> str | None:
    call_text = code.segment(coded.call)
    codes_text = code.segment(coded.codes)
    if call_text is None or codes_text is None:
        return None
    low, high, outside = span
    head = (
        f"`{call_text}` (line {coded.call.lineno} of this cell) is given `{codes_text}`, "
        f"{operand.description} whose codes run from {low} to {high}"
    )
    if layer is not None:
        name, attribute, _ = layer
        owner = code.segment(coded.call.func)
        expects = f"the `{name}` layer `{owner}` has `{attribute}={depth}`: codes 0 to {depth - 1}"
    else:
        expects = f"the depth is {depth}: codes 0 to {depth - 1}"
    if layer is not None and layer[0] == "Embedding":
        return (
            f"{head}, but {expects}. A negative id is read from the end of the table "
            f"(`-1` is the row of id {depth - 1}), without any error, so those examples "
            "share another id's vector. Map the negative ids (often a padding or "
            "'unknown' code) to an id of their own before the layer, with `input_dim` "
            "one larger to hold it."
        )
    if low < 0:
        return (
            f"{head}, but {expects}. A negative code gives a row of zeros, without any "
            "error: those examples belong to no class. Remove them, or map them to a "
            "class of their own (and count it in the depth)."
        )
    if low >= 1 and high == depth and coded.depth is not None:
        shifted = call_text.replace(codes_text, f"{codes_text} - 1", 1)
        fix = (
            f"The codes count from 1: shift them to start at 0, `{shifted}` (or give "
            f"the depth {high + 1})."
        )
    elif coded.depth is not None:
        depth_text = code.segment(coded.depth)
        if depth_text is None:
            return None
        fixed = _with_depth(code, coded, depth_text, high + 1)
        if fixed is None:
            return None
        fix = f"Give the depth the codes need, their largest value + 1: `{fixed}`."
    else:
        assert layer is not None
        fix = (
            f"Build the layer with `{layer[1]}={high + 1}` (the largest code + 1, or the "
            "vocabulary's size)."
        )
    return (
        f"{head}, but {expects}. Each code from {depth} up becomes a row of zeros, "
        f"without any error: {outside} of the codes here belong to no class. {fix}"
    )


def _with_depth(code: CellCode, coded: Coded, depth_text: str, needed: int) -> str | None:
    call_text = code.segment(coded.call)
    depth = coded.depth
    if call_text is None or depth is None:
        return None
    start = depth.col_offset - coded.call.col_offset
    stop = depth.end_col_offset
    if stop is None or depth.lineno != coded.call.lineno:
        return None
    stop -= coded.call.col_offset
    if call_text[start:stop] != depth_text:
        return None
    return call_text[:start] + str(needed) + call_text[stop:]
