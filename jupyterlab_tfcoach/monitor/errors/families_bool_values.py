"""A reduction given a bool mask (issue #25): ``tf.reduce_sum(mask, axis=1)`` to count
the True entries, ``tf.reduce_mean(hits)`` for a rate, ``tf.reduce_max(flags)``.

TensorFlow's sums, means, products and maxima have no bool kernel (``Value for attr 'T'
of bool is not in the list of allowed values ... {{node Sum}}``), and it never converts
a dtype by itself. The message names neither the argument nor the cure, so the reading
finds the bool argument on the failing line and casts it there: to int32 for a count or
a cumulative count, to float32 for a mean or a product (an int mean would be rounded
down), and for a maximum or minimum names ``reduce_any``/``reduce_all``, the bool
reductions. The cell's other lines that hand the same bool value to a reduction fail
next, so they are named with their own fix.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.held_values import BOOL_RESULT_CALLS

_BOOL_REFUSED = re.compile(
    r"Value for attr 'T' of bool is not in the list of allowed values.*?\{\{node (?P<op>\w+)\}\}",
    re.S,
)
# The op TensorFlow names -> the dtype a bool is cast to for it (None: the bool
# reduction named in _BOOL_REDUCTION does the work without a cast).
_CAST_FOR = {
    "Sum": "int32",
    "Cumsum": "int32",
    "Mean": "float32",
    "Prod": "float32",
    "Cumprod": "float32",
    "Max": None,
    "Min": None,
}
_BOOL_REDUCTION = {"reduce_max": "reduce_any", "reduce_min": "reduce_all"}
_WHAT = {
    "Sum": "a count of the True entries",
    "Cumsum": "a running count of the True entries",
    "Mean": "the fraction of True entries",
    "Prod": "a product",
    "Cumprod": "a running product",
    "Max": "whether any entry is True",
    "Min": "whether every entry is True",
}
_MAX_OTHERS = 3


def _call_name(call: ast.AST) -> str:
    if not isinstance(call, ast.Call):
        return ""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


_COMPARISONS = BOOL_RESULT_CALLS | {"is_inf"}


def _is_comparison(node: ast.expr) -> bool:
    return isinstance(node, ast.Compare) or _call_name(node) in _COMPARISONS


def _first_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("input_tensor", "x", "input"):
            return keyword.value
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return None


def _replacement(
    call: ast.Call, argument: ast.expr, op: str, line: FailingLine, tf: str
) -> tuple[ast.AST, str] | None:
    """(part of the call to replace, its new text), or None."""
    source = line.frame.segment(argument)
    if not source or "\n" in source:
        return None
    name = _call_name(call)
    if _CAST_FOR.get(op) is None:
        bool_name = _BOOL_REDUCTION.get(name)
        if bool_name is None or not isinstance(call.func, ast.Attribute):
            return None
        owner = line.frame.segment(call.func.value)
        return (call.func, f"{owner}.{bool_name}") if owner else None
    return argument, f"{tf}.cast({source}, {tf}.{_CAST_FOR[op]})"


def _read_bool_reduction(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    op = error.group("op")
    call = line.call
    if op not in _CAST_FOR or not isinstance(call, ast.Call) or line.statement is None:
        return None
    argument = _first_argument(call)
    if argument is None:
        return None
    operand = operand_of(argument, line, context)
    if operand is not None and operand.dtype == "bool":
        source, kind = operand.source, operand.kind
    elif operand is None and _is_comparison(argument):
        # ``tf.equal(ids, 0)``, ``x > 0``: a comparison, bool by what it is written as.
        source, kind = line.frame.segment(argument) or "", "comparison"
    else:
        return None
    tf = tf_alias(context)
    replaced = _replacement(call, argument, op, line, tf)
    rule = (
        f"{code(line.frame.segment(call) or source)} asks for {_WHAT[op]} of {code(source)}, "
        f"a bool {kind}, and TensorFlow's {op} has no bool version: it never "
        "converts a dtype by itself"
    )
    if replaced is None:
        return Finding(rule + f"; cast {code(source)} first ({tf}.cast).", None)
    if _CAST_FOR[op] is None:
        rule += f"; the bool reduction is {code(replaced[1])}"
    else:
        rule += f"; cast it in the call ({_CAST_FOR[op]} for {_WHAT[op]})"
    fixed = rewrite(line.frame, line.statement, replaced[0], replaced[1])
    fix = code(fixed) if fixed and "\n" not in fixed else None
    rule += _same_elsewhere(line, call, source, op, tf)
    return Finding(rule + ".", fix)


def _same_elsewhere(line: FailingLine, failing: ast.Call, source: str, op: str, tf: str) -> str:
    """The cell's other statements giving ``source`` to the same reduction: the next
    error once the failing line is fixed, so each is shown fixed too."""
    tree = line.frame.tree()
    if tree is None:
        return ""
    name = _call_name(failing)
    shown: list[str] = []
    for statement in ast.walk(tree):
        if not isinstance(statement, ast.stmt) or isinstance(
            statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While)
        ):
            continue
        if isinstance(statement, (ast.If, ast.With, ast.Try)):
            continue
        for node in ast.walk(statement):
            if node is failing or not isinstance(node, ast.Call) or _call_name(node) != name:
                continue
            argument = _first_argument(node)
            if argument is None or line.frame.segment(argument) != source:
                continue
            replaced = _replacement(node, argument, op, line, tf)
            fixed = rewrite(line.frame, statement, *replaced) if replaced else None
            if fixed and "\n" not in fixed and statement.lineno != line.frame.position.line:
                shown.append(f"line {statement.lineno}: {code(fixed)}")
            break
        if len(shown) >= _MAX_OTHERS:
            break
    if not shown:
        return ""
    return f"; this cell does the same again, fix it there too ({'; '.join(shown)})"


BOOL_REDUCTION = ErrorFamily(
    "a reduction of a bool mask",
    messages=(Message(_BOOL_REFUSED),),
    read=_read_bool_reduction,
    section="dtype-casting",
    exception_type="InvalidArgumentError",
)
