"""Two arguments of one op with different dtypes, where the op's message only numbers an
input past the first two (issue #25): ``tf.edit_distance(hyp, truth)`` with an int64
``hyp`` (what the CTC decoders return) and an int32 ``truth``, where TensorFlow says
``cannot compute EditDistance as input #4(zero-based) was expected to be a int64 tensor
but is a int32 tensor``. Sparse and ragged tensors are several tensors to the op, so the
input number is not the argument's position, and the generic dtype reading (which knows
the two operands of an operator) cannot tell which argument is meant.

The reading is the values': of the library call on the failing line, exactly one
argument holds the dtype the op refused and exactly one the dtype it expected (arrays,
tensors, variables, sparse and ragged tensors, read from their own ``dtype``). The entry
names both with their dtypes and casts the refused one to the other's dtype where it is
written (``tf.cast`` takes sparse and ragged tensors too): the op fixed its type from an
earlier input, the one already of that dtype.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_arguments import library_callable
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)

# An eager op refusing an input past its first two (the first two are the operator
# reading's, in ``dtypes.py``).
_LATER_INPUT = re.compile(
    r"cannot compute (?P<op>\w+) as input #(?P<index>[2-9]|\d\d+)\(zero-based\) was expected "
    r"to be an? (?P<expected>\w+) tensor but is an? (?P<actual>\w+) tensor"
)
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}
_COMPOSITE = ("SparseTensor", "RaggedTensor")


def _dtype_name(value: Any) -> str | None:
    """The dtype of an array, tensor, variable, sparse or ragged tensor, by its name."""
    composite = type(value).__name__ in _COMPOSITE and str(type(value).__module__).startswith(
        "tensorflow"
    )
    if not composite and value_kind(value) not in ("array", "tensor", "variable"):
        return None
    name = getattr(getattr(value, "dtype", None), "name", None)
    return name if type(name) is str else None


def _read_operand_dtypes(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    expected = _DTYPE_NAMES.get(error.group("expected"), error.group("expected"))
    actual = _DTYPE_NAMES.get(error.group("actual"), error.group("actual"))
    frame = line.frame
    statement = frame.statement()
    if statement is None or expected == actual:
        return None
    found: list[tuple[ast.Call, ast.expr, ast.expr]] = []
    for part in frame.header():
        for node in ast.walk(part):
            if (
                not isinstance(node, ast.Call)
                or library_callable(node.func, frame, context) is None
            ):
                continue
            arguments = [*node.args, *(k.value for k in node.keywords if k.arg)]
            dtypes = []
            for argument in arguments:
                known, value = value_of(argument, frame, context)
                dtypes.append(_dtype_name(value) if known else None)
            refused = [a for a, d in zip(arguments, dtypes, strict=True) if d == actual]
            kept = [a for a, d in zip(arguments, dtypes, strict=True) if d == expected]
            if len(refused) == 1 and len(kept) == 1:
                found.append((node, refused[0], kept[0]))
    if len(found) != 1:
        return None
    call, refused_node, kept_node = found[0]
    refused, kept = frame.segment(refused_node), frame.segment(kept_node)
    op = frame.segment(call.func)
    if not (refused and kept and op) or "\n" in refused or "\n" in kept:
        return None
    tf = tf_alias(context)
    cast = f"{tf}.cast({refused}, {tf}.{expected})"
    rule = (
        f"{code(op)} needs its arguments in one dtype: {code(kept)} is {expected} and "
        f"{code(refused)} is {actual} (the op's input #{error.group('index')}). TensorFlow "
        f"never converts one to the other by itself: cast {code(refused)} to {expected}, "
        f"{code(cast)}"
    )
    fixed = None if hasattr(statement, "body") else rewrite(frame, statement, refused_node, cast)
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


OPERAND_DTYPES = ErrorFamily(
    "two arguments of one op in different dtypes, told by input number",
    messages=(Message(_LATER_INPUT),),
    read=_read_operand_dtypes,
    section="dtype-casting",
)
