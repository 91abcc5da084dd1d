"""A value the cell made holds NaN or infinity: the line that made it, and why.

Several TensorFlow ops never raise on a bad input: they return NaN (or infinity) and every
value computed from it inherits it. ``tf.linalg.cholesky`` of a matrix that is not
numerically positive definite (a covariance on close points, computed as a difference)
fills its factor with NaN; ``sqrt`` of a negative is NaN; ``log`` of 0 is minus infinity
and of a negative NaN; ``0 / 0`` is NaN and ``x / 0`` infinite. Samples, losses and
predictions built on such a value are all NaN, often several cells later.

The symptom, read after a cell that completed (a cell without one of these words, a
``/`` or a name bound from a call of a plain name costs one regular expression search): a
name the cell assigns at its top level holds a float NumPy array or eager tensor of at
most ``MAX_ELEMENTS`` values with NaN or infinity in it. The first such name, in the
cell's order, whose inputs (the names its statement reads, when they hold arrays or
tensors) are all finite is where the NaN was made; its statement is read for the cause:

- a ``cholesky`` call of a tensor: the matrix is not positive definite. When the matrix
  (inline, or where the cell or an earlier one made its name) is a matrix plus a number
  (``K + noise_var``) or a vector of ``n`` values, that was added to every entry, not to
  the diagonal, and the matrix stays as singular as it was: the fix puts it on the
  diagonal where the matrix is made (``noise_var * tf.eye(n, dtype=...)``,
  ``tf.linalg.diag(v)``), as a jitter would hide the bug (no fix when the matrix without
  the number is itself far from positive semi-definite: that is said). Otherwise, when a name holds
  the matrix, its eigenvalues are read: not symmetric, or a smallest eigenvalue far below
  0, is said with no fix (not a covariance as built; a jitter would hide it); positive
  definite up to rounding (or a matrix not held) gets the call with a small jitter on the
  diagonal (``A + 1e-6 * tf.eye(n, dtype=...)``, ten times the deficit if larger);
- ``sqrt``/``log`` (``log10``, ``log2``) of a name holding negatives (or zeros for a log):
  tiny negatives are rounding (a variance computed as a difference) and the fix clamps at
  0; zeros under a log are clamped to a tiny positive number; larger negatives are followed
  back through the history's assignments to where they were made (a ``cast`` of a complex
  STFT or FFT to a float: its fix is ``tf.abs``), else named, no fix;
- ``a / b`` of two names, ``b`` holding zeros: ``tf.math.divide_no_nan(a, b)`` (a tensor)
  or NumPy's ``divide`` with ``where=b != 0``;
- a statement of one division whose other operations keep finite values finite (``+``,
  ``-``, ``*``, sums, counts, ``where``, casts, ...) holding a tensor: the divisor, whatever
  expression it is (``tf.reduce_sum(rel, axis=-1, keepdims=True)``: a row of zeros), is 0
  somewhere, as nothing else on the line can make NaN from finite inputs; the fix is
  ``tf.math.divide_no_nan`` of the two sides as written;
- a call of the learner's function that divides by a sum that can be 0 (its source read by
  ``training/loss_divisions.py``): that line in the function, with its fix;
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
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    history_assignments,
    numpy_name,
)
from jupyterlab_tfcoach.monitor.training import loss_divisions

SECTION = "nan-inf"
MAX_ELEMENTS = 1_000_000  # a batch of spectrograms, images or embeddings
MAX_NAMES = 8  # assigned names read per cell
# The ops read below, and a name bound from a call of a plain name (``d = helper(x)``).
WANTED = re.compile(
    r"cholesky|\blog\w*\s*\(|\bsqrt\s*\(|\bexp\s*\(|/|\bdivide\b"
    r"|^[ \t]*[\w, ]+=[ \t]*[A-Za-z_]\w*\(",
    re.MULTILINE,
)
# The largest argument whose exp is finite, per float type.
_EXP_LIMIT = {"float16": 11.09, "bfloat16": 88.72, "float32": 88.72, "float64": 709.78}
# A negative this small against the values' scale is rounding (a variance as a difference).
ROUNDING = 1e-6
_HELD_KINDS = ("tensor", "array")
# A matrix whose smallest eigenvalue is above minus this times its largest is positive
# definite up to rounding (float32, float64): a jitter fixes it; below, it is not a
# covariance as built and a jitter would only hide that.
_ROUNDED = {False: 1e-4, True: 1e-8}
_SYMMETRY = 1e-5  # an asymmetry above this times the eigenvalue scale is not rounding
_SPECTRUM_SIZE = 400  # rows of a matrix whose eigenvalues are computed
_ORIGIN_HOPS = 3  # names followed back for where negatives under a log come from
_ORIGIN_ELEMENTS = 10_000_000
_HISTORY_CELLS = 30
_HISTORY_CHARS = 20_000
_LOGS = frozenset({"log", "log10", "log2"})
_ROOT_OR_LOG = _LOGS | {"sqrt"}
# Calls that keep finite values finite: on a line of these and one division, a NaN or an
# infinity made from finite inputs comes from that division's denominator being 0.
_FINITE_CALLS = frozenset(
    {
        "reduce_sum",
        "sum",
        "reduce_mean",
        "mean",
        "reduce_max",
        "max",
        "count_nonzero",
        "norm",
        "cast",
        "astype",
        "abs",
        "square",
        "where",
        "maximum",
        "minimum",
        "reshape",
        "expand_dims",
        "squeeze",
        "transpose",
        "float32",
        "float64",
        "constant",
        "convert_to_tensor",
        "asarray",
        "array",
        "len",
        "float",
        "size",
        "shape",
    }
)


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
        if isinstance(node, ast.Call) and call_name(node) in _ROOT_OR_LOG and len(node.args) == 1:
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
    return _only_division(code, name, value, statement, namespace) or _helper_division(
        value, namespace
    )


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
    root = function.split(".", 1)[0]
    if root not in ("tf", "tensorflow"):
        return None
    written = code.segment(call)
    added = _entrywise_addition(
        code, call, matrix, size, f"{root}.eye({size}, dtype={root}.{dtype})", root, namespace
    )
    if added is not None:
        return f"`{written}` returns NaN when `{matrix}` is not positive definite. " + added[
            0
        ], added[1]
    spectrum = _spectrum(call.args[0], namespace)
    jitter = "1e-6" if dtype == "float64" else "1e-4"
    measured = ""
    if spectrum is not None:
        asymmetry, lowest, largest = spectrum
        if asymmetry > _SYMMETRY * largest:
            return (
                f"`{written}` returns NaN when `{matrix}` is not positive definite, and `{matrix}` "
                f"is not even symmetric (entries and their transposes differ by up to "
                f"{asymmetry:.3g}, against an eigenvalue scale of {largest:.3g}): Cholesky reads "
                "only its lower triangle. A covariance or Gram matrix is symmetric by "
                f"construction (`B @ tf.transpose(B)`, a kernel of a set with itself): read "
                f"how `{matrix}` is built; a jitter on the diagonal would only hide it.",
                None,
            )
        if lowest < -_ROUNDED[dtype == "float64"] * largest:
            return (
                f"`{written}` returns NaN when `{matrix}` is not positive definite: its "
                f"smallest eigenvalue is {lowest:.3g} against a largest of {largest:.3g}, far "
                "beyond rounding, so it is not a covariance as built (a kernel formula with a "
                "wrong sign or scale, a difference of matrices). Read how "
                f"`{matrix}` is built; a jitter on the diagonal would only hide it.",
                None,
            )
        measured = f" (its smallest eigenvalue is {lowest:.2g} against a largest of {largest:.3g})"
        # A jitter ten times the rounding deficit, at least the usual one.
        while float(jitter) < -10 * lowest:
            jitter = f"1e{int(jitter.split('e')[1]) + 1}"
    cause = (
        f"`{written}` returns NaN when `{matrix}` is not positive definite as "
        f"computed{measured}: eigenvalues at or just below 0 from rounding (a covariance "
        "on close points, or one computed as a difference), instead of raising. Add a small "
        "jitter to the diagonal (raise it tenfold if NaN remain)"
    )
    eye = f"{root}.eye({size}, dtype={root}.{dtype})"
    fix = _rewritten(code, name, statement, call.args[0], f"{matrix} + {jitter} * {eye}")
    return cause + ".", fix


def _scalar_side(node: ast.expr, namespace: dict[str, Any]) -> bool:
    """Whether an expression is a plain number: a literal, a name holding a Python or
    NumPy number or a 0-d tensor, or arithmetic of those (``sigma ** 2``)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.UnaryOp):
        return _scalar_side(node.operand, namespace)
    if isinstance(node, ast.BinOp):
        return _scalar_side(node.left, namespace) and _scalar_side(node.right, namespace)
    if isinstance(node, ast.Name) and node.id in namespace:
        held = describe("", namespace[node.id])
        if held is None:
            return False
        return held.kind == "scalar" or (held.kind in _HELD_KINDS and held.shape == ())
    return False


