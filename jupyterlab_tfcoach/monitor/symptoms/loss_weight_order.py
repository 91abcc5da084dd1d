"""``loss_weights`` given as a list to a model whose outputs are named, in another order
than the one Keras pairs the list with.

Keras pairs a list of loss weights with the outputs in ``model.output_names`` order. For
outputs given as a dict (``keras.Model(x, {"b": ..., "a": ...})``) that order is the
names sorted, not the order the learner wrote them in; when the ``loss`` dict of the same
compile call (else the model's own outputs dict) lists the outputs in another order, a
list of different weights gives each output the weight the learner wrote for another one.
Training runs and nothing warns; the weighting is the reverse of the intent.

After a completed cell whose text holds ``loss_weights`` (one substring test otherwise):
each ``<model>.compile(..., loss_weights=[numbers])`` of the cell's code outside ``def``/
``class``, ``<model>`` a name holding a Keras model after the cell with at least two
``output_names``, the list as long as the outputs and not all equal, and the order written
(the ``loss`` dict literal's keys, else the keys of the dict the outputs were given as)
another than ``output_names``. The note names each output's weight as Keras applies it and
as written; the fix keys the weights by name, in the order written.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import stored
from jupyterlab_tfcoach.monitor.syntax import (
    number_literal,
    outside_scopes,
    parsed_source,
    source_segment,
)

SECTION = "functional-api"
MAX_OUTPUTS = 12


def _names(value: Any) -> list[str] | None:
    try:
        names = list(value)[: MAX_OUTPUTS + 1]
    except Exception:
        return None
    if not 2 <= len(names) <= MAX_OUTPUTS or not all(type(n) is str for n in names):
        return None
    return names


def _is_keras_model(value: Any) -> bool:
    return any(
        cls.__name__ == "Model" and str(getattr(cls, "__module__", "")).startswith("keras")
        for cls in type(value).__mro__
    )


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _written_order(call: ast.Call, model: Any, applied: list[str]) -> tuple[list[str], str] | None:
    """The outputs in the order the learner wrote them, and where that order is read."""
    losses = _keyword(call, "loss")
    if len(call.args) > 1 and losses is None:
        losses = call.args[1]
    if isinstance(losses, ast.Dict):
        keys = [k.value for k in losses.keys if isinstance(k, ast.Constant)]
        if sorted(keys) == sorted(applied) and len(keys) == len(losses.keys):
            return keys, "the `loss` dict of this compile call"  # type: ignore[return-value]
        return None
    structure = stored(model, "_outputs_struct")
    if type(structure) is dict:
        keys = _names(structure)
        if keys is not None and sorted(keys) == sorted(applied):
            return keys, "the dict the model's outputs were given as"
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "loss_weights" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in outside_scopes(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
            and isinstance(node.func.value, ast.Name)
        ):
            continue
        weights = _keyword(node, "loss_weights")
        if not isinstance(weights, ast.List | ast.Tuple):
            continue
        values = [number_literal(item) for item in weights.elts]
        if any(v is None for v in values) or len(set(values)) < 2:
            continue
        model = namespace.get(node.func.value.id)
        if not _is_keras_model(model):
            continue
        applied = _names(stored(model, "output_names"))
        if applied is None or len(applied) != len(values):
            continue
        written = _written_order(node, model, applied)
        if written is None or written[0] == applied:
            continue
        shown = [
            source_segment(source, item) or str(v)
            for item, v in zip(weights.elts, values, strict=True)
        ]
        return [_note(node.func.value.id, weights, shown, applied, written, source)]
    return []


def _note(
    model: str,
    weights: ast.expr,
    shown: list[str],
    applied: list[str],
    written: tuple[list[str], str],
    source: str,
) -> Note:
    order, where = written
    given = source_segment(source, weights) or ""
    as_applied = ", ".join(
        f'"{name}" {weight}' for name, weight in zip(applied, shown, strict=True)
    )
    as_written = ", ".join(f'"{name}" {weight}' for name, weight in zip(order, shown, strict=True))
    keyed = (
        "{"
        + ", ".join(f'"{name}": {weight}' for name, weight in zip(order, shown, strict=True))
        + "}"
    )
    text = (
        f"`loss_weights={given}` (line {weights.lineno} of this cell) is a list, and Keras "
        f"pairs a list with `{model}`'s outputs in `{model}.output_names` order, "
        f"{', '.join(applied)}: it weighs {as_applied}. {where[0].upper() + where[1:]} "
        f"lists the outputs as {', '.join(order)}; read in that order, the weights meant "
        f"{as_written}. Training runs with the other weighting and nothing warns. A dict "
        "keyed by output name says which weight is whose. Fix, for the weights in the "
        f"order written: `loss_weights={keyed}`."
    )
    return reports.note(text, SECTION)
