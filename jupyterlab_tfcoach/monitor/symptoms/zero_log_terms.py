"""A NaN result from ``y * log(y / m)`` where ``y`` holds zeros: 0 times minus infinity.

Entropies, KL divergences, Poisson and multinomial deviances and hand-written
cross-entropies all hold a term ``y * log(y ...)`` whose limit is 0 when ``y`` is 0. Written
as a product, it computes ``log(0) = -inf`` first, and ``0 * -inf`` is NaN: one zero among
the counts or probabilities makes the whole sum NaN, and every figure derived from it too.
Nothing raises.

The symptom, read after a cell that completed (a cell without ``log`` costs one regular
expression search): a name the cell assigns at its top level holds NaN (a Python float, a
NumPy value or an eager tensor of at most ``MAX_ELEMENTS`` values). The cause is read from
the expression that computed it (the names it uses followed to their assignments in the
cell): a product ``A * log(B)`` (``tf.math.log``, ``np.log``, ``keras.ops.log``) where
``A`` is a name holding zeros and ``B`` is ``A`` itself or ``A`` divided or multiplied by
something (no ``+ eps``, which keeps the log finite). The note names the NaN, the term, the
zeros; the fix is the statement with ``xlogy(A, B)``, which is 0 where ``A`` is 0
(``tf.math.xlogy``, ``keras.ops.xlogy``; ``scipy.special.xlogy`` for ``np.log`` when SciPy is
installed). Every statement of the cell holding such a term is rewritten in the fix.
"""

from __future__ import annotations

import ast
import math
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name

SECTION = "nan-inf"
MAX_ELEMENTS = 1_000_000
MAX_NOTES = 1
WANTED = re.compile(r"\blog\s*\(")
_FOLLOW = 4


def _is_nan(value: Any) -> bool:
    if type(value) is float:
        return math.isnan(value)
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return False
    if isinstance(value, numpy.floating):
        return bool(numpy.isnan(value))
    operand = describe("", value)
    if operand is not None and operand.kind == "tensor" and operand.shape == ():
        # A scalar tensor's ``numpy()`` is a NumPy scalar, not an array.
        if not (operand.dtype or "").startswith("float"):
            return False
        to_numpy = library_attribute(value, "numpy")
        scalar = to_numpy() if to_numpy is not None else None
        return isinstance(scalar, numpy.floating) and bool(numpy.isnan(scalar))
    array = held_array(value, MAX_ELEMENTS, ("float",))
    return array is not None and bool(numpy.isnan(array).any())


def _zeros(value: Any) -> int:
    array = held_array(value, MAX_ELEMENTS, ("float", "int", "uint"))
    if array is None:
        return 0
    return int((array == 0).sum())


def _log_library(call: ast.Call) -> str | None:
    """``tf``, ``keras`` or ``numpy`` for a log call; None for anything else."""
    if call_name(call) != "log" or len(call.args) != 1 or call.keywords:
        return None
    spelled = dotted_name(call.func) or ""
    head = spelled.split(".", 1)[0]
    if spelled.endswith(("math.log", "tf.log")) or head == "tf":
        return "tf"
    if spelled.endswith("ops.log"):
        return "keras"
    if head in ("np", "numpy", "jnp"):
        return "numpy"
    return None


def _holds(node: ast.AST, name: str) -> bool:
    """``node`` is ``name``, or ``name`` divided or multiplied by something (no sum)."""
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _holds(node.left, name)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _holds(node.left, name) or _holds(node.right, name)
    return False


def _terms(root: ast.AST, namespace: dict[str, Any]) -> list[tuple[ast.BinOp, str, ast.Call]]:
    """The products ``A * log(B)`` under ``root`` whose ``A`` holds zeros where ``B`` is 0."""
    found: list[tuple[ast.BinOp, str, ast.Call]] = []
    for node in ast.walk(root):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        for factor, other in ((node.left, node.right), (node.right, node.left)):
            if not (isinstance(factor, ast.Name) and isinstance(other, ast.Call)):
                continue
            if _log_library(other) is None or not _holds(other.args[0], factor.id):
                continue
            if factor.id in namespace and _zeros(namespace[factor.id]):
                found.append((node, factor.id, other))
                break
    return found