def _vector_side(node: ast.expr, size: int, namespace: dict[str, Any]) -> bool:
    """A name holding a vector of ``size`` values (a noise variance per point)."""
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return False
    held = describe("", namespace[node.id])
    return held is not None and held.kind in _HELD_KINDS and held.shape == (size,)


def _entrywise_addition(
    code: CellCode,
    call: ast.Call,
    matrix: str,
    size: int,
    eye: str,
    root: str,
    namespace: dict[str, Any],
) -> tuple[str, str | None] | None:
    """``K + noise_var`` where ``K + noise_var * tf.eye(n)`` was meant: a number added to
    the matrix factored (inline, or where the cell or an earlier one made its name) is
    added to every entry, a constant shift of all covariances that leaves the matrix as
    singular as it was; a vector of ``n`` values is added to every row. Noise or a jitter
    belongs on the diagonal only."""
    argument = call.args[0]
    where = "inline"
    value: ast.expr | None = argument
    fixed_statement: str | None = None
    history_source = ""
    if isinstance(argument, ast.Name):
        value = code.assignment_before(argument.id, call.lineno)
        where = "cell"
        if value is None:
            found = _newest_assignment(argument.id, namespace)
            if found is None:
                return None
            value, history_source = found[0].value, found[1]
            where = "history"
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    for side, other in ((value.right, value.left), (value.left, value.right)):
        if _scalar_side(side, namespace) and not _scalar_side(other, namespace):
            kind = "number"
            break
        if _vector_side(side, size, namespace):
            kind = "vector"
            break
    else:
        return None
    source = history_source if where == "history" else code.source
    side_text = ast.get_source_segment(source, side)
    made = ast.get_source_segment(source, value)
    if side_text is None or made is None or "\n" in made:
        return None
    if kind == "number":
        wrapped = (
            side_text
            if isinstance(side, ast.Name | ast.Constant)
            or (isinstance(side, ast.BinOp) and isinstance(side.op, ast.Pow | ast.Mult))
            else f"({side_text})"
        )
        new_side = f"{wrapped} * {eye}"
        what = (
            f"adding the number `{side_text}` to the ({size}, {size}) matrix adds it to every "
            "entry (a constant shift of all covariances), not to the diagonal, so the matrix "
            "stays as close to singular as it was"
        )
    else:
        new_side = f"{root}.linalg.diag({side_text})"
        what = (
            f"adding the vector `{side_text}` of {size} values to the ({size}, {size}) matrix "
            "adds it to every row, not to the diagonal"
        )
    offset = side.col_offset - value.col_offset
    fixed_value = made[:offset] + new_side + made[offset + len(side_text) :]
    if made[offset : offset + len(side_text)] != side_text:
        return None
    if where == "inline":
        place = f"`{made}`: {what}"
        statement = code.statement_of(call)
        fixed_statement = (
            code.replaced_in(statement, argument, fixed_value) if statement is not None else None
        )
    else:
        target = argument.id  # type: ignore[union-attr]
        line = f"line {value.lineno} of this cell" if where == "cell" else "an earlier cell"
        place = f"`{target}` is made ({line}) by `{made}`: {what}"
        fixed_statement = f"{target} = {fixed_value}"
    lowest = _lowest_without(argument, side, namespace)
    if lowest is not None and lowest[0] < -_ROUNDED[lowest[2]] * lowest[1]:
        # Without the number the matrix is far from positive semi-definite: moving the
        # number to the diagonal would not be enough, and the note gives no fix.
        return (
            f"{place}. Observation noise, or a jitter, belongs on the diagonal only "
            f"(`{new_side}`), but the matrix without it is not a covariance either: its "
            f"smallest eigenvalue is {lowest[0]:.3g} against a largest of {lowest[1]:.3g}. "
            "Read how the rest of it is built.",
            None,
        )
    cause = (
        f"{place}. Observation noise, or a jitter, belongs on the diagonal only: "
        f"`{new_side}`, which makes the matrix positive definite."
    )
    if where == "history":
        cause += " Run the cells after it again."
    return cause, fixed_statement


