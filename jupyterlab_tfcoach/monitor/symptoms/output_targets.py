"""Targets of a multi-output model given in another order than its outputs.

``multi.fit(x, [y_spend, y_churn])`` for a model whose outputs are ``[churn_prob,
spend]`` matches the lists by position: the sigmoid churn head is trained with binary
cross-entropy on spend amounts, and the spend head regresses the 0/1 flags. Nothing
raises (the shapes agree); both tasks learn the wrong thing.

Found after a cell that completed (a cell without ``.fit(`` or ``.evaluate(`` costs two
substring tests), from each ``M.fit(X, [Y1, Y2, ...])`` / ``M.evaluate(...)`` (also
``y=``) whose targets are a list or tuple of names: ``M`` a functional Keras model with
as many outputs. What each output can take is read from what Keras stores: its last
layer's activation (``sigmoid``: a value in [0, 1]; ``softmax`` with ``k`` units and a
sparse loss: an integer in [0, k)) and the compiled loss for it (``model.loss``, a dict
by output name or a list: binary cross-entropy wants [0, 1]); an output of neither kind
takes any number. Each target's smallest and largest value (arrays or eager tensors of
at most a million values) are compared: when a target is outside what its output takes
and another order of the same targets fits every output, the note names both, the
outputs and the fix: the list in the outputs' order, or a dict by output name.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import contained_values, instance_dict, stored
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.loss_agreement import (
    EXPECTS,
    activation_name,
    loss_identity,
)

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 1_000_000
MAX_OUTPUTS = 6


def output_names(model: Any, namespace: Mapping[str, Any]) -> list[str | None]:
    """The learner's name for each output tensor of a functional model (``cls_out``)."""
    outputs = contained_values(stored(model, "_outputs"), sequences_only=True) or []
    return [name_bound_to(id(o), namespace) for o in outputs[:MAX_OUTPUTS]]


def _outputs(model: Any) -> list[tuple[str, str | None, int | None]] | None:
    """(name, activation, units) of each output layer of a functional model."""
    names = {k.__name__ for k in type(model).__mro__}
    if "Functional" not in names:
        return None
    outputs = contained_values(stored(model, "_outputs"), sequences_only=True) or []
    found: list[tuple[str, str | None, int | None]] = []
    for output in outputs[:MAX_OUTPUTS]:
        history = stored(output, "_keras_history")
        layer = history[0] if type(history) is tuple or hasattr(history, "_fields") else None
        attributes = instance_dict(layer) or {}
        name = attributes.get("name")
        if type(name) is not str:
            return None
        kinds = {k.__name__ for k in type(layer).__mro__}
        activation = "softmax" if "Softmax" in kinds else None
        activation = activation or activation_name(attributes.get("activation"))
        units = attributes.get("units")
        found.append((name, activation, units if type(units) is int else None))
    return found if len(found) == len(outputs) else None


def _plain_dict(value: Any) -> dict[str, Any] | None:
    """A dict as compile kept it: itself, or the dict TensorFlow's tracking wraps."""
    if type(value) is dict:
        return value
    try:
        wrapped = object.__getattribute__(value, "__wrapped__")
    except Exception:
        return None
    return wrapped if type(wrapped) is dict else None


def _losses(model: Any, names: list[str]) -> list[str | None]:
    """The Keras loss name compiled for each output (None when unknown)."""
    loss = stored(model, "loss")
    mapping = _plain_dict(loss)
    sequence = contained_values(loss, sequences_only=True) if mapping is None else None
    if mapping is not None:
        given = [mapping.get(n) for n in names]
    elif sequence is not None:
        given = sequence if len(sequence) == len(names) else [None] * len(names)
    else:
        given = [loss] * len(names)
    found: list[str | None] = []
    for item in given:
        identity = loss_identity(item) if item is not None else None
        found.append(identity[0] if identity is not None else None)
    return found


def _accepts(activation: str | None, units: int | None, loss: str | None, values: Any) -> bool:
    """Whether an output of this kind can be trained on ``values`` (a NumPy array)."""
    low, high = float(values.min()), float(values.max())
    kind = EXPECTS[loss].kind if loss in EXPECTS else None
    if activation == "sigmoid" or kind == "binary":
        return 0.0 <= low and high <= 1.0
    if kind == "sparse" and units is not None:
        whole = bool((values == values.round()).all())
        return whole and low >= 0 and high < units
    return True


