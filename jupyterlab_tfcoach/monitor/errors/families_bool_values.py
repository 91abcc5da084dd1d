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

A bool value the learner meant as numbers comes first: ``weighted = losses * mask`` with
``mask`` a bool tensor does not weight the floats by 0 and 1. TensorFlow's ``*`` on a bool
tensor is a logical and, so the product comes out bool (the floats read as truth values)
and the sum that follows fails on it. Casting the product would count its True entries, a
wrong number; the cure is the mask made as floats where it is made (its newest one-line
assignment), so the product, and any sum of the mask itself, are numbers.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import cell_frame
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, kind_of, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.held_values import BOOL_RESULT_CALLS
from jupyterlab_tfcoach.monitor.errors.origins import Assignment, newest_assignment

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


# Calls whose result has their first argument's dtype: a bool tensor picked, reshaped or
# reordered (``tf.boolean_mask(hits, region)``) is still bool.
_DTYPE_KEEPING = frozenset(
    {"boolean_mask", "gather", "gather_nd", "reshape", "squeeze", "transpose", "expand_dims"}
)


def _bool_kept(argument: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """``"tensor"`` when ``argument`` is such a call of a TensorFlow function on a name
    holding a bool tensor or array (the result is then a bool tensor), else None."""
    if not isinstance(argument, ast.Call) or _call_name(argument) not in _DTYPE_KEEPING:
        return None
    root = argument.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not (isinstance(root, ast.Name) and root.id == tf_alias(context)):
        return None
    inner = _first_argument(argument)
    held = operand_of(inner, line, context) if inner is not None else None
    return "tensor" if held is not None and held.dtype == "bool" else None


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
    kept = _bool_kept(argument, line, context) if operand is None else None
    if operand is not None and operand.dtype == "bool":
        source, kind = operand.source, operand.kind
    elif kept is not None:
        source, kind = line.frame.segment(argument) or "", kept
    elif operand is None and _is_comparison(argument):
        # ``tf.equal(ids, 0)``, ``x > 0``: a comparison, bool by what it is written as.
        source, kind = line.frame.segment(argument) or "", "comparison"
    else:
        return None
    tf = tf_alias(context)
    if isinstance(argument, ast.Name):
        product = _bool_product(argument.id, line, context, tf)
        if product is not None:
            return product
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


# ------------------------------------------------------- a product with a bool tensor
# (kind, dtype) of a value: its own name, since ``tuple[str, str]`` is the monitor's
# annotation for an explanation, (text, course section).
HeldDtype = tuple[str, str]


def _held_dtype(node: ast.AST, line: FailingLine, context: ErrorContext) -> HeldDtype:
    """(kind, dtype) of what a name holds: ("tensor", "bool"), ("array", "float64"),
    ("float", "float") for a Python float; ("", "") when unknown."""
    found, value = value_of(node, line.frame, context)
    if not found:
        return "", ""
    if type(value) is float:
        return "float", "float"
    kind = kind_of(value)
    if kind not in ("tensor", "array", "variable"):
        return "", ""
    try:
        dtype = value.dtype
        name = str(dtype) if kind == "array" else dtype.name
    except Exception:
        return "", ""
    return (kind, name) if type(name) is str else ("", "")


def _float_side(node: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """The float dtype of a product's other side when it surely holds floats (a float
    literal or a name holding floats in it, no comparison), else None."""
    if _is_comparison(node) or isinstance(node, ast.BoolOp):
        return None
    dtypes: list[str] = []
    for part in ast.walk(node):
        if isinstance(part, ast.Compare):
            return None
        if isinstance(part, ast.Constant) and type(part.value) is float:
            dtypes.append("float")
        elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load):
            _kind, dtype = _held_dtype(part, line, context)
            if dtype == "bool":
                return None
            if dtype.startswith(("float", "half", "bfloat")):
                dtypes.append(dtype)
    if not dtypes:
        return None
    return "float64" if "float64" in dtypes else "float32"


def _bool_product(name: str, line: FailingLine, context: ErrorContext, tf: str) -> Finding | None:
    """``name = floats * mask`` (either order) with ``mask`` a bool tensor: the product
    is a logical and, bool, where a mask weighting was meant. The fix makes the mask
    floats where it is made (else casts it in the product)."""
    made = newest_assignment(name, line.frame, context)
    if made is None or not isinstance(made.assignment.value, ast.BinOp):
        return None
    product = made.assignment.value
    if not isinstance(product.op, ast.Mult):
        return None
    for mask, other in ((product.right, product.left), (product.left, product.right)):
        if not isinstance(mask, ast.Name) or _held_dtype(mask, line, context) != (
            "tensor",
            "bool",
        ):
            continue
        target = _float_side(other, line, context)
        if target is None:
            continue
        floats = made.cell.segment(other)
        if not floats or "\n" in floats:
            return None
        return _product_finding(name, mask, floats, made, target, line, context, tf)
    return None


def _product_finding(
    name: str,
    mask_node: ast.Name,
    floats: str,
    made: Assignment,
    target: str,
    line: FailingLine,
    context: ErrorContext,
    tf: str,
) -> Finding:
    mask = mask_node.id
    rule = (
        f"{code(name)} is bool because {code(made.statement)} ({made.where}) multiplies "
        f"{code(floats)} by {code(mask)}, a bool tensor: TensorFlow does not read a bool "
        f"tensor as 0 and 1 there, its {code('*')} on bools is a logical and, so the "
        f"product is True/False (each float read as a truth value), not {code(floats)} "
        f"weighted by the mask, and no error says so until a sum meets it. Casting "
        f"{code(name)} would count its True entries, a wrong number: make the mask floats "
        "where it is made"
    )
    mask_made = newest_assignment(mask, line.frame, context)
    if mask_made is not None and len(mask_made.assignment.targets) == 1:
        value = mask_made.assignment.value
        written = mask_made.cell.segment(value)
        fixed = (
            rewrite(
                cell_frame(mask_made.cell),
                mask_made.assignment,
                value,
                f"{tf}.cast({written}, {tf}.{target})",
            )
            if written and "\n" not in written
            else None
        )
        if fixed and "\n" not in fixed:
            rule += (
                f" ({mask_made.where}), so that the product and any sum of {code(mask)} are numbers"
            )
            return Finding(rule + ".", f"{mask_made.where}: {code(fixed)}")
    fixed = rewrite(
        cell_frame(made.cell), made.assignment, mask_node, f"{tf}.cast({mask}, {tf}.{target})"
    )
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + f", or cast it in the product ({made.where}).", code(fixed))


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
