"""A Keras layer of the learner's that scores each example with a dot product written as
``tf.reduce_sum(a * b)``, without an axis: one number for the whole batch.

A per-example score built from products of the example's vectors (``u * v``, a
trilinear ``h * r * t``) is summed over the features only; with no ``axis`` the sum runs
over the batch axis as well, so the layer gives one number for the whole batch where it
meant one per row, and every loss computed from it compares batch totals. Nothing
raises: a scalar broadcasts against anything.

Read after a cell that completed: a top-level ``out = layer(x)`` where ``layer`` holds a
Keras layer or model of a class the learner wrote, ``x`` holds (or is a constant slice of)
an array or tensor of two rows or more, and ``out`` now holds a tensor of shape ``()``.
The class's ``call`` is then read (its source, parsed once per code object, never run):
a ``return`` of a sum (``reduce_sum``, ``ops.sum``) given one product of two or more
factors and no axis. The note names the call, the layer's ``return`` and where it is,
and gives that return with ``axis=-1`` (the features' axis of each example's vectors).
A layer returning a total by design (a sum of squares, a mean, a loss) is not told.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.symptoms.operand_shapes import operand_of
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.model_source import own_function

SECTION = "reducing-tensors"
# A top-level assignment of a call: the only statements this check reads.
WANTED = re.compile(r"^\s*\w+\s*=\s*[\w.]+\s*\(", re.M)
_LAYER_KINDS = frozenset({"layer", "model"})
_ROW_KINDS = frozenset({"array", "tensor", "variable"})
_SUMS = frozenset({"reduce_sum", "sum"})
_MAX_CANDIDATES = 4


def batch_total_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    tried = 0
    for node in code.nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and len(node.value.args) >= 1
        ):
            continue
        layer_path = reference_path(node.value.func)
        found, layer = held_at(layer_path, namespace)
        if not found or layer is None:
            continue
        if value_kind(layer) not in _LAYER_KINDS:
            continue
        tried += 1
        if tried > _MAX_CANDIDATES:
            break
        note = _note(code, node, layer, namespace)
        if note is not None:
            return [note]
    return []


def _note(
    code: CellCode, statement: ast.Assign, layer: Any, namespace: dict[str, Any]
) -> Note | None:
    target = statement.targets[0]
    assert isinstance(target, ast.Name) and isinstance(statement.value, ast.Call)
    if code.rebound_after((target.id,), statement.lineno):
        return None
    found, result = held_at((target.id,), namespace)
    held = describe(target.id, result) if found else None
    if held is None or held.kind != "tensor" or held.shape != ():
        return None
    argument = code.segment(statement.value.args[0])
    given = operand_of(argument, namespace) if argument else None
    rows = given.shape[0] if given is not None and given.shape else None
    if given is None:
        sliced = _first_rows(statement.value.args[0], namespace)
        if sliced is not None:
            given, rows = sliced
    if given is None or rows is None or rows < 2:
        return None
    cls = type(layer)
    if is_library_class(cls):
        return None
    function = own_function(cls, "call")
    method = user_code.method_source(function) if function is not None else None
    if method is None:
        return None
    total = _summed_product(method.tree)
    if total is None:
        return None
    returned, call = total
    written = ast.get_source_segment(method.source, call)
    if not written or "\n" in written or not written.endswith(")"):
        return None
    fixed = f"return {written[:-1]}, axis=-1)"
    class_name = getattr(cls, "__name__", "") or "the layer"
    line = method.first_line + returned.lineno - 1
    place = user_code.place_of(function, line, namespace)
    called = code.segment(statement.value)
    text = (
        f"`{called}` gave `{target.id}` a single number, a tensor of shape "
        f"{show_shape(())}, for {rows} rows of `{argument}` (`{given.source}` is "
        f"{given.description}): "
        f"`{class_name}.call` returns `{written}` ({place}), and a sum without an axis adds "
        "up every example's products as well as each one's features, so the layer scores "
        "the whole batch with one total, and a loss computed from it compares batch totals "
        "without any error. To score each example, sum over the features only: "
        f"`{fixed}`, one score per row."
    )
    return reports.note(text, SECTION)


def _first_rows(node: ast.expr, namespace: dict[str, Any]) -> tuple[Any, int] | None:
    """(the array, its rows kept) for ``x[:4]`` or ``x[2:10, ...]``: a slice of constant
    bounds on the first axis of a name holding an array or tensor, counted from its shape
    (the slice is never run)."""
    if not isinstance(node, ast.Subscript):
        return None
    found, value = held_at(reference_path(node.value), namespace)
    base = describe(ast.unparse(node.value), value) if found else None
    if base is None or base.kind not in _ROW_KINDS or not base.shape or base.shape[0] is None:
        return None
    first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
    if not isinstance(first, ast.Slice):
        return None
    bounds = []
    for part in (first.lower, first.upper, first.step):
        if part is None:
            bounds.append(None)
        elif isinstance(part, ast.Constant) and type(part.value) is int:
            bounds.append(part.value)
        else:
            return None
    try:
        return base, len(range(*slice(*bounds).indices(base.shape[0])))
    except (ValueError, TypeError):
        return None


def _summed_product(tree: ast.Module) -> tuple[ast.Return, ast.Call] | None:
    """The ``return tf.reduce_sum(a * b ...)`` of ``call`` (its own body, not a nested
    function's): one positional argument, a product of two or more factors, no axis."""
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    found = None
    for statement in ast.walk(definition):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if statement is not definition:
                return None  # a nested function: its returns are not call's
        if not isinstance(statement, ast.Return) or not isinstance(statement.value, ast.Call):
            continue
        call = statement.value
        if call_name(call) not in _SUMS or len(call.args) != 1 or call.keywords:
            continue
        product = call.args[0]
        if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            continue
        if _constant_factor(product):
            continue
        found = (statement, call)
    return found


def _constant_factor(product: ast.BinOp) -> bool:
    """``0.5 * tf.reduce_sum(...)``-like products of a number: a scaled total, not a dot
    product of two of the example's vectors."""
    node: ast.expr = product
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        if isinstance(node.right, ast.Constant):
            return True
        node = node.left
    return isinstance(node, ast.Constant)