def _targets(call: ast.Call) -> ast.List | ast.Tuple | None:
    given = call.args[1] if len(call.args) >= 2 else None
    for keyword in call.keywords:
        if keyword.arg == "y":
            given = keyword.value
    return given if isinstance(given, ast.List | ast.Tuple) else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (".fit(" not in source and ".evaluate(" not in source) or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("fit", "evaluate")
            and isinstance(node.func.value, ast.Name)
        ):
            continue
        given = _targets(node)
        if given is None or not 2 <= len(given.elts) <= MAX_OUTPUTS:
            continue
        if not all(isinstance(e, ast.Name) for e in given.elts):
            continue
        model_name = node.func.value.id
        model = namespace.get(model_name)
        outputs = _outputs(model)
        if outputs is None or len(outputs) != len(given.elts):
            continue
        losses = _losses(model, [o[0] for o in outputs])
        values = [
            held_array(namespace.get(e.id), MAX_VALUES, NUMBERS)  # type: ignore[attr-defined]
            for e in given.elts
        ]
        if any(v is None or v.size == 0 for v in values):
            continue
        heads = [(o[1], o[2], loss) for o, loss in zip(outputs, losses, strict=True)]
        fits = [_accepts(*head, v) for head, v in zip(heads, values, strict=True)]
        if all(fits):
            continue
        for order in itertools.permutations(range(len(values))):
            if list(order) == list(range(len(values))):
                continue
            if all(_accepts(*heads[i], values[j]) for i, j in enumerate(order)):
                named = output_names(model, namespace)
                labels = [
                    f"`{o[0]}` (`{n}`)" if n is not None and n != o[0] else f"`{o[0]}`"
                    for o, n in zip(outputs, named, strict=False)
                ]
                if len(labels) != len(outputs):
                    labels = [f"`{o[0]}`" for o in outputs]
                text = _text(
                    node, given, order, outputs, labels, heads, fits, model_name, source, values
                )
                if text is not None:
                    return [reports.note(text, SECTION)]
                break
    return []


def _kind(head: tuple[str | None, int | None, str | None]) -> str:
    activation, units, loss = head
    if activation == "sigmoid":
        return "a sigmoid probability"
    if loss in EXPECTS and EXPECTS[loss].kind == "binary":
        return "a binary cross-entropy output"
    if loss in EXPECTS and EXPECTS[loss].kind == "sparse":
        return f"a class among {units}"
    return "a number"


def _text(
    call: ast.Call,
    given: ast.List | ast.Tuple,
    order: tuple[int, ...],
    outputs: list[tuple[str, str | None, int | None]],
    labels: list[str],
    heads: list[tuple[str | None, int | None, str | None]],
    fits: list[bool],
    model: str,
    source: str,
    values: list[Any],
) -> str | None:
    names = [e.id for e in given.elts]  # type: ignore[attr-defined]
    written = ast.get_source_segment(source, given)
    if written is None:
        return None
    wrong = next(i for i, ok in enumerate(fits) if not ok)
    right = order[wrong]
    low, high = float(values[wrong].min()), float(values[wrong].max())
    effect = (
        "Each head is trained toward another task's targets"
        if call.func.attr == "fit"  # type: ignore[attr-defined]
        else "Each head is scored against another task's targets"
    )
    listed = ", ".join(labels)
    open_, close = ("[", "]") if isinstance(given, ast.List) else ("(", ")")
    reordered = open_ + ", ".join(names[j] for j in order) + close
    by_name = "{" + ", ".join(f'"{o[0]}": {names[j]}' for o, j in zip(outputs, order, strict=True))
    by_name += "}"
    return (
        f"`{model}.{call.func.attr}(..., {written})` (line {call.lineno}) matches the targets "  # type: ignore[attr-defined]
        f"to `{model}`'s outputs by position, and its outputs are {listed} in that order: "
        f"`{names[wrong]}` goes to {labels[wrong]}, {_kind(heads[wrong])}, but its "
        f"values run from {low:.4g} to {high:.4g}, which that output cannot take, while "
        f"`{names[right]}` fits it. {effect}, and nothing raises. Give the targets in "
        f"the outputs' order, `{reordered}` (the same for validation data), or by output "
        f"name: `{by_name}`."
    )
