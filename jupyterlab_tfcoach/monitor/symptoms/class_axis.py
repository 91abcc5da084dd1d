"""A class picked over the wrong axis, or labels in the wrong format for the pick.

Predictions of a classifier are a ``(batch, classes)`` value: one row per example. The
class of each example is ``argmax`` over the last axis; ``tf.argmax(probs)`` (TensorFlow's
default axis is 0), ``np.argmax(probs, axis=0)`` or ``tf.nn.softmax(z, axis=0)`` work
down the columns instead and give one value per class. Compared with the labels, the
numbers are wrong without any error: TensorFlow's ``==`` on shapes that do not match is
a plain ``False`` (an accuracy of 0), and when there are as many examples as classes the
shapes even agree. The labels side goes wrong the same way: one-hot labels
``(batch, classes)`` compared with the picked classes ``(batch,)`` broadcast (or give
``False``), and ``argmax`` of labels that are already class numbers gives one number.

Found after a cell that completed, from its source (``cell_reading``, parsed once per
source) and the shapes its names hold (never values). Told:

- ``argmax``, ``softmax`` or ``log_softmax`` over axis 0 (written, or ``tf.argmax``'s
  default) of a name holding a rank-2 ``(N, C)`` tensor or array with N != C, both above
  1, also scaled by a number (``tf.nn.softmax(logits / T, axis=0)``, a temperature);
- an ``argmax``, ``softmax`` or a reduction (``reduce_sum``, ``np.max``, ...) over axis 0
  of such an ``(N, C)`` value (also N == C) whose result is compared (``==``,
  ``tf.equal``) with a name holding ``(N,)`` values, the labels of those N examples;
- ``np.argmax(p)`` without an axis (a flat index) of a rank-2 value compared with ``(N,)``
  labels;
- ``argmax`` of a name holding a rank-1 value (labels that are class numbers) compared
  with something: the fix is the labels themselves;
- ``argmax`` over the last axis of an ``(N, C)`` value compared with a name holding an
  ``(N, C)`` value (one-hot labels): the fix takes their ``argmax`` too.

The comparison may go through names assigned in the cell (``preds = tf.argmax(p)`` then
``preds == y``) and conversions (``tf.cast``). Silent: argmax over ``axis=-1``/``1``, a
reduction over axis 0 not compared with labels (a per-feature mean), names bound again
later in the cell. The fix is the call with ``axis=-1`` in the learner's names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    unwrap,
    value_at,
)
from jupyterlab_tfcoach.monitor.syntax import int_literal

SECTION = "class-axis"
MAX_NOTES = 2
_REDUCTIONS = frozenset(
    {"reduce_sum", "reduce_max", "reduce_mean", "reduce_min", "sum", "max", "mean", "min"}
)
_FLAT = "flat"  # no axis: NumPy's (and keras.ops') argmax of the flattened array
_TENSORFLOW = frozenset({"tf", "tensorflow"})


@dataclass(frozen=True)
class Pick:
    """``tf.argmax(p, axis=0)``, ``p.argmax(1)``, ``tf.nn.softmax(z)``, as written."""

    call: ast.Call
    text: str
    kind: str  # "argmax", "softmax" or "reduction"
    operand: ast.expr
    operand_text: str
    module: str | None  # ``tf``, ``np``, ``tf.nn``; None for the array's own method
    axis: int | str  # an axis, or _FLAT
    axis_node: ast.expr | None
    line: int
    # The value whose shape the pick works over: ``z`` for ``softmax(z / T)``.
    held: ast.expr | None = None
    scale: ast.expr | None = None  # ``T``: a number the value is scaled by (shape kept)


def _scaled(node: ast.expr) -> tuple[ast.expr, ast.expr | None]:
    """``z`` and ``T`` for ``z / T``, ``z * 2.0``, ``T * z``: a value scaled by a number
    keeps its shape (a temperature); else the node itself."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult, ast.Sub, ast.Add)):
        for value, other in ((node.left, node.right), (node.right, node.left)):
            if value is node.right and isinstance(node.op, (ast.Div, ast.Sub)):
                continue  # only ``z / T`` and ``z - c``: the value on the left
            number = isinstance(other, ast.Constant) and type(other.value) in (int, float)
            if (number or isinstance(other, ast.Name)) and reference_path(
                unwrap(value)
            ) is not None:
                return value, None if number else other
    return node, None


