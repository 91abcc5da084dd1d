"""Data normalised over the wrong axis: across the examples where each example was meant,
or across the features where each feature was meant.

Rows are examples. ``x / tf.reduce_sum(x, axis=0)`` divides each column by its total over
the examples, so each column sums to 1, not each row (an example's values are not a
distribution afterwards); ``(x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, ...)``
standardises each example over its own features, mixing features measured in different
units, where each feature was meant to get mean 0 and spread 1 over the examples. Both
run without any error and the model trains on the wrong numbers.

Found after a cell that completed, from its top-level expressions (``cell_reading``,
parsed once per source) and shapes only: ``a / R(a, axis=0)`` with ``R`` a sum
(``tf.reduce_sum``, ``np.sum``, ``a.sum``), or ``a - M(a, axis=1)`` with ``M`` a mean
(``axis=-1`` too), where ``a`` holds a rank-2 ``(N, F)`` tensor or array, F > 1, and the
cell, or a later one, shows that axis 0 counts examples: the result (or ``a``) is given
to ``fit``, ``evaluate``, ``predict``, ``train_on_batch``, ``Dataset.from_tensor_slices``
or a Keras model called on it (a later cell: the result's name still holding the same
object, followed by a weak reference; at most ``MAX_PENDING`` kept). The note names the
expression, the shape and the call that feeds the model, and gives the reduction over
the other axis.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    unwrap,
    value_at,
    value_kind_at,
)
from jupyterlab_tfcoach.monitor.syntax import int_literal

SECTION = "class-axis"
MAX_NOTES = 2
MAX_PENDING = 8
_SUMS = frozenset({"reduce_sum", "sum"})
_MEANS = frozenset({"reduce_mean", "mean"})
_FEEDS = frozenset({"fit", "evaluate", "predict", "train_on_batch", "from_tensor_slices"})


@dataclass(frozen=True)
class Normalised:
    """``x / tf.reduce_sum(x, axis=0)`` or ``x - x.mean(axis=1, keepdims=True)``."""

    node: ast.BinOp
    operand: ast.expr  # ``x``
    reduction: ast.Call
    axis: ast.expr
    kind: str  # "sum" (over axis 0) or "mean" (over axis 1)


def _reduced(call: ast.Call) -> tuple[ast.expr, ast.expr] | None:
    """The reduced value and the axis node of ``tf.reduce_sum(x, axis=0)``,
    ``np.sum(x, 0)``, ``x.sum(axis=0)``."""
    if not isinstance(call.func, ast.Attribute):
        return None
    axis: ast.expr | None = None
    for keyword in call.keywords:
        if keyword.arg == "axis":
            axis = keyword.value
    owner = call.func.value
    owner_text = reference_path(owner)
    if owner_text is not None and owner_text[0] in ("tf", "tensorflow", "np", "numpy", "keras"):
        if not call.args:
            return None
        if axis is None and len(call.args) >= 2:
            axis = call.args[1]
        value: ast.expr = call.args[0]
    else:
        if axis is None and call.args:
            axis = call.args[0]
        value = owner
    return (value, axis) if axis is not None else None


def _same(a: ast.AST, b: ast.AST) -> bool:
    path = reference_path(unwrap(a))
    return path is not None and path == reference_path(unwrap(b))


def _candidate(node: ast.AST) -> Normalised | None:
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.Div, ast.Sub)):
        return None
    right: ast.AST = node.right
    while isinstance(right, ast.Subscript):  # ``x.mean(axis=1)[:, None]``
        right = right.value
    if not isinstance(right, ast.Call):
        return None
    name = call_name(right)
    kind = "sum" if isinstance(node.op, ast.Div) and name in _SUMS else None
    if isinstance(node.op, ast.Sub) and name in _MEANS:
        kind = "mean"
    if kind is None:
        return None
    reduced = _reduced(right)
    if reduced is None:
        return None
    value, axis_node = reduced
    axis = int_literal(axis_node)
    if (kind == "sum" and axis != 0) or (kind == "mean" and axis not in (1, -1)):
        return None
    left: ast.AST = node.left
    if kind == "sum" and isinstance(left, ast.BinOp):  # ``(x - lo) / ...`` is another idea
        return None
    if not _same(left, value):
        return None
    return Normalised(node, value, right, axis_node, kind)


def _candidates(code: CellCode) -> list[Normalised]:
    found: list[Normalised] | None = code.memo.get("normalisations")
    if found is None:
        found = code.memo["normalisations"] = [
            candidate for node in code.nodes if (candidate := _candidate(node)) is not None
        ]
    return found


def _statement_target(code: CellCode, node: ast.AST) -> str | None:
    """The name the expression's statement binds: ``x_norm`` in ``x_norm = (x - m) / s``."""
    for ancestor in [node, *code.ancestors(node)]:
        parent = code.parents.get(id(ancestor))
        if isinstance(parent, ast.Assign) and parent.value is ancestor:
            if len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                return parent.targets[0].id
            return None
    return None


