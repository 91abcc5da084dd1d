"""A squared distance divided by a length scale that is not squared, inside an ``exp``.

The squared-exponential (RBF) kernel is ``exp(-0.5 * d2 / l**2)``: ``d2`` is a squared
distance, a length squared, and the length scale ``l`` enters squared so that the ratio
has no unit. Written ``exp(-0.5 * d2 / l)``, the kernel's real length scale is
``sqrt(l)``, not ``l`` (``0.5`` becomes ``0.71``, ``4`` becomes ``2``): every covariance,
prediction and fitted length scale is off, and nothing raises.

Read from the source after a completed cell holding ``exp`` and a word of a length scale
(a substring test and a regular-expression search otherwise; once per parsed cell), in
any scope of the cell (a function it defines too): an ``exp`` call whose argument holds
a division ``D / L`` (``D / (2 * L)`` too) where ``L`` is a name or attribute whose words
say a length scale (``lengthscale``, ``length_scale``, ``ls``, ``ell``, ``bandwidth``),
written without a square, and ``D`` is a
squared distance: a name assigned in that scope from an expression holding ``** 2`` or
``square``, or such an expression written inline. The fix is the line with ``L ** 2``.
Silent: ``L ** 2``, ``L * L``, ``tf.square(L)``; a distance that is not squared (the
Laplacian kernel ``exp(-d / l)``); a ``gamma`` or a precision multiplying.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, function_scopes, parsed_source, scope_nodes

SECTION = "reducing-tensors"
WANTED = re.compile(r"length|\bls\b|\bell\b|bandwidth", re.IGNORECASE)
_SCALE_WORDS = re.compile(
    r"^(?:\w+_)?(?:lengthscales?|length_scales?|ls|ell|bandwidth)(?:_\w+)?$", re.IGNORECASE
)


_ROOTS = frozenset({"sqrt", "norm", "euclidean_norm", "reduce_euclidean_norm", "abs"})


def _scale_name(node: ast.expr) -> str | None:
    """The last word of a name or attribute that says a length scale."""
    if isinstance(node, ast.Name):
        word = node.id
    elif isinstance(node, ast.Attribute):
        word = node.attr
    else:
        return None
    return word if _SCALE_WORDS.match(word) else None


def _divisor_scale(node: ast.expr) -> ast.expr | None:
    """``L`` for a divisor ``L`` or ``2 * L`` (a number times it)."""
    if _scale_name(node) is not None:
        return node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, ast.Constant) and _scale_name(side) is not None:
                return side
    return None


def _squares(node: ast.AST) -> bool:
    """Holds a square and no root (``sqrt(sum(d ** 2))`` is a distance, not squared)."""
    if any(isinstance(child, ast.Call) and call_name(child) in _ROOTS for child in ast.walk(node)):
        return False
    return any(
        (
            isinstance(child, ast.BinOp)
            and isinstance(child.op, ast.Pow)
            and isinstance(child.right, ast.Constant)
            and child.right.value == 2
        )
        or (isinstance(child, ast.Call) and call_name(child) == "square")
        for child in ast.walk(node)
    )


def _squared_distance(node: ast.expr, assigned: dict[str, ast.expr]) -> bool:
    """A squared expression: inline, or a name assigned one in the scope (through one
    ``- 2 * ...`` or ``tf.maximum(..., 0)`` as well)."""
    if isinstance(node, ast.Name):
        value = assigned.get(node.id)
        return value is not None and _squares(value)
    # ``-0.5 * d2`` or ``d2 * 0.5``: the squared part is one factor.
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _squared_distance(node.left, assigned) or _squared_distance(node.right, assigned)
    if isinstance(node, ast.UnaryOp):
        return _squared_distance(node.operand, assigned)
    return _squares(node)


def length_scale_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    """Read from the source alone: found once per parsed cell (``memo``)."""
    if "length_scales" not in code.memo:
        code.memo["length_scales"] = _found(code)
    text = code.memo["length_scales"]
    return [reports.note(text, SECTION)] if text is not None else []


def _found(code: CellCode) -> str | None:
    if "exp" not in code.source or WANTED.search(code.source) is None:
        return None
    tree = parsed_source(code.source)
    if tree is None:
        return None
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        assigned: dict[str, ast.expr] = {}
        for node in nodes:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                assigned[node.targets[0].id] = node.value
        for node in nodes:
            if not (isinstance(node, ast.Call) and call_name(node) == "exp" and node.args):
                continue
            for division in ast.walk(node.args[0]):
                if not (isinstance(division, ast.BinOp) and isinstance(division.op, ast.Div)):
                    continue
                scale = _divisor_scale(division.right)
                if scale is None or not _squared_distance(division.left, assigned):
                    continue
                text = _text(code, scope, node, division, scale)
                if text is not None:
                    return text
    return None


def _text(
    code: CellCode, scope: ast.AST, call: ast.Call, division: ast.BinOp, scale: ast.expr
) -> str | None:
    written = ast.get_source_segment(code.source, call)
    divided = ast.get_source_segment(code.source, division)
    scale_text = ast.get_source_segment(code.source, scale)
    lines = code.source.splitlines()
    if None in (written, divided, scale_text) or call.lineno != call.end_lineno:
        return None
    assert scale_text is not None and divided is not None
    line = lines[call.lineno - 1]
    start = scale.col_offset
    if line.encode("utf-8")[start : scale.end_col_offset or 0].decode("utf-8") != scale_text:
        return None
    raw = line.encode("utf-8")
    fixed = (raw[:start] + f"{scale_text} ** 2".encode() + raw[scale.end_col_offset or 0 :]).decode(
        "utf-8"
    )
    where = (
        f"In `{scope.name}`, `{written}`"
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
        else f"`{written}`"
    )
    return (
        f"{where} (line {call.lineno}) divides a squared distance by `{scale_text}`, a "
        f"length scale, not by its square: `{divided}` has the unit of a length, and the "
        f"kernel's real length scale is the square root of `{scale_text}` (0.5 acts as "
        f"0.71, 4 as 2). A squared-exponential kernel is exp(-0.5 * d^2 / l^2). Nothing "
        f"raises. Fix: `{fixed.strip()}`."
    )