def _added_values(side: ast.expr, namespace: dict[str, Any]) -> Any | None:
    """What ``side`` adds, as a NumPy float64 array (a number or a vector), when it is a
    literal or a name holding it; None for an expression."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if isinstance(side, ast.Constant) and type(side.value) in (int, float):
        return numpy.asarray(float(side.value))
    if not isinstance(side, ast.Name) or side.id not in namespace:
        return None
    held = namespace[side.id]
    if type(held) in (int, float):
        return numpy.asarray(float(held))
    values = held_array(held, MAX_ELEMENTS, ("float",))
    return values.astype("float64") if values is not None else None


def _lowest_without(
    argument: ast.expr, side: ast.expr, namespace: dict[str, Any]
) -> tuple[float, float, bool] | None:
    """The smallest and largest eigenvalue of the matrix a name holds without what
    ``side`` added to every entry, and whether it is float64; None when either is not
    held."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(argument, ast.Name) or argument.id not in namespace:
        return None
    held = namespace[argument.id]
    operand = describe("", held)
    values = held_array(held, MAX_ELEMENTS, ("float",), ndim=2)
    added = _added_values(side, namespace)
    if values is None or added is None or values.shape[0] != values.shape[1]:
        return None
    if values.shape[0] > _SPECTRUM_SIZE or not _finite(values):
        return None
    try:
        base = values.astype("float64") - added
        eigenvalues = numpy.linalg.eigvalsh((base + base.T) / 2)
    except Exception:  # a shape numpy cannot combine: no check
        return None
    largest = float(numpy.abs(eigenvalues).max())
    double = operand is not None and operand.dtype == "float64"
    return float(eigenvalues.min()), largest, double