def _feeding_call(
    code: CellCode, names: set[str], after: int, namespace: dict[str, Any]
) -> ast.Call | None:
    """A call at or after line ``after`` that gives one of ``names`` to a model as its
    examples: ``model.fit(x, ...)``, ``Dataset.from_tensor_slices((x, y))``, ``model(x)``."""
    for node in code.nodes:
        if not isinstance(node, ast.Call) or node.lineno < after or not node.args:
            continue
        first = node.args[0]
        if call_name(node) == "from_tensor_slices" and isinstance(first, ast.Tuple):
            first = first.elts[0] if first.elts else first
        if not (isinstance(first, ast.Name) and first.id in names):
            continue
        if call_name(node) in _FEEDS and isinstance(node.func, ast.Attribute):
            return node
        if value_kind_at(node.func, namespace) == "model":
            return node
    return None


@dataclass
class _Pending:
    """A wrong-axis normalisation whose result no cell has given to a model yet."""

    code: CellCode
    found: Normalised
    result: weakref.ReferenceType[Any]  # the value its name held after that cell
    shape: tuple[int, int]


class NormalisationAxisCheck:
    """The check, with the normalisations of earlier cells still waiting for a model: the
    cell that shows axis 0 counts examples may come later (``x = ...`` in one cell,
    ``model.fit(x, y)`` in the next). Only a weak reference to the result is kept, and
    it must still be the object its name holds."""

    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def __call__(self, code: CellCode, namespace: dict[str, Any]) -> list[Note]:
        notes = self._earlier_cells(code, namespace)
        for found in _candidates(code):
            if len(notes) >= MAX_NOTES:
                break
            note_text = self._this_cell(code, found, namespace)
            if note_text is not None:
                notes.append(reports.note(note_text, SECTION))
        return notes

    def _this_cell(
        self, code: CellCode, found: Normalised, namespace: dict[str, Any]
    ) -> str | None:
        line = found.node.lineno
        held = unwrap(found.operand)
        path = reference_path(held)
        if path is None or (code.rebound_after(path, line) and len(path) > 1):
            return None
        names = {path[0]} if len(path) == 1 and not code.rebound_after(path, line) else set()
        target = _statement_target(code, found.node)
        if target is not None:
            names.add(target)
        text = code.segment(held)
        operand = value_at(held, namespace, text) if text is not None else None
        if operand is None and target is not None:
            # ``x`` rebound to its normalised self: the result has x's shape.
            operand = value_at(ast.Name(target), namespace, target)
        shape = _examples_by_features(operand.shape if operand is not None else None)
        if shape is None:
            return None
        feed = _feeding_call(code, names, line, namespace)
        if feed is None:
            self._remember(code, found, target, namespace, shape)
            return None
        return _text(code, found, shape, feed, code)

    def _remember(
        self,
        code: CellCode,
        found: Normalised,
        target: str | None,
        namespace: dict[str, Any],
        shape: tuple[int, int],
    ) -> None:
        if target is None or code.rebound_after((target,), found.node.lineno):
            return
        try:
            result = weakref.ref(namespace[target])
        except (KeyError, TypeError):
            return
        if len(self._pending) >= MAX_PENDING:
            self._pending.pop(next(iter(self._pending)))
        self._pending[target] = _Pending(code, found, result, shape)

    def _earlier_cells(self, code: CellCode, namespace: dict[str, Any]) -> list[Note]:
        notes: list[Note] = []
        for name, pending in list(self._pending.items()):
            value = pending.result()
            if value is None or namespace.get(name) is not value:
                del self._pending[name]  # rebound or gone: that result is not used
                continue
            if pending.code is code:
                continue
            feed = _feeding_call(code, {name}, 0, namespace)
            if feed is None:
                continue
            del self._pending[name]
            text = _text(pending.code, pending.found, pending.shape, feed, code)
            if text is not None:
                notes.append(reports.note(text, SECTION))
        return notes


