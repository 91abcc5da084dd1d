"""Targets a model's output can never reach, in a custom training loop or a ``fit`` with the
learner's own loss.

The last layer's activation bounds what a model outputs: ``sigmoid``/``softmax`` in (0, 1),
``tanh`` in (-1, 1), ``relu`` from 0 up. Compared with targets that lie outside (prices
for a ``tanh`` head, labels of -1/1 for a sigmoid, standardized values for a relu), the
loss can never reach its minimum for those examples: the outputs pile up at the bound,
the gradients through the saturated activation vanish, and nothing raises.
``training/loss_agreement.py`` tells it for ``fit``/``evaluate`` with a Keras loss; this
module reads the places it cannot: a loss written by hand in a loop, a loss function of
the learner's own.

After a completed cell whose text holds ``(`` and one of ``gradient``, ``.fit(`` (a
substring test otherwise), the cell's top-level code (loops and ``with`` blocks included,
not ``def``/``class``) is read for the comparison of a model's output with targets: a call
(``loss_fn(y, pred)``, ``keras.losses.mse(pred, y)``) or a subtraction (``y - pred``)
between ``P`` (``M(x, ...)`` or a name the cell assigned ``M(...)``, ``M`` a Keras model)
and ``Y`` (a name, or a slice of one: its whole array is read); or ``M.fit(X, Y)`` for a
model compiled with a loss Keras does not know (``loss_identity`` None). ``M``'s last
layer and activation are read from what Keras stores (``loss_agreement._output_of``);
``Y`` (a NumPy array or an eager tensor of at most ``MAX_VALUES`` values) is sampled evenly
at ``MAX_SAMPLE`` values, only when it holds one value per output unit (its last axis is
the head's units; any shape for a one-unit head): class ids of shape (N,) or (N, 1) against
a softmax over K units are labels the learner's loss turns into one-hot or gathers, not
values the outputs must reach. When ``MIN_SHARE`` of the sample lies outside the activation's
range, the note names the comparison, the layer as written, the activation, the targets'
range and share. Fix: for targets of two values with a sigmoid or softmax head, the
targets as 0/1 (``(Y == high).astype("float32")``, ``tf.cast(Y == high, tf.float32)``);
otherwise the last layer as written with ``activation=None`` (a linear output).

Silent: targets within the range (0/1 for a sigmoid, [-1, 1] for tanh), a linear head, a
model Keras cannot describe (several outputs, an activation of the learner's own), a
``fit`` with a Keras loss (``loss_agreement``'s). Cost: a parse of a training cell (cached)
and, per comparison found, one strided sample of the targets (a NumPy view, or one copy of
an eager tensor) and two comparisons; no TensorFlow op, no model call.
"""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Mapping
from typing import Any, cast

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import contained_values, library_attribute, stored
from jupyterlab_tfcoach.monitor.symptoms.unknown_ids import top_level_nodes
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.loss_agreement import (
    OUTPUT_RANGES,
    RANGE_SECTION,
    _output_of,
    _segment,
    _with_keyword,
    _written_layer_node,
    loss_identity,
)

SECTION = RANGE_SECTION
MAX_CELL_CHARS = 50_000
MAX_VALUES = 10_000_000
MAX_SAMPLE = 1_000
MIN_SHARE = 0.05
_OPEN_ENDS = ("sigmoid", "softmax", "tanh", "softplus", "exponential")


def outside_reach(values: Any, activation: str) -> tuple[float, str]:
    """(share of ``values`` outside what ``activation`` can output, that range as text:
    open ends in parentheses)."""
    low, high, _reached = OUTPUT_RANGES[activation]
    outside = values < low
    if high != math.inf:
        outside = outside | (values > high)
    if activation in _OPEN_ENDS:
        reach = f"({low:g}, {high:g})" if high != math.inf else f"({low:g}, inf)"
    else:
        reach = f"[{low:g}, inf)" if high == math.inf else f"[{low:g}, {high:g}]"
    return float(outside.mean()), reach


def _is_model(value: Any) -> bool:
    try:
        kinds = {k.__name__ for k in type(value).__mro__}
    except Exception:
        return False
    return "Model" in kinds and "Layer" in kinds


