"""A least-squares fit by hand whose design matrix has no column of ones, on data with an
offset.

``tf.linalg.lstsq(A, y)`` or the normal equations ``tf.linalg.solve(A^T A, A^T y)`` fit
``y`` by a combination of the columns of ``A`` and nothing else: without a column of ones
the fitted plane goes through the origin. When ``y`` has an offset (``y = X w + 3``), the
fit cannot represent it: the slopes absorb it and come out biased, the residuals are
large, and nothing raises.

Read after a completed cell holding ``lstsq`` or ``solve`` (a regular-expression search
otherwise): a top-level ``w = ...`` whose value holds ``lstsq(A, b)`` (TensorFlow's or
NumPy's) or ``solve(T(A) @ A, T(A) @ b)`` (``T`` a ``tf.transpose``, ``.T``, or
``matmul(A, ., transpose_a=True)``), ``A`` a name holding a float ``(n, p)`` array or
tensor (n > p + 2, at most ``MAX_VALUES`` values), ``b`` a name (or its ``[:, None]``,
``expand_dims``, ``reshape``) holding ``n`` values. The symptom, measured with NumPy on
those values: no column of ``A`` is constant, and adding a column of ones to ``A`` cuts
the residual sum of squares of the fit at least ``RSS_RATIO`` times. The note names the
fit, both sums, and the fix: where the cell made ``A`` (``A = X``), that statement with a
column of ones appended (``tf.concat``/``np.column_stack``); else the words. Silent: a
design matrix with a constant column, or one whose columns already span a constant (one-
hot groups), data through the origin (the column of ones gains nothing), and a design
matrix told already (by id: a second fit of it in a later cell).
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
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, numpy_name

SECTION = "reducing-tensors"
WANTED = re.compile(r"\blstsq\b|\bsolve\s*\(")
MAX_VALUES = 2_000_000
RSS_RATIO = 2.0  # the column of ones must at least halve the residual sum of squares
_RESHAPES = frozenset({"expand_dims", "reshape"})
_MAX_TOLD = 64
# Design matrices told (by id, no reference kept): a later cell fitting the same matrix
# again (``lstsq`` after the normal equations) is not told twice.
_TOLD: list[int] = []
_MODULES = frozenset({"tf", "tensorflow", "np", "numpy", "jnp", "ops"})


def _transposed_name(node: ast.expr) -> str | None:
    """``A`` for ``tf.transpose(A)`` or ``A.T``."""
    if isinstance(node, ast.Call) and call_name(node) == "transpose" and len(node.args) == 1:
        node = node.args[0]
    elif isinstance(node, ast.Attribute) and node.attr == "T":
        node = node.value
    else:
        return None
    return node.id if isinstance(node, ast.Name) else None


def _times_transposed(node: ast.expr) -> tuple[str, ast.expr] | None:
    """``(A, b)`` for ``T(A) @ b`` or ``matmul(A, b, transpose_a=True)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        name = _transposed_name(node.left)
        return (name, node.right) if name is not None else None
    if isinstance(node, ast.Call) and call_name(node) == "matmul" and len(node.args) == 2:
        flags = {k.arg: k.value for k in node.keywords}
        flag = flags.get("transpose_a")
        first = node.args[0]
        if isinstance(flag, ast.Constant) and flag.value is True and isinstance(first, ast.Name):
            if "transpose_b" not in flags:
                return first.id, node.args[1]
    return None


