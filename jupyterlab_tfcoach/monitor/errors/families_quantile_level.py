"""A quantile's level outside its range: ``np.quantile(scores, level)`` with ``level`` 451.

NumPy's ``quantile`` takes the level as a fraction from 0 to 1 and ``percentile`` as a
percentage from 0 to 100; anything else raises ``Quantiles must be in the range [0, 1]``
(``Percentiles ... [0, 100]``) in the learner's line, without naming the value (claimed
without TensorFlow in the traceback). Read from the failing line: the call, its data (the
first argument) and its level (the second, or ``q=``), the level's value, and the
statement that computed it when the level is a name the cell assigned. Two usual causes,
told apart by the values, each with its fix:

- a rank, not a fraction: a whole number above the range, at most one more than the
  number of values, computed from that count (``len(scores)``, ``scores.shape``,
  ``scores.size``, or a name holding the count): the level is the rank divided by the
  count, kept at most 1, and ``method="inverted_cdf"`` returns the value of that rank
  itself (``np.quantile(scores, min(level / len(scores), 1.0), method="inverted_cdf")``);
- a percentage given to ``quantile`` (a level from 1 to 100 not computed from the count):
  the level divided by 100 (a written number: its fraction, ``0.95``).

A negative level or a value fitting neither gets the rule and the value only.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "reducing-tensors"
_QUANTILES = re.compile(r"Quantiles must be in the range \[0, 1\]")
_PERCENTILES = re.compile(r"Percentiles must be in the range \[0, 100\]")
# The functions taking a level, and the top of its range.
_SCALES = {"quantile": 1.0, "nanquantile": 1.0, "percentile": 100.0, "nanpercentile": 100.0}
_MAX_LEVELS = 64


def _level_call(line: FailingLine, scale: float) -> ast.Call | None:
    """The one call of the failing line taking a level on ``scale``."""
    # Imported here: ``syntax`` imports this package (``errors.cell_sources``), whose
    # ``__init__`` imports this module.
    from jupyterlab_tfcoach.monitor.syntax import call_name

    found = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Call) and _SCALES.get(call_name(node) or "") == scale
    ]
    return found[0] if len(found) == 1 else None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    if len(call.args) > position:
        return call.args[position]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def _numbers(value: Any) -> list[float] | None:
    """The level's values: a Python or NumPy number, a list or tuple of numbers, a small
    NumPy array (read only when it is NumPy's own ``ndarray``)."""
    cls = type(value)
    if cls in (int, float):
        return [float(value)]
    module = getattr(cls, "__module__", "")
    if module == "numpy" and cls.__name__.startswith(("float", "int", "uint")):
        return [float(value)]
    if cls in (list, tuple) and 0 < len(value) <= _MAX_LEVELS:
        if all(type(item) in (int, float) for item in value):
            return [float(item) for item in value]
        return None
    if module == "numpy" and cls.__name__ == "ndarray":
        described = describe("q", value)
        if described is None or described.shape is None or not described.dtype:
            return None
        if not described.dtype.startswith(("float", "int", "uint")):
            return None
        size = math.prod(dim or 0 for dim in described.shape)
        if size == 0 or size > _MAX_LEVELS:
            return None
        return [float(item) for item in value.reshape(-1).tolist()]
    return None


def _count(data: Any, call: ast.Call) -> int | None:
    """How many values the call reduces: all of the data's (no ``axis``)."""
    if any(kw.arg == "axis" for kw in call.keywords) or len(call.args) > 2:
        return None
    described = describe("a", data)
    if described is None or described.shape is None or None in described.shape:
        return None
    if described.kind not in ("array", "tensor", "variable"):
        return None
    return math.prod(int(dim) for dim in described.shape if dim is not None)


def _from_count(nodes: list[ast.AST], line: FailingLine, context: ErrorContext, count: int) -> bool:
    """Whether the level was computed from the number of values: ``len(...)``, a
    ``.shape`` or ``.size``, or a name holding that number (or one more)."""
    for node in nodes:
        for part in ast.walk(node):
            if isinstance(part, ast.Call) and isinstance(part.func, ast.Name):
                if part.func.id == "len":
                    return True
            if isinstance(part, ast.Attribute) and part.attr in ("shape", "size"):
                return True
            if isinstance(part, ast.Name):
                found, held = context.lookup(part.id, line.frame)
                if found and type(held) is int and held in (count, count + 1):
                    return True
    return False


def _show(number: float) -> str:
    return str(int(number)) if number.is_integer() else f"{number:g}"


def _count_text(data: str, shape_rank: int) -> str:
    """How the fix writes the number of values: ``len(scores)`` for a vector."""
    return f"len({data})" if shape_rank == 1 else f"{data}.size"


def _read_level(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    scale = 1.0 if error.matched(_QUANTILES) else 100.0
    call = _level_call(line, scale)
    statement = line.statement
    if call is None or statement is None:
        return None
    data_node, level_node = _argument(call, 0, "a"), _argument(call, 1, "q")
    if data_node is None or level_node is None:
        return None
    frame = line.frame
    data, level = frame.segment(data_node), frame.segment(level_node)
    function = frame.segment(call.func)
    if not data or not level or not function:
        return None
    written = _written(level_node)
    found, value = (True, written) if written is not None else value_of(level_node, frame, context)
    if not found:
        return None
    levels = _numbers(value)
    outside = [v for v in levels or () if not 0.0 <= v <= scale]
    if not outside:
        return None  # the refused level is another one than the line shows
    bad = outside[0]
    span = "a fraction from 0 to 1" if scale == 1.0 else "a percentage from 0 to 100"
    verb = "holds" if levels is not None and len(levels) > 1 else "is"
    held = "" if level == _show(bad) else f" {verb} {_show(bad)}"
    takes = f"{code(function)} takes its level as {span}"
    made = None
    nodes: list[ast.AST] = [level_node]
    tree = frame.tree()
    if isinstance(level_node, ast.Name) and tree is not None:
        from jupyterlab_tfcoach.monitor.syntax import last_assignment_before

        made = last_assignment_before(tree, level_node.id, frame.position.line)
        if made is not None:
            nodes.append(made.value)
    known, data_value = value_of(data_node, frame, context)
    count = _count(data_value, call) if known else None
    shown_made = frame.segment(made) if made is not None else None
    origin = (
        f" ({code(shown_made)}, line {made.lineno})"
        if shown_made and "\n" not in shown_made and made is not None
        else ""
    )
    if bad < 0:
        below = f"{held}, below 0" if held else " is below 0"
        return Finding(f"{code(level)}{below}{origin}: {takes}.", None)
    described = describe(data, data_value) if known else None
    rank = described.shape if described is not None else None
    is_rank = (
        count is not None
        and rank
        and bad.is_integer()
        and 1 < bad <= count + 1
        and _from_count(nodes, line, context, count)
    )
    if is_rank and count is not None and rank:
        total = _count_text(data, len(rank))
        fraction = f"min({_level_text(level_node, level)} / {total}, 1.0)"
        new_level = fraction if scale == 1.0 else f"100 * {fraction}"
        method = code('method="inverted_cdf"')
        rule = (
            f"{code(level)}{held}, a rank among the {count} values of {code(data)}: it was "
            f"computed from their number{origin}. But {takes}. A rank becomes a level when "
            f"divided by the number of values ({code('min(..., 1.0)')} keeps a rank past "
            f"the last at the largest value), and {method} returns the value of that rank "
            "itself rather than one interpolated between two values"
        )
        fixed = _call_with_level(frame, call, level_node, new_level, add_method=True)
    elif scale == 1.0 and 1 < bad <= 100 and all(v <= 100 for v in outside):
        rule = (
            f"{code(level)}{held}{origin} reads as a percentage, but {takes}: divide it by "
            f"100 (NumPy's {code('np.percentile')} is the function that takes percentages)"
        )
        new_level = (
            f"{written / 100:g}"
            if type(written) in (int, float)
            else f"{_level_text(level_node, level)} / 100"
        )
        fixed = _call_with_level(frame, call, level_node, new_level, add_method=False)
    else:
        above = f"{held}, above {_show(scale)}" if held else f" is above {_show(scale)}"
        return Finding(f"{code(level)}{above}{origin}: {takes}.", None)
    if fixed is None:
        return Finding(rule + ".", None)
    whole = rewrite(frame, statement, call, fixed)
    if not whole or "\n" in whole:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(whole))


def _written(node: ast.expr) -> Any:
    """A level written as a number or a list of numbers (``95``, ``-0.2``, ``[5, 150]``),
    read from the source alone; None for anything else."""
    if not isinstance(node, (ast.Constant, ast.UnaryOp, ast.List, ast.Tuple)):
        return None
    try:
        value = ast.literal_eval(node)
    except Exception:
        return None
    return value if _numbers(value) is not None else None


def _level_text(node: ast.expr, source: str) -> str:
    """The level as an operand of ``/``: parenthesised unless it is a name, a call, an
    attribute, an index or a number."""
    atoms = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant)
    return source if isinstance(node, atoms) else f"({source})"


