"""A value the cell made holds NaN or infinity: the line that made it, and why.

Several TensorFlow ops never raise on a bad input: they return NaN (or infinity) and every
value computed from it inherits it. ``tf.linalg.cholesky`` of a matrix that is not
numerically positive definite (a covariance on close points, computed as a difference)
fills its factor with NaN; ``sqrt`` of a negative is NaN; ``log`` of 0 is minus infinity
and of a negative NaN; ``0 / 0`` is NaN and ``x / 0`` infinite. Samples, losses and
predictions built on such a value are all NaN, often several cells later.

The symptom, read after a cell that completed (a cell without one of these words or a
``/`` costs one regular expression search): a name the cell assigns at its top level
holds a float NumPy array or eager tensor of at most ``MAX_ELEMENTS`` values with NaN or
infinity in it. The first such name, in the cell's order, whose inputs (the names its
statement reads, when they hold arrays or tensors) are all finite is where the NaN was
made; its statement is read for the cause:

- a ``cholesky`` call of a tensor: the matrix is not positive definite as computed; fix,
  the call with a small jitter on the diagonal (``A + 1e-6 * tf.eye(n, dtype=...)``);
- ``sqrt``/``log`` of a name holding negatives (or zeros for ``log``): tiny negatives
  are rounding (a variance computed as a difference) and the fix clamps at 0; zeros under
  a ``log`` are clamped to a tiny positive number; larger negatives are named, no fix;
- ``a / b`` of two names, ``b`` holding zeros: ``tf.math.divide_no_nan(a, b)`` (a tensor)
  or NumPy's ``divide`` with ``where=b != 0``;
- ``exp`` of a name holding values past the largest finite exp of its dtype (88.7 in
  float32): the fix is said in words (subtract the largest value first when the exps are
  normalised, or ``tf.nn.softmax``/``tf.reduce_logsumexp``), as no rewrite of a bare
  ``exp`` keeps its value.

Names later in the cell that hold NaN because they were computed from it are named too.
A ``y * log(y ...)`` product is ``zero_log_terms.py``'s; a cell whose NaN has no cause
read here stays silent. Values are read as shapes first; an array too large is never
copied.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name, numpy_name

SECTION = "nan-inf"
MAX_ELEMENTS = 100_000
MAX_NAMES = 8  # assigned names read per cell
WANTED = re.compile(r"cholesky|\blog\w*\s*\(|\bsqrt\s*\(|\bexp\s*\(|/|\bdivide\b")
# The largest argument whose exp is finite, per float type.
_EXP_LIMIT = {"float16": 11.09, "bfloat16": 88.72, "float32": 88.72, "float64": 709.78}
# A negative this small against the values' scale is rounding (a variance as a difference).
ROUNDING = 1e-6
_HELD_KINDS = ("tensor", "array")


def _values(value: Any) -> Any | None:
    return held_array(value, MAX_ELEMENTS, ("float",))


def _finite(array: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and bool(numpy.isfinite(array).all())


def _many(count: int) -> str:
    return f"{count} value" if count == 1 else f"{count} values"


def _read_names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _inputs_finite(value: ast.expr, namespace: dict[str, Any], own: str) -> bool:
    """Whether every array or tensor the statement reads is finite (the NaN was made on
    this line, not carried in)."""
    for name in set(_read_names(value)):
        if name == own or name not in namespace:
            continue
        operand = describe("", namespace[name])
        if operand is None or operand.kind not in _HELD_KINDS:
            continue
        array = _values(namespace[name])
        if array is None or not _finite(array):
            return False
    return True


def _log_product(node: ast.AST) -> bool:
    """``y * log(...)``: ``zero_log_terms.py`` tells that NaN."""
    for child in ast.walk(node):
        if isinstance(child, ast.BinOp) and isinstance(child.op, ast.Mult):
            for side in (child.left, child.right):
                if isinstance(side, ast.Call) and call_name(side) == "log":
                    return True
    return False


def nan_source_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    ordered = sorted(
        (
            (assignments[-1][0], name, assignments[-1][1])
            for name, assignments in code.assigned.items()
        ),
        key=lambda item: item[0],
    )
    bad: list[tuple[int, str, ast.expr, Any]] = []
    for line, name, value in ordered[:MAX_NAMES]:
        if code.rebound_after((name,), line) or name not in namespace:
            continue
        array = _values(namespace[name])
        if array is not None and not _finite(array):
            bad.append((line, name, value, array))
    for index, (line, name, value, array) in enumerate(bad):
        if not _inputs_finite(value, namespace, name):
            continue
        if _log_product(value):
            return []
        found = _cause(code, name, value, array, namespace)
        if found is None:
            return []
        later = [n for _, n, v, _ in bad[index + 1 :] if name in _read_names(v)]
        return [reports.note(_text(name, line, found, array, later), SECTION)]
    return []


def _count_text(array: Any) -> str:
    numpy = sys.modules["numpy"]
    nans = int(numpy.isnan(array).sum())
    infinite = int(numpy.isinf(array).sum())
    parts = []
    if nans:
        parts.append(f"{nans} of its {array.size} values are NaN")
    if infinite:
        parts.append(
            f"{infinite} are infinite"
            if nans
            else f"{infinite} of its {array.size} values are infinite"
        )
    return " and ".join(parts)


def _text(name: str, line: int, found: tuple[str, str | None], array: Any, later: list[str]) -> str:
    cause, fix = found
    carried = ""
    if later:
        listed = ", ".join(f"`{n}`" for n in later[:3])
        carried = (
            f" {listed}, computed from it, {'is' if len(later) == 1 else 'are'} not finite either."
        )
    text = (
        f"`{name}` (line {line} of this cell) is not finite: {_count_text(array)}, and "
        f"nothing raised. {cause}{carried}"
    )
    if fix is not None:
        text += f" Fix: `{fix}`."
    return text


def _cause(
    code: CellCode, name: str, value: ast.expr, array: Any, namespace: dict[str, Any]
) -> tuple[str, str | None] | None:
    statement = code.segment(value)
    if statement is None:
        return None
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and call_name(node) == "cholesky" and len(node.args) == 1:
            return _cholesky(code, name, node, statement, array, namespace)
    for node in ast.walk(value):
        if (
            isinstance(node, ast.Call)
            and call_name(node) in ("sqrt", "log")
            and len(node.args) == 1
        ):
            found = _root_or_log(code, name, node, statement, namespace)
            if found is not None:
                return found
        if isinstance(node, ast.Call) and call_name(node) == "exp" and len(node.args) == 1:
            found = _overflow(code, node, namespace)
            if found is not None:
                return found
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found = _division(code, name, node, node.left, node.right, statement, namespace)
            if found is not None:
                return found
        if (
            isinstance(node, ast.Call)
            and call_name(node) in ("divide", "truediv")
            and len(node.args) == 2
        ):
            found = _division(code, name, node, node.args[0], node.args[1], statement, namespace)
            if found is not None:
                return found
    return None


def _rewritten(code: CellCode, name: str, statement: str, node: ast.AST, new: str) -> str | None:
    old = code.segment(node)
    if old is None or statement.count(old) != 1:
        return None
    return f"{name} = {statement.replace(old, new)}"


def _cholesky(
    code: CellCode, name: str, call: ast.Call, statement: str, array: Any, namespace: dict[str, Any]
) -> tuple[str, str | None] | None:
    operand = describe("", namespace[name])
    if operand is None or operand.kind != "tensor" or not operand.shape or len(operand.shape) < 2:
        return None
    matrix = code.segment(call.args[0])
    function = dotted_name(call.func)
    size = operand.shape[-1]
    if matrix is None or function is None or size is None:
        return None
    dtype = operand.dtype or "float32"
    jitter = "1e-6" if dtype == "float64" else "1e-4"
    root = function.split(".", 1)[0]
    eye = f"{root}.eye({size}, dtype={root}.{dtype})" if root in ("tf", "tensorflow") else None
    if eye is None:
        return None
    cause = (
        f"`{code.segment(call)}` returns NaN when `{matrix}` is not positive definite as "
        "computed (eigenvalues at or just below 0 from rounding: a covariance on close "
        "points, or one computed as a difference), instead of raising. Add a small jitter "
        "to the diagonal (raise it tenfold if NaN remain)"
    )
    fix = _rewritten(code, name, statement, call.args[0], f"{matrix} + {jitter} * {eye}")
    return cause + ".", fix


def _root_or_log(
    code: CellCode, name: str, call: ast.Call, statement: str, namespace: dict[str, Any]
) -> tuple[str, str | None] | None:
    argument = call.args[0]
    if not isinstance(argument, ast.Name) or argument.id not in namespace:
        return None
    values = _values(namespace[argument.id])
    function = dotted_name(call.func)
    if values is None or function is None or not _finite(values):
        return None
    numpy = sys.modules["numpy"]
    negatives = int((values < 0).sum())
    zeros = int((values == 0).sum())
    written = code.segment(call)
    kind = call_name(call)
    if kind == "sqrt" and not negatives:
        return None
    if kind == "log" and not negatives and not zeros:
        return None
    held = argument.id
    library = function.rsplit(".", 1)[0]
    clamp = "np.maximum" if library in ("np", "numpy") else f"{library.split('.')[0]}.maximum"
    if negatives:
        lowest = float(values.min())
        scale = float(numpy.abs(values).max())
        what = "NaN" if kind == "sqrt" else "NaN (and minus infinity at its zeros)"
        cause = (
            f"`{written}` is {what} where `{held}` is negative ({_many(negatives)}, the "
            f"lowest {lowest:.3g})."
        )
        if kind == "sqrt" and -lowest <= ROUNDING * scale:
            cause += (
                f" Those negatives are rounding (at most {-lowest:.1g} against values up to "
                f"{scale:.3g}): clamp them at 0"
            )
            return cause + ".", _rewritten(
                code, name, statement, call, f"{function}({clamp}({held}, 0.0))"
            )
        return cause + f" Find what makes `{held}` negative before taking its {kind}.", None
    cause = (
        f"`{written}` is minus infinity where `{held}` is 0 ({_many(zeros)}). Keep the "
        "log's argument above 0"
    )
    return cause + ".", _rewritten(
        code, name, statement, call, f"{function}({clamp}({held}, 1e-12))"
    )


def _overflow(
    code: CellCode, call: ast.Call, namespace: dict[str, Any]
) -> tuple[str, str | None] | None:
    """``exp`` of a name holding values past the largest finite exp of its dtype."""
    argument = call.args[0]
    if not isinstance(argument, ast.Name) or argument.id not in namespace:
        return None
    operand = describe("", namespace[argument.id])
    dtype = (operand.dtype if operand is not None else None) or ""
    values = _values(namespace[argument.id])
    limit = _EXP_LIMIT.get(dtype)
    if values is None or limit is None or not _finite(values):
        return None
    over = int((values > limit).sum())
    if not over:
        return None
    held = argument.id
    cause = (
        f"`{code.segment(call)}` overflows to infinity where `{held}` is above {limit:g} "
        f"({_many(over)}, the largest {float(values.max()):.4g}), the largest number whose "
        f"exp a {dtype} holds; infinity over infinity is "
        "NaN. When the exps are normalised (a softmax, a log of a sum of exps), subtract "
        f"the largest value of `{held}` before `exp` (the ratio does not change) or use "
        "`tf.nn.softmax` / `tf.reduce_logsumexp`, which do it for you."
    )
    return cause, None


def _division(
    code: CellCode,
    name: str,
    node: ast.AST,
    top: ast.expr,
    bottom: ast.expr,
    statement: str,
    namespace: dict[str, Any],
) -> tuple[str, str | None] | None:
    if not (isinstance(top, ast.Name) and isinstance(bottom, ast.Name)):
        return None
    if top.id not in namespace or bottom.id not in namespace:
        return None
    below = _values(namespace[bottom.id])
    above = _values(namespace[top.id])
    if below is None or above is None:
        return None
    zeros = int((below == 0).sum())
    if not zeros:
        return None
    written = code.segment(node)
    kind = describe("", namespace[top.id])
    tensor = kind is not None and kind.kind == "tensor"
    numpy = numpy_name(namespace)
    if (tensor and "tf" not in namespace) or (not tensor and numpy is None):
        return None
    places = "place" if zeros == 1 else "places"
    cause = (
        f"`{written}` divides by `{bottom.id}`, which is 0 in {zeros} {places}: 0 / 0 is "
        "NaN and a number over 0 infinite. Where the divisor is 0, set the result to 0"
    )
    if tensor:
        fix = f"tf.math.divide_no_nan({top.id}, {bottom.id})"
    else:
        fix = (
            f"{numpy}.divide({top.id}, {bottom.id}, out={numpy}.zeros_like({top.id}), "
            f"where={bottom.id} != 0)"
        )
    return cause + ".", _rewritten(code, name, statement, node, fix)