def _pick(code: CellCode, node: ast.AST) -> Pick | None:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    name = call_name(node)
    kind = (
        "argmax"
        if name == "argmax"
        else (
            "softmax"
            if name in ("softmax", "log_softmax")
            else ("reduction" if name in _REDUCTIONS else None)
        )
    )
    if kind is None:
        return None
    owner = node.func.value
    operand: ast.expr
    positional: list[ast.expr]
    if _is_module(owner):  # tf.argmax(p, 1), np.argmax(p, axis=1), tf.nn.softmax(z)
        if not node.args:
            return None
        operand, module, positional = node.args[0], code.segment(owner), node.args[1:]
    elif kind == "argmax" and reference_path(owner) is not None:  # p.argmax(axis=1)
        operand, module, positional = owner, None, node.args
    else:
        return None
    held, scale = _scaled(operand) if kind == "softmax" else (operand, None)
    if reference_path(unwrap(held)) is None:
        return None
    axis_node: ast.expr | None = positional[0] if positional else None
    for keyword in node.keywords:
        if keyword.arg in ("axis", "dim"):
            axis_node = keyword.value
    axis: int | str
    if axis_node is not None:
        found = int_literal(axis_node)
        if found is None:
            return None
        axis = found
    elif kind == "softmax":
        axis = -1
    elif kind == "argmax" and module is not None and module.split(".")[0] in _TENSORFLOW:
        axis = 0  # tf.argmax / tf.math.argmax: axis=None means 0
    elif kind == "argmax":
        axis = _FLAT
    else:
        return None  # a reduction over everything is a number, not per example
    text, operand_text = code.segment(node), code.segment(operand)
    if text is None or operand_text is None:
        return None
    return Pick(
        node, text, kind, operand, operand_text, module, axis, axis_node, node.lineno, held, scale
    )


_MODULE_NAMES = frozenset({"tf", "np", "numpy", "tensorflow", "keras", "ops"})


def _is_module(owner: ast.AST) -> bool:
    """``tf``, ``np``, ``tf.nn``, ``keras.ops``: a module path, not a value."""
    path = reference_path(owner)
    return path is not None and path[0] in _MODULE_NAMES


def with_last_axis(code: CellCode, pick: Pick) -> str:
    """The call as written with its axis made ``-1`` (added when it was not given)."""
    call = pick.call
    if pick.axis_node is not None:
        axis_text = code.segment(pick.axis_node)
        start = _offset(call, pick.axis_node)
        if axis_text is not None and start is not None:
            return pick.text[:start] + "-1" + pick.text[start + len(axis_text) :]
    inner = pick.text[: pick.text.rstrip().rfind(")")].rstrip()
    separator = "" if inner.endswith("(") else ", "
    return f"{inner}{separator}axis=-1)"


def _offset(call: ast.Call, node: ast.AST) -> int | None:
    if getattr(node, "lineno", None) != call.lineno:
        return None
    return int(getattr(node, "col_offset", 0)) - call.col_offset


def _argmax_of(pick: Pick, labels: str) -> str:
    if pick.module is None:
        return f"{labels}.argmax(axis=-1)"
    return f"{pick.module}.argmax({labels}, axis=-1)"


def _rows(shape: tuple[int | None, ...]) -> tuple[int, int] | None:
    if len(shape) != 2 or shape[0] is None or shape[1] is None:
        return None
    if shape[0] < 2 or shape[1] < 2:
        return None
    return shape[0], shape[1]


def _over_first_axis(pick: Pick) -> bool:
    return pick.axis in (0, -2)