def _sample(value: Any, units: int) -> Any | None:
    """At most ``MAX_SAMPLE`` of the values, evenly spaced, as a 1-D NumPy float array;
    None unless the targets hold one value per output unit (their last axis is ``units``,
    or they are one column for a one-unit head)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if type(value) is not numpy.ndarray:
        value = held_array(value, MAX_VALUES // 10, NUMBERS)
    if value is None or value.size == 0 or value.size > MAX_VALUES or value.dtype.kind not in "iuf":
        return None
    if units != 1 and (value.ndim < 2 or value.shape[-1] != units):
        # Targets that are not one value per output (class ids against a softmax over
        # ``units`` classes, read by the learner's loss through one_hot or a gather) are
        # labels in some other encoding: their range says nothing about the head's.
        return None
    flat = value.reshape(-1)
    return flat[:: max(1, flat.size // MAX_SAMPLE)][:MAX_SAMPLE].astype("float64")


def _target_name(node: ast.AST) -> str | None:
    """``y`` of ``y``, ``y[i:j]``, ``y[batch]``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _model_call(node: ast.AST, namespace: Mapping[str, Any]) -> str | None:
    """``M`` of ``M(x, ...)`` with ``M`` a Keras model."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.args
        and _is_model(namespace.get(node.func.id))
    ):
        return node.func.id
    return None


def _comparisons(
    tree: ast.Module, namespace: Mapping[str, Any]
) -> list[tuple[str, str, ast.AST, str]]:
    """(model name, target name, the comparing node, how: 'loop' or 'fit') in the cell."""
    statements = [
        s
        for s in tree.body
        if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    outputs: dict[str, str] = {}
    for statement in statements:
        for node in top_level_nodes(statement):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, model = node.targets[0], _model_call(node.value, namespace)
                if isinstance(target, ast.Name) and model is not None:
                    outputs[target.id] = model

    def output_model(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name) and node.id in outputs:
            return outputs[node.id]
        return _model_call(node, namespace)

    found: list[tuple[str, str, ast.AST, str]] = []
    for statement in statements:
        for node in top_level_nodes(statement):
            pair: tuple[ast.AST, ast.AST] | None = None
            if isinstance(node, ast.Call) and len(node.args) >= 2:
                function = node.func
                if (
                    isinstance(function, ast.Attribute)
                    and function.attr == "fit"
                    and isinstance(function.value, ast.Name)
                    and _is_model(namespace.get(function.value.id))
                ):
                    y = node.args[1] if len(node.args) > 1 else None
                    name = _target_name(y) if y is not None else None
                    if name is not None:
                        found.append((function.value.id, name, node, "fit"))
                    continue
                pair = (node.args[0], node.args[1])
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "fit" and isinstance(node.func.value, ast.Name):
                    y_node = next((k.value for k in node.keywords if k.arg == "y"), None)
                    name = _target_name(y_node) if y_node is not None else None
                    if name is not None and _is_model(namespace.get(node.func.value.id)):
                        found.append((node.func.value.id, name, node, "fit"))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
                pair = (node.left, node.right)
            if pair is None:
                continue
            for first, second in (pair, pair[::-1]):
                model = output_model(second)
                name = _target_name(first)
                if model is not None and name is not None and name not in outputs:
                    found.append((model, name, node, "loop"))
                    break
    return found


def _own_loss(model: Any) -> bool:
    """The model was compiled with a loss Keras does not know (the learner's function)."""
    compiled = stored(model, "_compile_loss")
    if compiled is None:
        return False
    flat = contained_values(stored(compiled, "_flat_losses"), sequences_only=True)
    if flat and len(flat) == 1:
        return loss_identity(library_attribute(flat[0], "loss")) is None
    user = stored(compiled, "_user_loss")
    return callable(user) and loss_identity(user) is None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "(" not in source:
        return []
    if "gradient" not in source and ".fit(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    told: set[tuple[str, str]] = set()
    for model_name, target, node, how in _comparisons(tree, namespace):
        if (model_name, target) in told:
            continue
        told.add((model_name, target))
        note = _note(model_name, target, node, how, source, namespace)
        if note is not None:
            return [note]
    return []


def _note(
    model_name: str,
    target: str,
    node: ast.AST,
    how: str,
    source: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    model = namespace.get(model_name)
    if how == "fit" and not _own_loss(model):
        return None  # a Keras loss: loss_agreement reads it with its labels
    output = _output_of(model)
    if output is None:
        return None
    last, index, units, activation = output
    if activation not in OUTPUT_RANGES:
        return None
    values = _sample(namespace.get(target), units)
    if values is None:
        return None
    share, reach = outside_reach(values, activation)
    if share < MIN_SHARE:
        return None
    segment = ast.get_source_segment(source, node) or ""
    place = f"`{segment}` (line {getattr(node, 'lineno', 1)})" if "\n" not in segment else ""
    if how == "fit":
        what = f"{place or f'`{model_name}.fit`'} trains `{model_name}` on `{target}`"
    else:
        what = f"{place or 'The loss'} compares `{model_name}`'s output with `{target}`"
    sources, _counts = user_code.cell_sources(namespace, source)
    written = _written_layer_node(sources, last, cast(Any, _Ending(units, activation)))
    layer_text = f"`{_segment(written[1], written[0])}`" if written else f"its last layer ({units})"
    where = f"`{model_name}.layers[{index}]`, " if index is not None else ""
    text = (
        f"{what}, but `{model_name}` ends with {where}{layer_text}: activation "
        f"{activation!r} only outputs values in {reach}, and `{target}` runs from "
        f"{values.min():g} to {values.max():g} ({share:.0%} of the values sampled lie "
        "outside). The model can never output those targets: its outputs pile up at the "
        "bound, the saturated activation passes almost no gradient, and the loss stays "
        "high for those examples whatever it learns. Nothing raises."
    )
    distinct = set(values.tolist())
    if activation in ("sigmoid", "softmax") and len(distinct) == 2:
        top = max(distinct)
        top_text = f"{top:g}"
        value = namespace.get(target)
        if type(value).__module__ == "numpy":
            fix = f'{target} = ({target} == {top_text}).astype("float32")'
        else:
            fix = f"{target} = tf.cast({target} == {top_text}, tf.float32)"
        text += (
            f" The targets are two classes: as labels for a {activation} they must be 0 and "
            f"1 (1 for {top_text}). Make them so, then train again: `{fix}`."
        )
        return reports.note(text, SECTION)
    if written:
        fixed = _with_keyword(written[0], written[1], "activation", 1, "None")
        text += (
            " A model that predicts such numbers needs a linear output (or targets rescaled "
            f"into the range): build `{model_name}` with `{fixed}` as its last layer, then "
            "train it again."
        )
    else:
        text += (
            " A model that predicts such numbers needs a linear output: give its last layer "
            "activation=None (or rescale the targets into the range), then train again."
        )
    return reports.note(text, SECTION)


class _Ending:
    """What ``_written_layer_node`` reads of a setup: the last layer's units and
    activation."""

    def __init__(self, units: int | None, activation: str) -> None:
        self.units = units
        self.activation = activation