def _spectrum(node: ast.expr, namespace: dict[str, Any]) -> tuple[float, float, float] | None:
    """The matrix factored, read when a name holds it (at most ``_SPECTRUM_SIZE`` rows,
    ``MAX_ELEMENTS`` values): its largest asymmetry, smallest and largest eigenvalue of
    its symmetric part (over a batch of matrices, the worst)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(node, ast.Name) or node.id not in namespace:
        return None
    values = held_array(namespace[node.id], MAX_ELEMENTS, ("float",))
    if values is None or values.ndim < 2 or values.shape[-1] != values.shape[-2]:
        return None
    if values.shape[-1] > _SPECTRUM_SIZE or not _finite(values):
        return None
    try:
        square = values.reshape((-1, *values.shape[-2:])).astype("float64")
        transposed = numpy.swapaxes(square, -1, -2)
        asymmetry = float(numpy.abs(square - transposed).max())
        eigenvalues = numpy.linalg.eigvalsh((square + transposed) / 2)
    except Exception:  # a matrix numpy cannot read: no spectrum
        return None
    largest = float(numpy.abs(eigenvalues).max())
    if largest == 0.0:
        return None
    return asymmetry, float(eigenvalues.min()), largest


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
    if kind in _LOGS and not negatives and not zeros:
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
        origin = _negative_origin(held, namespace)
        if origin is not None:
            return cause + " " + origin[0], origin[1]
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


def _only_division(
    code: CellCode, name: str, value: ast.expr, statement: str, namespace: dict[str, Any]
) -> tuple[str, str | None] | None:
    """``rel / tf.reduce_sum(rel, axis=-1, keepdims=True)``: a statement of one division
    whose other operations (``+``, ``-``, ``*``, ``_FINITE_CALLS``) keep finite values
    finite. Its inputs being finite, the NaN (0 / 0) or infinity (x / 0) it holds can only
    come from the denominator being 0, for some row, whatever expression it is."""
    divisions: list[tuple[ast.AST, ast.expr, ast.expr]] = []
    for node in ast.walk(value):
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Div):
                divisions.append((node, node.left, node.right))
            elif not isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
                return None
        elif isinstance(node, ast.Call):
            called = call_name(node)
            if called in ("divide", "truediv") and len(node.args) == 2:
                divisions.append((node, node.args[0], node.args[1]))
            elif called not in _FINITE_CALLS:
                return None
    if len(divisions) != 1:
        return None
    node, top, bottom = divisions[0]
    written, above, below = code.segment(node), code.segment(top), code.segment(bottom)
    if written is None or above is None or below is None or "\n" in written:
        return None
    result = describe("", namespace[name])
    if result is None or result.kind != "tensor" or "tf" not in namespace:
        return None
    cause = (
        f"The line's inputs are finite and its only operation that can make NaN is "
        f"`{written}`: `{below}` is 0 for some values (a row or group whose values are all "
        "0), and 0 / 0 is NaN, a number over 0 infinite. Where the divisor is 0, set the "
        "result to 0"
    )
    fix = f"tf.math.divide_no_nan({above}, {below})"
    return cause + ".", _rewritten(code, name, statement, node, fix)


def _helper_division(value: ast.expr, namespace: dict[str, Any]) -> tuple[str, str | None] | None:
    """``dist = target_dist(y)``: a call of the learner's function (or one it calls) that
    divides by a sum that can be 0 (``training/loss_divisions.py``, read from source)."""
    for node in ast.walk(value):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        found = loss_divisions.zero_sum_division(namespace.get(node.func.id), namespace)
        if found is not None:
            cause = (
                f"{loss_divisions.where_text(found)}: the sum is 0 for a row whose values are "
                "all 0, and 0 / 0 is NaN. Where the sum is 0, set the result to 0 (in the "
                "function)."
            )
            return cause, found.fix
    return None


def _newest_assignment(name: str, namespace: dict[str, Any]) -> tuple[ast.Assign, str] | None:
    """The last top-level ``name = ...`` of the newest cell of the history assigning it."""
    newest: tuple[ast.Assign, str] | None = None
    for statement, source in history_assignments(name, namespace, _HISTORY_CELLS, _HISTORY_CHARS):
        if newest is not None and source is not newest[1]:
            break
        if newest is None or statement.lineno > newest[0].lineno:
            newest = statement, source
    return newest


def _negative_origin(name: str, namespace: dict[str, Any]) -> tuple[str, str | None] | None:
    """Where the negatives under a ``log``/``sqrt`` come from, followed back through the
    newest assignments of the history (``_ORIGIN_HOPS`` names): the statement whose
    inputs hold no negatives. A ``cast`` of a complex tensor to a float there (an STFT or
    FFT cast as if it were a magnitude) keeps the real part, negative by its phase: its
    fix is the magnitude, ``tf.abs``."""
    numpy = sys.modules.get("numpy")
    current = name
    for _ in range(_ORIGIN_HOPS):
        found = _newest_assignment(current, namespace)
        if found is None or numpy is None:
            return None
        statement, source = found
        written = " ".join((ast.get_source_segment(source, statement) or "").split())
        value = statement.value
        if not written or len(written) > 120:
            return None
        if (
            isinstance(value, ast.Call)
            and call_name(value) == "cast"
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id in namespace
        ):
            cast = describe("", namespace[value.args[0].id])
            root = (dotted_name(value.func) or "").split(".", 1)[0]
            if cast is not None and (cast.dtype or "").startswith("complex") and root:
                made = value.args[0].id
                return (
                    f"`{current}` was made by `{written}`: a cast of the complex `{made}` to "
                    f"a float keeps only its real part, which is negative wherever its phase "
                    f"says so, not its magnitude. Take the magnitude where `{current}` is made "
                    "(then run the cells after it again).",
                    f"{current} = {root}.abs({made})",
                )
        negative = None
        for read in dict.fromkeys(_read_names(value)):
            if read == current or read not in namespace:
                continue
            # Read only once a NaN was found (the explaining budget): larger arrays too.
            values = held_array(namespace[read], _ORIGIN_ELEMENTS, ("float",))
            if values is not None and bool((values < 0).any()):
                negative = read
                break
        if negative is None:
            if current == name:
                return None
            return (
                f"The negatives come from `{current}`, made by `{written}`. Find why it is "
                f"negative before taking the log of what is computed from it.",
                None,
            )
        current = negative
    return None