def _examples_by_features(shape: tuple[int | None, ...] | None) -> tuple[int, int] | None:
    if shape is None or len(shape) != 2:
        return None
    examples, features = shape
    if features is None or features < 2 or examples is None or examples < 2:
        return None
    return examples, features


_SPREADS = frozenset({"reduce_mean", "mean", "reduce_std", "std", "reduce_variance", "var"})


def _outermost(code: CellCode, node: ast.AST) -> ast.AST:
    """The largest expression holding ``node`` (the statement's value)."""
    outer = node
    for ancestor in code.ancestors(node):
        if not isinstance(ancestor, ast.expr):
            break
        outer = ancestor
    return outer


def _replace_axis(code: CellCode, found: Normalised, axis: str, keepdims: bool) -> str | None:
    """The whole expression with the axis of each reduction of the operand replaced: the
    sum itself, or every mean, std and variance over axis 1 of it (``keepdims=True``
    added when asked and missing)."""
    outer = _outermost(code, found.node)
    expression = code.segment(outer)
    if expression is None:
        return None
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(outer):
        if not isinstance(node, ast.Call):
            continue
        if node is not found.reduction and not (
            found.kind == "mean" and call_name(node) in _SPREADS
        ):
            continue
        reduced = _reduced(node)
        if reduced is None or not _same(reduced[0], found.operand):
            continue
        if int_literal(reduced[1]) != int_literal(found.axis):
            continue
        axis_node = reduced[1]
        if axis_node.lineno != outer.lineno or axis_node.end_col_offset is None:
            return None
        edits.append((axis_node.col_offset, axis_node.end_col_offset, axis))
        if keepdims and not any(k.arg == "keepdims" for k in node.keywords):
            if node.end_col_offset is None:
                return None
            edits.append((node.end_col_offset - 1, node.end_col_offset - 1, ", keepdims=True"))
    text = expression.encode("utf-8")
    base = outer.col_offset
    for start, stop, new in sorted(edits, reverse=True):
        text = text[: start - base] + new.encode("utf-8") + text[stop - base :]
    return text.decode("utf-8") if edits else None


def _text(
    code: CellCode, found: Normalised, shape: tuple[int, int], feed: ast.Call, feeding: CellCode
) -> str | None:
    """The note; ``feeding`` is the cell holding the call that gives the data to a model
    (this cell; ``code``, holding the normalisation, may be an earlier one)."""
    expression = code.segment(found.node)
    operand = code.segment(found.operand)
    feed_text = feeding.segment(feed)
    if expression is None or operand is None or feed_text is None:
        return None
    examples, features = shape
    cell = "this cell" if feeding is code else "an earlier cell"
    where = (
        f"`{expression}` (line {found.node.lineno} of {cell}) normalises `{operand}`, "
        f"a {show_shape(shape)} value whose rows are examples (`{feed_text}` on line "
        f"{feed.lineno} of this cell gives it to the model as {examples} examples of "
        f"{features} features)"
    )
    if found.kind == "sum":
        fixed = _replace_axis(code, found, "1", keepdims=True)
        if fixed is None:
            return None
        return (
            f"{where}, but it divides by the sum over axis 0, across the examples: each "
            "column (feature) now sums to 1, not each row, and every example's values "
            "depend on the others in the batch. Divide each row by its own sum: "
            f"`{fixed}`."
        )
    fixed = _replace_axis(code, found, "0", keepdims=False)
    if fixed is None:
        return None
    return (
        f"{where}, but it subtracts the mean over axis {code.segment(found.axis)}, across "
        "each example's own features: features measured in different units are mixed, and "
        "each feature does not get mean 0 over the examples. Standardise each feature "
        f"over the examples, axis 0: `{fixed}`."
    )
