"""An R^2 whose total sum of squares is not taken around the mean.

R^2 is ``1 - SS_res / SS_tot`` with ``SS_tot = sum((y - mean(y))**2)``: the error of the
model against that of predicting the mean. Written ``sum(y**2)``, the total is larger by
``n * mean(y)**2``, and the R^2 is pushed towards 1 whenever ``y`` has a mean far from 0:
a poor model looks excellent. Nothing raises.

Read after a completed cell whose source holds ``r2``/``r_squared``/``rsq`` (a
regular-expression search otherwise): a top-level assignment to a name whose words say R^2
(``r2``, ``R2``, ``r_squared``, ``rsquared``, ``rsq``, with a suffix or prefix joined by
``_``) of ``1 - A / B``, where ``B`` (inline, or the name's assignment in the cell) is a sum
(``tf.reduce_sum``, ``np.sum``, ``.sum()``) of a square (``y ** 2``, ``tf.square(y)``) of a
name ``y`` holding a float array or tensor, nothing subtracted from it. The symptom,
measured with NumPy: the sum of ``y**2`` is more than ``INFLATION`` times the centred
one (``y``'s mean is not small against its spread). The note gives both R^2 values (when
``A`` is a name holding a number) and the fix, the sum with ``y``'s mean subtracted.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name

SECTION = "reducing-tensors"
WANTED = re.compile(r"r_?2|r_?sq", re.IGNORECASE)
_R2_NAME = re.compile(r"^(?:\w+_)?(?:r2|r_2|r_squared|rsquared|rsq|r_sq)(?:_\w+)?$", re.IGNORECASE)
MAX_VALUES = 10_000_000
INFLATION = 1.1
_SUMS = frozenset({"reduce_sum", "sum"})
_MEANS = {"reduce_sum": "reduce_mean", "sum": "mean"}


def _squared_name(node: ast.expr) -> ast.Name | None:
    """``y`` for ``y ** 2`` or ``square(y)``."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 2
        and isinstance(node.left, ast.Name)
    ):
        return node.left
    if isinstance(node, ast.Call) and call_name(node) == "square" and len(node.args) == 1:
        return node.args[0] if isinstance(node.args[0], ast.Name) else None
    return None


def _uncentred_total(node: ast.expr) -> tuple[ast.Call, ast.Name] | None:
    """``(sum call, y)`` for ``tf.reduce_sum(y ** 2)``, ``np.sum(tf.square(y))``,
    ``(y ** 2).sum()``, with no axis."""
    if not isinstance(node, ast.Call) or call_name(node) not in _SUMS or node.keywords:
        return None
    if len(node.args) == 1:
        squared = _squared_name(node.args[0])
    elif not node.args and isinstance(node.func, ast.Attribute):
        squared = _squared_name(node.func.value)
    else:
        squared = None
    return (node, squared) if squared is not None else None


def uncentred_r2_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    for name, assignments in code.assigned.items():
        if _R2_NAME.match(name) is None:
            continue
        line, value = assignments[-1]
        note = _note(code, name, line, value, namespace)
        if note is not None:
            return [note]
    return []


def _ratio(value: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """``(A, B)`` for ``1 - A / B``."""
    if not (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Sub)
        and isinstance(value.left, ast.Constant)
        and value.left.value == 1
        and isinstance(value.right, ast.BinOp)
        and isinstance(value.right.op, ast.Div)
    ):
        return None
    return value.right.left, value.right.right


def _note(
    code: CellCode, name: str, line: int, value: ast.expr, namespace: dict[str, Any]
) -> Note | None:
    ratio = _ratio(value)
    if ratio is None:
        return None
    residual, total = ratio
    total_name = total.id if isinstance(total, ast.Name) else None
    total_value = code.assignment_before(total_name, line) if total_name else total
    if total_value is None:
        return None
    found = _uncentred_total(total_value)
    numpy = sys.modules.get("numpy")
    if found is None or numpy is None:
        return None
    call, target = found
    if target.id not in namespace or code.rebound_after((target.id,), line):
        return None
    values = held_array(namespace[target.id], MAX_VALUES, ("float",))
    if values is None or values.size < 2:
        return None
    flat = values.astype("float64").reshape(-1)
    raw = float(flat @ flat)
    centred = float(((flat - flat.mean()) ** 2).sum())
    if centred <= 0 or raw <= INFLATION * centred:
        return None
    fix = _fix(code, call, target, total_name, total_value, name, value)
    written = code.segment(total_value)
    if written is None:
        return None
    values_text = ""
    residual_value = _number(residual, namespace)
    if residual_value is not None:
        values_text = (
            f" Here it gives {1 - residual_value / raw:.4f}; around the mean, "
            f"{1 - residual_value / centred:.4f}."
        )
    where = f"`{total_name}`, `{written}`," if total_name else f"`{written}`"
    text = (
        f"`{name}` (line {line} of this cell) is an R^2 whose total sum of squares, {where} "
        f"is taken around 0, not around the mean of `{target.id}` (mean {flat.mean():.4g}): "
        f"it is {raw / centred:.3g} times the centred one, which pushes the R^2 towards 1. "
        f"R^2 compares the model with predicting the mean, so the total subtracts it."
        f"{values_text}"
    )
    text += f" Fix: `{fix}`." if fix is not None else ""
    return reports.note(text, SECTION)


def _number(node: ast.expr, namespace: dict[str, Any]) -> float | None:
    """The number a name holds: a Python float, a one-value array, a 0-d float tensor
    (read through TensorFlow's own ``numpy``)."""
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return None
    held = namespace[node.id]
    if isinstance(held, float):  # a Python or NumPy float
        return float(held)
    operand = describe(node.id, held)
    if operand is None or not (operand.dtype or "").startswith("float"):
        return None
    if operand.kind == "tensor" and operand.shape == ():
        to_numpy = library_attribute(held, "numpy")
        number = to_numpy() if to_numpy is not None else None
        return float(number) if type(number).__module__ == "numpy" else None
    values = held_array(held, 1, ("float",))
    return float(values.reshape(-1)[0]) if values is not None else None


def _fix(
    code: CellCode,
    call: ast.Call,
    target: ast.Name,
    total_name: str | None,
    total_value: ast.expr,
    name: str,
    value: ast.expr,
) -> str | None:
    function = dotted_name(call.func)
    kind = call_name(call)
    if kind not in _MEANS:
        return None
    if len(call.args) == 1:  # tf.reduce_sum(y ** 2): the library's mean
        if function is None or "." not in function:
            return None
        mean = f"{function.rsplit('.', 1)[0]}.{_MEANS[kind]}({target.id})"
    else:  # (y ** 2).sum(): the array's own mean
        mean = f"{target.id}.mean()"
    new = f"({target.id} - {mean})"
    if total_name is not None:
        statement = code.statement_of(total_value)
        text = code.replaced_in(statement, target, new) if statement is not None else None
        return text
    statement = code.statement_of(value)
    return code.replaced_in(statement, target, new) if statement is not None else None
