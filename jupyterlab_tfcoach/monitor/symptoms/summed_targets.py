"""``tape.gradient`` of a target with several entries, used as if it kept them apart.

``tape.gradient(target, source)`` differentiates the SUM of the target's entries: for a
target of shape ``(m,)`` it returns one array shaped like the source, not the ``(m, n)``
Jacobian (one row per entry). That sum is often what is meant (a loss summed over a
batch), so a non-scalar target alone says nothing. Two uses of the result say the
entries were meant apart, and nothing raises in either:

- the result is kept as a Jacobian: bound to a name ``J``/``jac``/``jacobian`` (alone or
  with a suffix or prefix: ``J_f``, ``f_jac``), or the cell says "Jacobian" in a comment
  or a string while it calls no ``jacobian``/``batch_jacobian``. Fix: ``tape.jacobian``
  (``batch_jacobian`` named when the target and the source share a first axis);
- a Hessian-vector product written ``outer.gradient(g, w) * v``, where ``g`` is a gradient
  the cell took with another tape: the outer gradient of ``g`` is ``H @ 1`` (the row sums
  of the Hessian), and multiplying it by ``v`` entry by entry is ``H @ v`` only when the
  Hessian is diagonal. Fix: ``outer.gradient(g, w, output_gradients=v)``, which weights
  the entries of ``g`` by ``v`` (the gradient of ``sum(g * v)``, ``H @ v``).

Read after a completed cell holding ``.gradient(`` (a regular-expression search
otherwise): top-level ``r = T.gradient(target, source)`` statements whose tape ``T`` holds
a ``GradientTape``, ``target`` and ``source`` names holding tensors or variables, the
target with more than one entry, no ``output_gradients``, neither name bound again later in
the cell. Only shapes are read.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "gradient-tape"
WANTED = re.compile(r"\.gradient\s*\(")
# The result named as a Jacobian: ``J``, ``jac``, ``jacobian``, alone or joined by ``_``.
_JACOBIAN_NAME = re.compile(r"^(?:\w+_)?(?:j|jac|jacobian)(?:_\w+)?$", re.IGNORECASE)
_JACOBIAN_WORD = word_gate(r"jacobian", re.IGNORECASE)
_JACOBIAN_CALL = word_gate(r"\.(?:batch_)?jacobian\s*\(")
_HELD_KINDS = frozenset({"tensor", "variable"})


def _held(node: ast.AST, namespace: dict[str, Any]) -> Operand | None:
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return None
    operand = describe(node.id, namespace[node.id])
    if operand is None or operand.kind not in _HELD_KINDS or operand.shape is None:
        return None
    if any(size is None for size in operand.shape):
        return None
    return operand


def _is_tape(node: ast.AST, namespace: dict[str, Any]) -> bool:
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return False
    kind = type(namespace[node.id])
    return kind.__name__ == "GradientTape" and kind.__module__.startswith("tensorflow")


def _gradient_call(node: ast.AST, namespace: dict[str, Any]) -> ast.Call | None:
    """``T.gradient(target, source)`` of a held tape, without ``output_gradients``."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and len(node.args) == 2
        and not node.keywords
        and _is_tape(node.func.value, namespace)
    ):
        return None
    return node


def summed_target_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    for node in code.nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        found = _jacobian(code, node, node.targets[0].id, namespace) or _hessian_vector(
            code, node, node.targets[0].id, namespace
        )
        if found is not None:
            return [found]
    return []


def _operands(
    code: CellCode, call: ast.Call, namespace: dict[str, Any]
) -> tuple[Operand, Operand] | None:
    target, source = _held(call.args[0], namespace), _held(call.args[1], namespace)
    if target is None or source is None or math.prod(target.shape or ()) < 2:
        return None
    names = (target.source, source.source)
    if any(code.rebound_after((name,), call.lineno) for name in names):
        return None
    return target, source