def class_axis_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    picks: dict[int, Pick] | None = code.memo.get("picks")
    if picks is None:
        picks = code.memo["picks"] = {}
        # Only a call can be a pick: the rest of the cell's nodes are not asked.
        for node in code.nodes:
            if not isinstance(node, ast.Call):
                continue
            found = _pick(code, node)
            if found is not None:
                picks[id(node)] = found
    if not picks:
        return []
    values: dict[int, Operand | None] = {}

    def value(pick: Pick) -> Operand | None:
        if id(pick.call) not in values:
            held = unwrap(pick.held or pick.operand)  # ``probs`` for ``probs.numpy()``
            if isinstance(pick.scale, ast.Name) and type(namespace.get(pick.scale.id)) not in (
                int,
                float,
            ):
                values[id(pick.call)] = None  # scaled by something not a number: shape unknown
                return None
            path = reference_path(held)
            held_text = code.segment(held)
            usable = path is not None and held_text is not None
            if usable and path is not None and not code.rebound_after(path, pick.line):
                values[id(pick.call)] = value_at(held, namespace, held_text or "")
            else:
                values[id(pick.call)] = None
        return values[id(pick.call)]

    texts: dict[int, str] = {}
    for _, left, right in code.comparisons():
        line = getattr(left, "lineno", 0)
        for mine, other in ((left, right), (right, left)):
            origin = code.origin(mine, line)
            pick = picks.get(id(origin))
            if pick is None or id(pick.call) in texts:
                continue
            text = _compared(code, pick, value(pick), other, namespace, picks, line, value)
            if text is not None:
                texts[id(pick.call)] = text
    for pick in picks.values():
        if id(pick.call) in texts or pick.kind == "reduction" or not _over_first_axis(pick):
            continue
        held = value(pick)
        rows = _rows(held.shape) if held is not None and held.shape is not None else None
        if held is None or rows is None or rows[0] == rows[1]:
            continue
        texts[id(pick.call)] = _per_class_text(code, pick, held, rows, None)
    return [reports.note(text, SECTION) for text in list(texts.values())[:MAX_NOTES]]


def _compared(
    code: CellCode,
    pick: Pick,
    held: Operand | None,
    other: ast.AST,
    namespace: dict[str, Any],
    picks: dict[int, Pick],
    line: int,
    values_of: Any,
) -> str | None:
    """The note for a pick compared with ``other``, when the comparison is wrong."""
    if held is None or held.shape is None:
        return None
    other_pick = picks.get(id(code.origin(other, line)))
    other_text = code.segment(other)
    other_value = None
    written = unwrap(other)  # ``hot`` as written, not what the cell assigned it from
    path = reference_path(written)
    if other_pick is None and path is not None and not code.rebound_after(path, line):
        written_text = code.segment(written)
        if written_text is not None:
            other_value = value_at(written, namespace, written_text)
    other_shape = other_value.shape if other_value is not None else None
    rows = _rows(held.shape)
    if len(held.shape) == 1 and pick.kind == "argmax" and pick.axis in (0, -1, _FLAT):
        # argmax of labels that are class numbers already, compared with one prediction
        # per example: one number against all of them.
        if held.shape[0] not in (None, 1) and held.shape[0] == _per_example(
            other_pick, other_shape, values_of
        ):
            return _sparse_labels_text(pick, held)
        return None
    if rows is None or other_text is None:
        return None
    if _over_first_axis(pick) and other_shape is not None and other_shape == (rows[0],):
        assert other_value is not None
        return _per_class_text(code, pick, held, rows, (other_text, other_value))
    if pick.axis == _FLAT and other_shape is not None and other_shape == (rows[0],):
        assert other_value is not None
        return _flat_text(code, pick, held, other_text, other_value)
    if (
        pick.kind == "argmax"
        and pick.axis in (-1, 1)
        and other_value is not None
        and other_shape == held.shape
    ):
        return _one_hot_text(pick, held, other_text, other_value)
    return None


