"""Token ids given to a layer built on embedded vectors: the embedding lookup skipped.

``block(x_train[:4])``, where ``x_train`` holds integer token ids (batch, steps) and
``block`` (a Transformer block, an LSTM...) was built on (batch, steps, D) float vectors,
fails deep inside the layer on a rank or size check. The error's own words suggest a
missing features axis, but ``x_train[:4][..., None]`` gives (4, 20, 1) ids, still not D
floats per step: the advice would lead back to an error. The cause is the Embedding the
ids never went through, and the notebook usually has it: a Keras layer in the namespace
that is an ``Embedding`` of D outputs, or holds one (a token-and-position embedding).

Recognised by reading (one family of the catalogue, tried early; the missing-axis
explainer leaves such an error to it), for any error TensorFlow or Keras raised from a
call in the running cell's line: the layer called there was built on an input of rank 3
whose last axis is D (Keras keeps the shapes ``build`` got, ``_build_shapes_dict``), and
the argument is an integer array or tensor of rank 2 (a name, or a slice of one along its
first axis). The entry names the layer, its built shape, the ids, and the embedding
layer of D outputs whose table holds every id; the fix calls it on the ids in the
learner's line. Read-only: stored attributes and shapes only, one pass over the
namespace's Keras layers, bounded.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    class_mro,
    code,
    instance_attribute,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

SECTION = "functional-api"
_MAX_NAMESPACE = 5000
_MAX_ATTRIBUTES = 200
_MAX_CANDIDATES = 3
# Ids are read for their largest value (a copy of a tensor's values) up to this many.
MAX_IDS = 1_000_000


def _is_embedding(value: Any) -> bool:
    cls = loaded_class("keras.src.layers.core.embedding", "Embedding")
    return cls is not None and cls in class_mro(value)


def _stored_int(value: Any, name: str) -> int | None:
    found, held = instance_attribute(value, name)
    return held if found and type(held) is int else None


def _built_shape(layer: Any) -> tuple[int | None, ...] | None:
    """The first input shape Keras built ``layer`` on (``query_shape``, ``input_shape``)."""
    found, shapes = instance_attribute(layer, "_build_shapes_dict")
    # Keras keeps it in its own dict subclass (tracked): read through ``dict`` itself.
    if not found or not issubclass(type(shapes), dict) or not dict.__len__(shapes):
        return None
    shape = next(iter(dict.values(shapes)))
    if type(shape) is not tuple or not all(d is None or type(d) is int for d in shape):
        return None
    return shape


def _embeddings_in(layer: Any) -> list[Any]:
    """``layer`` itself when it is an Embedding, else the Embeddings it holds directly."""
    if _is_embedding(layer):
        return [layer]
    held = instance_dict(layer) or {}
    return [value for value in list(held.values())[:_MAX_ATTRIBUTES] if _is_embedding(value)]


def _lookup_layers(
    context: ErrorContext, size: int, largest_id: int, called: Any
) -> list[tuple[str, Any]]:
    """Names of Keras layers in the namespace that turn ids into ``size`` features and
    whose tables hold ``largest_id``: an Embedding, or a layer holding Embeddings."""
    found: list[tuple[str, Any]] = []
    for count, (name, value) in enumerate(list(context.namespace.items())):
        if count > _MAX_NAMESPACE or len(found) >= _MAX_CANDIDATES:
            break
        if type(name) is not str or name.startswith("_") or value is called:
            continue
        if value_kind(value) != "layer":
            continue
        tables = _embeddings_in(value)
        if not tables or any(_stored_int(table, "output_dim") != size for table in tables):
            continue
        rows = [_stored_int(table, "input_dim") or 0 for table in tables]
        if largest_id < max(rows):
            found.append((name, value))
    return found


def _ids(argument: ast.expr, frame: CellFrame, context: ErrorContext) -> tuple[Any, str] | None:
    """The integer array or tensor of rank 2 the argument is (a name, or a slice of one
    along its first axis, which keeps the rank), and its description."""
    node = argument
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    found, value = context.lookup(node.id, frame if frame.local_names is not None else None)
    if not found or value_kind(value) not in ("array", "tensor"):
        return None
    described = describe(node.id, value)
    if described is None or described.shape is None or len(described.shape) != 2:
        return None
    if not (described.dtype or "").startswith(("int", "uint")):
        return None
    return value, described.description


def largest_value(value: Any) -> int | None:
    """The largest id of an integer array or tensor of at most ``MAX_IDS`` values (NumPy's
    max; a tensor's values copied by its ``numpy``, its size read first); None otherwise."""
    try:
        array = held_array(value, MAX_IDS, INTEGERS)
        return int(array.max()) if array is not None else None
    except Exception:
        return None


def skipped_embedding(context: ErrorContext) -> tuple[str, str] | None:
    """(the rule, the fix) when token ids went to a layer built on embedded vectors."""
    frames = context.frames()
    if len(frames) < 2 or context.namespace is None:
        return None  # raised in the running cell itself: no layer's code ran
    outer = frames[-1]
    statement = outer.statement()
    if statement is None:
        return None
    for part in outer.header():
        for call in ast.walk(part):
            if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
                continue
            found = _explained(call, statement, outer, context)
            if found is not None:
                return found
    return None


def _explained(
    call: ast.Call, statement: ast.stmt, frame: CellFrame, context: ErrorContext
) -> tuple[str, str] | None:
    """(the rule, the fix) for one call of the running cell's line."""
    if not isinstance(call.func, ast.Name):
        return None
    found, layer = context.lookup(call.func.id, None)
    if not found or value_kind(layer) not in ("layer", "model") or _is_embedding(layer):
        return None
    built = _built_shape(layer)
    if built is None or len(built) != 3 or not built[-1]:
        return None
    argument = call.args[0]
    ids = _ids(argument, frame, context)
    if ids is None:
        return None
    value, description = ids
    largest = largest_value(value)
    size = built[-1]
    if largest is None or largest < 0:
        return None
    tables = _lookup_layers(context, size, largest, layer)
    if not tables:
        return None
    lookup = tables[0][0]
    source = frame.segment(argument) or ""
    layer_name = call.func.id
    fixed = rewrite(frame, statement, argument, f"{lookup}({source})")
    if not source or not fixed or "\n" in fixed:
        return None
    root = argument.value if isinstance(argument, ast.Subscript) else argument
    root_name = frame.segment(root) or source
    others = ", ".join(code(name) for name, _ in tables[1:])
    also = f" ({others} would too)" if others else ""
    rule = (
        f"{code(layer_name)} was built on inputs of shape {show_shape(built)}: {size} "
        f"features per step, the vectors an embedding gives each token. {code(root_name)} is "
        f"{description} of token ids, one integer per step (the largest {largest}), so the "
        f"ids never went through the embedding lookup. Adding an axis "
        f"({code(source + '[..., None]')}) would give one id per step, still not {size} "
        f"features: the missing step is the lookup. {code(lookup)} turns each id into "
        f"{size} features{also}"
    )
    return rule, code(fixed)


def _read_skipped_embedding(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error, line  # any error from the layer: the running cell's line is read
    found = skipped_embedding(context)
    return Finding(found[0] + ".", found[1]) if found is not None else None


SKIPPED_EMBEDDING = ErrorFamily(
    "token ids given to a layer built on embedded vectors",
    messages=(),
    read=_read_skipped_embedding,
    section=SECTION,
)