def _jacobian(
    code: CellCode, statement: ast.Assign, result: str, namespace: dict[str, Any]
) -> Note | None:
    call = _gradient_call(statement.value, namespace)
    if call is None:
        return None
    named = _JACOBIAN_NAME.match(result) is not None
    said = _JACOBIAN_WORD.search(code.source) and not _JACOBIAN_CALL.search(code.source)
    if not (named or said):
        return None
    operands = _operands(code, call, namespace)
    written = code.segment(call)
    if operands is None or written is None:
        return None
    target, source = operands
    tape = code.segment(call.func.value) if isinstance(call.func, ast.Attribute) else None
    if tape is None:
        return None
    entries = math.prod(target.shape or ())
    wanted = show_shape((*(target.shape or ()), *(source.shape or ())))
    why = f"`{result}` is named as a Jacobian" if named else "the cell calls it a Jacobian"
    batch = ""
    if (
        len(target.shape or ()) >= 2
        and len(source.shape or ()) >= 2
        and (target.shape or ())[0] == (source.shape or ())[0]
    ):
        batch = (
            f" (`{tape}.batch_jacobian({target.source}, {source.source})` gives one per row "
            f"when row i of `{target.source}` depends only on row i of `{source.source}`)"
        )
    text = (
        f"`{result} = {written}` (line {statement.lineno} of this cell): `{target.source}` has "
        f"{entries} entries, shape {show_shape(target.shape or ())}, and `{tape}.gradient` returns "
        f"the gradient of their SUM, shaped like `{source.source}` "
        f"{show_shape(source.shape or ())}, not the {wanted} Jacobian with one gradient per entry; "
        f"{why}. `{tape}.jacobian` keeps the entries apart{batch}. Fix: "
        f"`{result} = {tape}.jacobian({target.source}, {source.source})`."
    )
    return reports.note(text, SECTION)


def _first_derivative(code: CellCode, name: str, line: int) -> bool:
    """``name`` was made in the cell by another ``tape.gradient`` call."""
    value = code.assignment_before(name, line)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "gradient"
    )


def _hessian_vector(
    code: CellCode, statement: ast.Assign, result: str, namespace: dict[str, Any]
) -> Note | None:
    product = statement.value
    if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
        return None
    sides = [
        (call, other)
        for side, other in ((product.left, product.right), (product.right, product.left))
        if (call := _gradient_call(side, namespace)) is not None
    ]
    if len(sides) != 1:
        return None
    call, other = sides[0]
    operands = _operands(code, call, namespace)
    weights = _held(other, namespace)
    if operands is None or weights is None or not isinstance(call.func, ast.Attribute):
        return None
    gradient, source = operands
    if weights.shape != gradient.shape or not _first_derivative(
        code, gradient.source, statement.lineno
    ):
        return None
    if code.rebound_after((weights.source,), statement.lineno):
        return None
    written, tape = code.segment(call), code.segment(call.func.value)
    whole = code.segment(product)
    if written is None or tape is None or whole is None:
        return None
    text = (
        f"`{result} = {whole}` (line {statement.lineno} of this cell): `{gradient.source}` is "
        f"a gradient with {math.prod(gradient.shape or ())} entries, and `{written}` "
        f"differentiates their SUM: it is the Hessian times a vector of ones (the row sums "
        f"of the Hessian), and multiplying that by `{weights.source}` entry by entry is not "
        f"the Hessian times `{weights.source}` (the two agree only for a diagonal Hessian). "
        f"Weight the entries of `{gradient.source}` by `{weights.source}` before "
        f"differentiating: `output_gradients={weights.source}` does it (the gradient of "
        f"`tf.reduce_sum({gradient.source} * {weights.source})`, taken inside the outer tape, "
        f"is the same). Fix: `{result} = {tape}.gradient({gradient.source}, {source.source}, "
        f"output_gradients={weights.source})`."
    )
    return reports.note(text, SECTION)
