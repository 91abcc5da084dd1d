"""An argument whose dtype the op itself fixes (issue #25): ``tf.where(keep, a, b)`` with a
float or integer ``keep``, and a spectral op of ``tf.signal`` (``tf.signal.stft``) given
integer samples. (Logical ops given numbers are read with the operators, in ``dtypes.py``.)

These are not two operands that disagree, so "cast one to the other's dtype" is no cure:
a condition must be bool whatever the other arguments are, and a signal must be a float
whatever window it is cut with. TensorFlow's messages (``cannot compute SelectV2 as input
#0(zero-based) was expected to be a bool tensor but is a float tensor``, ``dtype must be a
floating point type. Found <dtype: 'int16'>``) name an input number or nothing at all.
The reading names the argument in the user's call, the dtype its role requires, and the
conversion in the user's names: a comparison (``keep > 0``) for a 0/1 number used as a
condition, and for integer samples a float cast scaled by the integer dtype's range
(``tf.cast(samples, tf.float32) / 32768.0`` for int16), since audio read as integers spans
that range and a spectrogram of floats in [-1, 1] is what the rest of a pipeline expects.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, Operand
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)

# Eager: the op and which of its inputs (zero-based) was not bool.
_EAGER_BOOL = re.compile(
    r"cannot compute (?P<op>SelectV2|Select) as input "
    r"#(?P<index>\d+)\(zero-based\) was expected to be a bool tensor but is a "
    r"(?P<actual>\w+) tensor"
)
# Graph (inside a tf.function): the input is named.
_GRAPH_BOOL = re.compile(
    r"Input '(?P<input>\w+)' of '(?P<op>SelectV2|Select)' Op "
    r"has type (?P<actual>\w+) that does not match expected type of bool"
)
# tf.signal's framing ops check the signal's dtype before any op runs.
_FLOAT_SIGNAL = re.compile(
    r"dtype must be a floating point type\. Found <dtype: '(?P<actual>\w+)'>"
)
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}
# The tf functions that build each op, and the parameter of each input (zero-based).
_BOOL_CALLS = {
    "SelectV2": (("where", "where_v2"), ("condition", "x", "y")),
    "Select": (("where", "where_v2"), ("condition", "x", "y")),
}
# An integer signal's full scale: dividing by it puts the samples in [-1, 1].
_FULL_SCALE = {"int8": "128.0", "int16": "32768.0", "int32": "2147483648.0"}
_MAX_CHECKED = 1_000_000  # elements read to see whether a condition holds only 0 and 1


def _called(call: ast.Call, line: FailingLine, context: ErrorContext) -> str:
    """The library function's own name (``where``), or "" for anything else."""
    function = library_callee(call.func, line.frame, context)
    name = getattr(function, "__name__", "")
    return name if type(name) is str else ""


def _argument(call: ast.Call, index: int, parameter: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if any(isinstance(node, ast.Starred) for node in call.args[: index + 1]):
        return None
    return call.args[index] if index < len(call.args) else None


def _zeros_and_ones(operand: Operand) -> bool:
    """Whether a numeric value holds only 0 and 1 (a mask kept as numbers)."""
    value = operand.value
    try:
        size = 1
        for dim in operand.shape or ():
            size *= dim or 0
        if size == 0 or size > _MAX_CHECKED:
            return False
        numbers = value.numpy() if hasattr(value, "numpy") else value
        flat = numbers.reshape(-1)
        return bool(((flat == 0) | (flat == 1)).all())
    except Exception:
        return False


def _read_bool_input(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None:
        return None
    op = error.group("op")
    functions, parameters = _BOOL_CALLS[op]
    if error.matched(_EAGER_BOOL):
        index = int(error.group("index"))
    else:
        named = error.group("input")
        index = parameters.index(named) if named in parameters else -1
    name = _called(call, line, context)
    if name not in functions or not 0 <= index < len(parameters):
        return None
    parameter = parameters[index]
    node = _argument(call, index, parameter)
    operand = operand_of(node, line, context) if node is not None else None
    actual = _DTYPE_NAMES.get(error.group("actual"), error.group("actual"))
    if operand is None or operand.dtype != actual or line.frame.segment(node) is None:
        return None
    source = operand.source
    called = line.frame.segment(call.func) or name
    rule = (
        f"The condition {code(source)} of {code(called)} (its {code(parameter)}) must be bool, "
        f"one True or False per element: {code(called)} takes no other dtype there, whatever "
        f"the other arguments are, and {code(source)} is {operand.description}"
    )
    if actual == "string":
        return Finding(rule + ": compare the strings to get a bool tensor.", None)
    tf = tf_alias(context)
    comparison = f"{source} > 0" if isinstance(node, (ast.Name, ast.Attribute)) else None
    zero_one = _zeros_and_ones(operand)
    if comparison is None:
        comparison = f"{tf}.cast({source}, {tf}.bool)"
        rule += (
            f". {code(comparison)} gives True where it is nonzero; where a threshold decides, "
            "compare it instead"
        )
    elif zero_one:
        rule += (
            f". It holds only 0s and 1s (a mask kept as numbers): compare it, "
            f"{code(comparison)} (or {code(f'{tf}.cast({source}, {tf}.bool)')}), or pass the "
            "bool mask itself if it was made from one"
        )
    else:
        rule += (
            f". Give it the comparison that says which elements to take; if nonzero means "
            f"take, that is {code(comparison)}"
        )
    fixed = rewrite(line.frame, line.statement, node, comparison)
    # Only a 0/1 mask has one right conversion; for other numbers a threshold is the
    # learner's choice, offered above and not printed as the fix.
    fix = code(fixed) if fixed and "\n" not in fixed and zero_one else None
    return Finding(rule + ".", fix)


def _read_float_signal(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None:
        return None
    function = library_callee(call.func, line.frame, context)
    module = getattr(function, "__module__", "")
    if type(module) is not str or ".signal." not in f"{module}.":
        return None
    node = _argument(call, 0, "signals")
    operand = operand_of(node, line, context) if node is not None else None
    actual = error.group("actual")
    if operand is None or operand.dtype != actual or not actual.startswith(("int", "uint")):
        return None
    source = operand.source
    called = line.frame.segment(call.func) or "the call"
    tf = tf_alias(context)
    cast = f"{tf}.cast({source}, {tf}.float32)"
    rule = (
        f"{code(called)} computes a Fourier transform of windowed frames: the signal must be "
        f"a float tensor, and {code(source)} is {operand.description}. TensorFlow never "
        "converts a dtype by itself"
    )
    scale = _FULL_SCALE.get(actual)
    if scale is not None:
        converted = f"{cast} / {scale}"
        rule += (
            f": cast it to float32 and divide by {scale}, the {actual} range, so the samples "
            "lie in [-1, 1] as audio read as floats does"
        )
    elif actual == "uint8":
        converted = f"({cast} - 128.0) / 128.0"
        rule += ": cast it to float32 and center 8-bit samples on 0 (they lie in 0..255)"
    else:
        converted = cast
        rule += ": cast it to float32"
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        converted = converted.replace(source, f"({source})", 1)
    fixed = rewrite(line.frame, line.statement, node, converted)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _read_contract(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if error.matched(_FLOAT_SIGNAL):
        return _read_float_signal(error, line, context)
    return _read_bool_input(error, line, context)


DTYPE_CONTRACT = ErrorFamily(
    "an argument whose dtype the op fixes",
    messages=(Message(_EAGER_BOOL), Message(_GRAPH_BOOL), Message(_FLOAT_SIGNAL)),
    read=_read_contract,
    section="dtype-casting",
)
