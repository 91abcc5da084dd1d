"""An accuracy computed as the mean of a boolean cast to an integer dtype.

``tf.reduce_mean(tf.cast(preds == labels, tf.int32))`` looks like an accuracy, but
TensorFlow averages an integer tensor in that integer dtype: the sum divided by the
count is truncated, so the result is 0 unless every example is right (then 1). Nothing
raises. NumPy's ``np.mean`` and ``keras.ops.mean`` of integers give a float and are
right; so is a cast to a float dtype before the mean.

Found after a cell that completed, from its source alone (``cell_reading``, parsed once
per source): a top-level ``tf.reduce_mean(x)`` / ``tf.math.reduce_mean(x)`` whose ``x``
is ``tf.cast(b, <integer dtype>)`` (``tf.int32``, ``tf.int64``, ``"int32"``, ...), directly
or through a name assigned in the cell, where ``b`` is a comparison (``==``, ``>``,
``tf.equal``, ``tf.math.greater``, ...) or a name holding a boolean tensor or array after
the cell. The fix is the same cast to ``float32``, in the learner's names.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import BOOL_RESULT_CALLS
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    value_at,
)

SECTION = "dtype-casting"
MAX_NOTES = 2
_INTEGER_DTYPE = re.compile(r"^(?:(?:tf|tensorflow|np|numpy)\.)?(u?int(?:8|16|32|64))$")
_BOOLEAN_CALLS = BOOL_RESULT_CALLS | {"in_top_k"}


def _integer_dtype(code: CellCode, node: ast.AST) -> str | None:
    """``int32`` for ``tf.int32``, ``"int32"``, ``np.int64``; None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        text = node.value
    else:
        text = code.segment(node) or ""
    found = _INTEGER_DTYPE.match(text)
    return found.group(1) if found else None


def _dtype_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "dtype":
            return keyword.value
    return call.args[1] if len(call.args) >= 2 else None


def _boolean(code: CellCode, node: ast.AST, namespace: dict[str, Any], line: int) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Call) and call_name(node) in _BOOLEAN_CALLS:
        return True
    path = reference_path(node)
    if path is None or code.rebound_after(path, line):
        return False
    text = code.segment(node)
    held = value_at(node, namespace, text) if text is not None else None
    return held is not None and held.dtype == "bool"


@dataclass(frozen=True)
class IntegerMean:
    """``tf.reduce_mean`` of an integer cast, its note's text made from the source."""

    boolean: ast.AST  # what was cast: a comparison, or a name that must hold booleans
    line: int
    text: str


def _candidates(code: CellCode) -> list[IntegerMean]:
    """The cell's means of an integer cast (source only, kept with the parsed cell)."""
    found: list[IntegerMean] | None = code.memo.get("integer_means")
    if found is not None:
        return found
    found = code.memo["integer_means"] = []
    for node in code.nodes:
        if not isinstance(node, ast.Call) or call_name(node) != "reduce_mean" or not node.args:
            continue
        module = code.segment(node.func.value) if isinstance(node.func, ast.Attribute) else None
        if module is None or module.split(".")[0] not in ("tf", "tensorflow"):
            continue
        line = node.lineno
        argument = node.args[0]
        cast: ast.AST | None = argument
        if isinstance(argument, ast.Name):
            cast = code.assignment_before(argument.id, line)
        if not (isinstance(cast, ast.Call) and call_name(cast) == "cast" and cast.args):
            continue
        dtype_node = _dtype_argument(cast)
        dtype = _integer_dtype(code, dtype_node) if dtype_node is not None else None
        if dtype is None or dtype_node is None:
            continue
        text = _text(code, node, argument, cast, dtype_node, dtype, module)
        if text is not None:
            found.append(IntegerMean(cast.args[0], line, text))
    return found


def integer_mean_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for found in _candidates(code):
        if _boolean(code, found.boolean, namespace, found.line):
            notes.append(reports.note(found.text, SECTION))
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _text(
    code: CellCode,
    mean: ast.Call,
    argument: ast.expr,
    cast: ast.Call,
    dtype_node: ast.expr,
    dtype: str,
    module: str,
) -> str | None:
    mean_text, cast_text = code.segment(mean), code.segment(cast)
    dtype_text, argument_text = code.segment(dtype_node), code.segment(argument)
    if None in (mean_text, cast_text, dtype_text, argument_text):
        return None
    assert mean_text and cast_text and dtype_text and argument_text
    root = module.split(".")[0]
    float_dtype = '"float32"' if isinstance(dtype_node, ast.Constant) else f"{root}.float32"
    if argument is cast:
        fixed = mean_text.replace(dtype_text, float_dtype, 1) if dtype_text in mean_text else None
        where = ""
    else:
        fixed = mean_text.replace(argument_text, f"{root}.cast({argument_text}, {root}.float32)", 1)
        where = f" (`{argument_text}` is `{cast_text}`)"
    if fixed is None:
        return None
    return (
        f"`{mean_text}` (line {mean.lineno} of this cell){where} averages 0s and 1s in "
        f"{dtype}: TensorFlow keeps an integer mean in the integer dtype, so the sum "
        "divided by the count is truncated and the result is 0 unless every value is 1, "
        "without any error. Cast to a float dtype before the mean: "
        f"`{fixed}`."
    )