def _call_with_level(
    frame: Any, call: ast.Call, level_node: ast.expr, new_level: str, add_method: bool
) -> str | None:
    """The call as written with its level replaced (and ``method="inverted_cdf"`` added
    when asked and the call gives no method)."""
    function = frame.segment(call.func)
    if not function:
        return None
    parts: list[str] = []
    for arg in call.args:
        text = new_level if arg is level_node else frame.segment(arg)
        if not text:
            return None
        parts.append(text)
    methods = [kw for kw in call.keywords if kw.arg in ("method", "interpolation")]
    for kw in call.keywords:
        text = new_level if kw.value is level_node else frame.segment(kw.value)
        if not text or kw.arg is None:
            return None
        if add_method and kw in methods:
            text = '"inverted_cdf"'
            parts.append(f"method={text}")
            continue
        parts.append(f"{kw.arg}={text}")
    if add_method and not methods:
        parts.append('method="inverted_cdf"')
    return f"{function}({', '.join(parts)})"


QUANTILE_LEVEL = ErrorFamily(
    "a quantile level outside its range",
    messages=(Message(_QUANTILES), Message(_PERCENTILES)),
    read=_read_level,
    section=SECTION,
    exception_type="ValueError",
    # NumPy raises it in the learner's line; TensorFlow is not in the traceback.
    without_library=True,
)