def _per_example(other_pick: Pick | None, other_shape: Any, values_of: Any) -> int | None:
    """How many examples the other side of a comparison holds one value for: a vector's
    length, or the rows of a value an argmax over the last axis picks from."""
    if other_pick is not None:
        held = values_of(other_pick)
        rows = _rows(held.shape) if held is not None and held.shape is not None else None
        if rows is not None and other_pick.axis in (-1, 1):
            return rows[0]
        return None
    if other_shape is not None and len(other_shape) == 1:
        return other_shape[0]
    return None


def _per_class_text(
    code: CellCode,
    pick: Pick,
    held: Operand,
    rows: tuple[int, int],
    labels: tuple[str, Operand] | None,
) -> str:
    examples, classes = rows
    fixed = with_last_axis(code, pick)
    axis = "axis 0 (TensorFlow's default)" if pick.axis_node is None else "axis 0"
    if pick.kind == "softmax":
        gives = (
            f"each column sums to 1: the probabilities are spread over the {examples} "
            f"examples, not over the {classes} classes of each example"
        )
    else:
        gives = f"it gives one value per class ({classes} of them), not one per example"
    first = (
        f"`{pick.text}` (line {pick.line} of this cell) works over {axis} of "
        f"`{held.source}`, {held.description}: across its {examples} examples, "
        f"so {gives}."
    )
    if labels is not None:
        label_text, label_value = labels
        if examples == classes:
            second = (
                f" It is compared with `{label_text}`, {label_value.description}: with "
                f"{examples} examples and {classes} classes the shapes agree by chance, "
                "and the accuracy is a wrong number, without any error."
            )
        else:
            second = (
                f" Compared with `{label_text}`, {label_value.description}, TensorFlow's "
                "`==` gives a single False for shapes that do not match, and the accuracy "
                "is 0, without any error."
            )
    else:
        second = " Predictions or an accuracy computed from it are wrong, without any error."
    over = (
        "probabilities of each example are"
        if pick.kind == "softmax"
        else "class of each example is"
    )
    return f"{first}{second} The {over} over the last axis: `{fixed}`."


def _flat_text(code: CellCode, pick: Pick, held: Operand, labels: str, label_value: Operand) -> str:
    fixed = with_last_axis(code, pick)
    # ``pred = ops.argmax(p)``: the fix names the value the learner compares.
    statement = code.parents.get(id(pick.call))
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        fixed = f"{statement.targets[0].id} = {fixed}"
    return (
        f"`{pick.text}` (line {pick.line} of this cell) has no axis: it gives one index "
        f"into `{held.source}` ({held.description}) flattened, a single number, and "
        f"comparing it with `{labels}`, {label_value.description}, compares that one "
        "number with every label: the accuracy is a wrong number, without any error. The "
        f"class of each example is over the last axis: `{fixed}`."
    )


def _sparse_labels_text(pick: Pick, held: Operand) -> str:
    return (
        f"`{pick.text}` (line {pick.line} of this cell) takes the argmax of "
        f"`{held.source}`, {held.description}: labels that are already class "
        "numbers, one per example. Its argmax is a single number (where the largest label "
        "is), and comparing it with the predictions compares that one number with every "
        "prediction: the accuracy is a wrong number, without any error. Compare with the "
        f"labels themselves: `{pick.operand_text}` in place of `{pick.text}`."
    )


def _one_hot_text(pick: Pick, held: Operand, labels: str, label_value: Operand) -> str:
    shape = show_shape(held.shape or ())
    return (
        f"`{pick.text}` (line {pick.line} of this cell) picks one class per example, but it "
        f"is compared with `{labels}`, {label_value.description}: one-hot labels, a row "
        f"per example like `{held.source}`. A {shape} value against one class per "
        "example broadcasts (or, with TensorFlow's `==`, gives a single False), and the "
        "accuracy is a wrong number, without any error. Take the class of each label too: "
        f"`{_argmax_of(pick, labels)}` in place of `{labels}`."
    )