def _replacement(library: str, log_call: ast.Call, factor: str, argument: str) -> str | None:
    """The term computed as 0 where ``factor`` is 0, in the cell's own spelling of the log's
    library: ``tf.math.xlogy(a, b)``; ``where`` for NumPy and ``keras.ops`` (no xlogy
    there), the log taken of 1 where ``factor`` is 0 so that no infinity is made."""
    spelled = dotted_name(log_call.func) or ""
    if not spelled.endswith(".log"):
        return None
    if library == "tf":
        return (
            f"{spelled[:-3]}xlogy({factor}, {argument})" if spelled.endswith("math.log") else None
        )
    where = f"{spelled[:-4]}.where"
    return (
        f"{where}({factor} > 0, {factor} * {spelled}({where}({factor} > 0, {argument}, 1.0)), 0.0)"
    )


def _log_products(root: ast.AST) -> bool:
    """``root`` holds a product of a name and a log call (values not read)."""
    for node in ast.walk(root):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for factor, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(factor, ast.Name) and isinstance(other, ast.Call):
                    if _log_library(other) is not None:
                        return True
    return False


def _candidates(code: CellCode) -> list[str]:
    """The names the cell assigns from an expression (names followed) holding such a
    product."""
    found: list[str] = []
    for name, assignments in code.assigned.items():
        line, value = assignments[-1]
        follow = [value]
        for _ in range(_FOLLOW + 1):
            if any(_log_products(root) for root in follow):
                found.append(name)
                break
            used = [n.id for root in follow for n in ast.walk(root) if isinstance(n, ast.Name)]
            follow = [v for u in used if (v := code.assignment_before(u, line)) is not None]
            if not follow:
                break
    return found


def zero_log_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    # Source first: only names computed from a ``name * log(...)`` product are read.
    candidates = code.memo.get("zero_log_candidates")
    if candidates is None:
        candidates = code.memo["zero_log_candidates"] = _candidates(code)
    for name in candidates:
        line, value = code.assigned[name][-1]
        if code.rebound_after((name,), line) or name not in namespace:
            continue
        if not _is_nan(namespace[name]):
            continue
        terms = _terms(value, namespace)
        follow = [value]
        for _ in range(_FOLLOW):
            if terms:
                break
            used = [n.id for root in follow for n in ast.walk(root) if isinstance(n, ast.Name)]
            follow = [v for u in used if (v := code.assignment_before(u, line)) is not None]
            for root in follow:
                terms += _terms(root, namespace)
        if not terms:
            continue
        note = _note(code, name, terms[0], namespace)
        if note is not None:
            return [note]
    return []


def _note(
    code: CellCode, name: str, term: tuple[ast.BinOp, str, ast.Call], namespace: dict[str, Any]
) -> Note | None:
    product, factor, log_call = term
    library = _log_library(log_call)
    written = code.segment(product)
    argument = code.segment(log_call.args[0])
    if library is None or written is None or argument is None:
        return None
    if _replacement(library, log_call, factor, argument) is None:
        return None
    how = "`tf.math.xlogy` computes it so" if library == "tf" else "`where` keeps it so"
    # Every statement of the cell holding such a term, rewritten.
    fixes: list[str] = []
    for node in code.nodes:
        if not isinstance(node, ast.Assign):
            continue
        text = code.segment(node)
        if text is None:
            continue
        for other, other_factor, other_log in _terms(node, namespace):
            old = code.segment(other)
            other_argument = code.segment(other_log.args[0])
            other_library = _log_library(other_log)
            if old is None or other_argument is None or other_library is None or old not in text:
                continue
            replaced = _replacement(other_library, other_log, other_factor, other_argument)
            if replaced is not None:
                text = text.replace(old, replaced, 1)
        if text != code.segment(node):
            fixes.append(f"`{text}`")
    if not fixes:
        return None
    zeros = _zeros(namespace[factor])
    text = (
        f"`{name}` is NaN: `{written}` computes `log` of 0 where `{factor}` is 0 ({zeros} "
        f"value{'s' if zeros != 1 else ''}), and 0 times minus infinity is NaN, which makes "
        f"the whole sum NaN. The term's limit is 0 where `{factor}` is 0, and {how}. "
        f"Nothing raises. Fix: {' and '.join(fixes[:3])}."
    )
    return reports.note(text, SECTION)
