"""Whether a model was trained on arrays an adapting layer produced outside the model.

``ids = vectorizer(texts).numpy()`` then ``clf.fit(ids, y)`` trains ``clf`` on the token
ids ``vectorizer`` gave: no fit hook sees the layer (it is neither among the model's
layers nor in its dataset's ``map``), yet adapting it again afterwards changes the ids the
trained embedding reads, as much as for a layer inside the model
(``symptoms/adapt_leaks.py`` tells both).

Read from the notebook's history (``In``, the last ``MAX_HISTORY_CELLS`` cells before the
one that adapts, and that cell up to the adapt): a top-level ``N = ...L(...)...`` that
calls the layer ``L`` by its name (or builds from such a name, as a dataset of it), then
a later ``M.fit(...)`` given ``N`` (in its first argument or ``x=``) with ``M`` a name
that still holds a Keras model, and an ``L.adapt(D)`` before that fit with other data
than this adapt's (re-adapting on the same data changes nothing). Source text only;
nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.preprocessing_use import LayerUse

MAX_HISTORY_CELLS = 100
MAX_CELL_CHARS = 50_000


@dataclass
class Produced:
    """What a fit trained on that the layer made: the use, the data's name, the cells."""

    use: LayerUse
    data: str  # the name holding the layer's output that fit was given
    made: str  # the statement that made it
    adapted: str  # the data the earlier adapt was given, as written


def _is_model(value: Any) -> bool:
    try:
        return any(
            k.__name__ == "Model" and k.__module__.startswith("keras") for k in type(value).__mro__
        )
    except Exception:
        return False


def _calls_layer(node: ast.AST, layer: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == layer
        for n in ast.walk(node)
    )


def _made_name(node: ast.AST, made: dict[str, str]) -> str | None:
    """A name of ``made`` the expression reads (``ids``, ``ids[:, None]``, ``(ids, y)``)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in made:
            return inner.id
    return None


def produced_use(
    layer_name: str,
    layer: Any,
    adapt: ast.Call,
    source: str,
    namespace: Mapping[str, Any],
) -> Produced | None:
    """The fit of an earlier cell (or of this one, before ``adapt``) that trained a model
    on ``layer_name``'s output, made after an adapt on other data."""
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:-1] if type(history) is list else []
    current = ast.get_source_segment(source, adapt.args[0]) if adapt.args else None
    cells: list[tuple[str, int]] = [(s, 10**9) for s in earlier if type(s) is str]
    cells.append((source, adapt.lineno))
    adapted: str | None = None  # the data of the latest earlier adapt
    made: dict[str, str] = {}  # names the layer's output was assigned to
    found: Produced | None = None
    marker = f"{layer_name}("
    for text, before in cells:
        if len(text) > MAX_CELL_CHARS or (marker not in text and ".fit(" not in text):
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        for statement in tree.body:
            if statement.lineno >= before:
                break
            for node in ast.walk(statement):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                ):
                    owner, method = node.func.value.id, node.func.attr
                    if owner == layer_name and method == "adapt" and node.args:
                        adapted = ast.get_source_segment(text, node.args[0])
                    elif method == "fit" and adapted is not None and adapted != current:
                        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "x")]
                        for argument in given:
                            name = _made_name(argument, made)
                            model = namespace.get(owner)
                            if name is not None and _is_model(model):
                                use = LayerUse(
                                    weakref.ref(layer), weakref.ref(model), 0, False, None
                                )
                                found = Produced(use, name, made[name], adapted)
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and (
                    _calls_layer(statement.value, layer_name)
                    or _made_name(statement.value, made) is not None
                )
            ):
                # The layer's output, or data built from it (a dataset of the ids).
                source_name = _made_name(statement.value, made)
                written = ast.get_source_segment(text, statement)
                if source_name is not None:
                    made[statement.targets[0].id] = made[source_name]
                elif written is not None:
                    made[statement.targets[0].id] = written.splitlines()[0]
    return found
