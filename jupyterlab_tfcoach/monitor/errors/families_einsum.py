"""An einsum operand whose rank is not the number of letters the equation gives it.

``tf.einsum("ij,j->i", A, w)`` reads its equation as one group of letters per operand, one
letter per axis: ``j`` says ``w`` is a vector. Given a ``(3, 1)`` column, TensorFlow says
only ``Expected input 1 to have rank 1 but got: 2``, which names neither the operand nor
the letters. The reading here takes the equation written on the failing line, the
operand the message numbers (input 0 is the first tensor after the equation), its letters
and its shape, and says which does not match which. When the operand has one axis too many
and that axis has size 1 (a column where a vector was meant), the fix drops that axis by
indexing it (``w[:, 0]``), which keeps the equation and the result's shape; another extra
or missing axis has no one right fix (the equation or the data is to change), so only the
rule is said.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_RANK = re.compile(
    r"Expected input (?P<index>\d+) to have rank (?P<wanted>\d+) but got: (?P<got>\d+)"
)
_MAX_RANK = 8


def _einsum_call(line: FailingLine) -> ast.Call | None:
    """The ``einsum`` call on the failing line with its equation written as a string."""
    for part in line.frame.header():
        for node in ast.walk(part):
            if (
                isinstance(node, ast.Call)
                and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "einsum"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and not any(isinstance(arg, ast.Starred) for arg in node.args)
            ):
                return node
    return None


def _dims(value: object) -> tuple[int | None, ...] | None:
    shape = library_attribute(value, "shape")
    try:
        dims = tuple(shape)  # type: ignore[arg-type]
    except Exception:
        return None
    if len(dims) > _MAX_RANK or not all(size is None or type(size) is int for size in dims):
        return None
    return dims


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = _einsum_call(line)
    if call is None:
        return None
    equation = str(call.args[0].value).replace(" ", "")  # type: ignore[attr-defined]
    inputs = equation.split("->", 1)[0].split(",")
    index, wanted, got = (int(error.group(name)) for name in ("index", "wanted", "got"))
    if index >= len(inputs) or 1 + index >= len(call.args) or "." in inputs[index]:
        return None
    letters = inputs[index]
    if len(letters) != wanted or got == wanted:
        return None  # not the equation written here
    operand = call.args[1 + index]
    found, value = value_of(operand, line.frame, context)
    dims = _dims(value) if found else None
    source, function = segment_of(line, operand), segment_of(line, call.func)
    if dims is None or len(dims) != got or not source or not function:
        return None
    shape = "(" + ", ".join("None" if size is None else str(size) for size in dims) + ")"
    shape = shape.replace(",)", ")") if len(dims) != 1 else f"({dims[0]},)"
    axes = "axis" if wanted == 1 else "axes"
    rule = (
        f'The equation "{equation}" of {code(function)} gives one group of letters per '
        f"operand, one letter per axis: {code(source)} (operand {index + 1} after the "
        f'equation) gets "{letters}", {wanted} {axes}, but {code(source)} is {shape}, '
        f"rank {got}"
    )
    if got != wanted + 1:
        return Finding(
            rule + ": change the equation's letters for it or the operand's shape.", None
        )
    ones = [axis for axis, size in enumerate(dims) if size == 1]
    if len(ones) != 1:
        return Finding(rule + ".", None)
    dropped = ones[0]
    picks = ", ".join("0" if axis == dropped else ":" for axis in range(got))
    if dropped == got - 1 and got > 1:
        picks = ", ".join([":"] * (got - 1) + ["0"])
    indexed = f"{source}[{picks}]" if source.isidentifier() else f"({source})[{picks}]"
    fixed = rewrite(line.frame, call, operand, indexed)
    statement = line.frame.statement()
    whole = (
        rewrite(line.frame, statement, call, fixed)
        if statement is not None and fixed and not hasattr(statement, "body")
        else fixed
    )
    rule += (
        f": its axis {dropped} has size 1, an axis the equation does not name. Drop it by "
        f"indexing, {code(indexed)}, which keeps the equation and the result's shape"
    )
    if not whole or "\n" in whole:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(whole))


EINSUM_RANK = ErrorFamily(
    "an einsum operand of another rank than its letters",
    messages=(Message(_RANK),),
    read=_read,
    section="shape-dtype-device",
)