def _target_name(node: ast.expr) -> str | None:
    """The name a right-hand side is read from: ``y``, ``y[:, None]``, ``tf.expand_dims(y,
    -1)``, ``y.reshape(-1, 1)``."""
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        plain = all(
            (isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None)
            or (isinstance(p, ast.Constant) and p.value is None)
            for p in parts
        )
        node = node.value if plain else node
    elif isinstance(node, ast.Call) and call_name(node) in _RESHAPES:
        function = node.func
        owner = function.value if isinstance(function, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id not in _MODULES:
            node = owner  # ``y.reshape(-1, 1)``
        elif node.args:
            node = node.args[0]  # ``tf.reshape(y, (-1, 1))``, ``np.expand_dims(y, 1)``
    return node.id if isinstance(node, ast.Name) else None


def _fit(call: ast.Call) -> tuple[str, str] | None:
    """``(A, b)`` of a least-squares call: ``lstsq(A, b)`` or ``solve(T(A) @ A, T(A) @ b)``."""
    name = call_name(call)
    if len(call.args) < 2:
        return None
    if name == "lstsq" and isinstance(call.args[0], ast.Name):
        target = _target_name(call.args[1])
        return (call.args[0].id, target) if target is not None else None
    if name != "solve":
        return None
    gram, right = _times_transposed(call.args[0]), _times_transposed(call.args[1])
    if gram is None or right is None:
        return None
    design, same = gram
    if not (isinstance(same, ast.Name) and same.id == design) or right[0] != design:
        return None
    target = _target_name(right[1])
    return (design, target) if target is not None else None


def missing_intercept_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    for result, assignments in code.assigned.items():
        line, value = assignments[-1]
        for node in ast.walk(value):
            if not isinstance(node, ast.Call) or call_name(node) not in ("lstsq", "solve"):
                continue
            found = _fit(node)
            if found is None:
                continue
            note = _note(code, result, line, node, found[0], found[1], namespace)
            if note is not None:
                return [note]
    return []


def _residual_sums(design: Any, target: Any) -> tuple[float, float] | None:
    """The residual sums of squares of the least-squares fit without and with a column of
    ones; None when a column of the design is constant already."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    a = design.astype("float64")
    b = target.astype("float64").reshape(-1)
    spread = a.std(axis=0)
    if bool((spread <= 1e-12 * (numpy.abs(a).max() + 1e-300)).any()):
        return None
    without = b - a @ numpy.linalg.lstsq(a, b, rcond=None)[0]
    ones = numpy.column_stack([a, numpy.ones(a.shape[0])])
    within = b - ones @ numpy.linalg.lstsq(ones, b, rcond=None)[0]
    return float(without @ without), float(within @ within)


def _note(
    code: CellCode,
    result: str,
    line: int,
    call: ast.Call,
    design_name: str,
    target_name: str,
    namespace: dict[str, Any],
) -> Note | None:
    if design_name not in namespace or target_name not in namespace:
        return None
    design = held_array(namespace[design_name], MAX_VALUES, ("float",), ndim=2)
    target = held_array(namespace[target_name], MAX_VALUES, ("float",))
    if design is None or target is None:
        return None
    rows, columns = design.shape
    if target.size != rows or rows <= columns + 2:
        return None
    if id(namespace[design_name]) in _TOLD:
        return None
    sums = _residual_sums(design, target)
    if sums is None:
        return None
    without, within = sums
    if without <= 0 or without < RSS_RATIO * within:
        return None
    written = code.segment(call)
    if written is None:
        return None
    operand = describe(design_name, namespace[design_name])
    tensor = operand is not None and operand.kind == "tensor"
    library = ("tf" if "tf" in namespace else None) if tensor else numpy_name(namespace)
    fix = _fix(code, design_name, line, rows, operand.dtype if operand else None, library)
    times = f"{without / within:.0f}" if within > 0 else "infinitely many"
    text = (
        f"`{result}` (line {line} of this cell) is a least-squares fit, `{written}`, of "
        f"`{target_name}` on the {columns} columns of `{design_name}` ({rows}, {columns}), "
        f"none of them a column of ones: the fit has no intercept and is forced through the "
        f"origin. `{target_name}` has an offset: with a column of ones added, the residual "
        f"sum of squares falls from {without:.4g} to {within:.4g} ({times} times smaller), "
        f"so the slopes in `{result}` absorb the missing intercept and come out biased. "
        "Nothing raises. Add a column of ones to the design matrix (its weight is the "
        "intercept)"
    )
    text += f". Fix: `{fix}`." if fix is not None else "."
    _TOLD.append(id(namespace[design_name]))
    del _TOLD[:-_MAX_TOLD]
    return reports.note(text, SECTION)


def _fix(
    code: CellCode, design: str, line: int, rows: int, dtype: str | None, library: str | None
) -> str | None:
    """The cell's ``A = X`` with a column of ones appended, when the cell made ``A``."""
    value = code.assignment_before(design, line)
    made = code.segment(value) if value is not None else None
    if made is None or library is None:
        return None
    if library == "tf":
        if dtype is None:
            return None
        return f"{design} = tf.concat([{made}, tf.ones(({rows}, 1), dtype=tf.{dtype})], axis=1)"
    return f"{design} = {library}.column_stack([{made}, {library}.ones({rows})])"
