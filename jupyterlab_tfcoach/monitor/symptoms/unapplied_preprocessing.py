"""A preprocessing layer adapted for a model input, then left out of the model.

``sqft_norm.adapt(train["sqft"])`` learns the statistics of one feature; building the
model with ``inputs["sqft"]`` passed on as it is (into a ``Concatenate`` or a ``Dense``)
leaves the layer unused: the raw feature (values in the thousands beside others near 1)
reaches the first layer unscaled, training is slow or unstable, and nothing raises.

After a cell that completed and builds a functional model (a cell without ``Input(`` or
``Model(`` costs two substring tests), each name of the namespace holding an adapting
Keras layer (``Normalization``, ``Discretization``, ``TextVectorization``,
``StringLookup``, ``IntegerLookup``) is read: the layer was never called (its stored
``_inbound_nodes`` is empty), an earlier cell or this one ran ``<name>.adapt(`` (the
history ``In``, last 100 cells), and the name's stem (``sqft`` for ``sqft_norm``,
``age`` for ``age_normalizer``) is the key of a subscript in the cell (``inputs["sqft"]``)
or a name (``sqft``, ``sqft_input``) that the cell passes to a call without wrapping it
in a layer of that kind. The note names the layer and the raw input; fix: the input
wrapped in the layer, ``sqft_norm(inputs["sqft"])``, in place of ``inputs["sqft"]``.

Reads names, type names and one stored list; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.preprocessing_use import adapting_layer

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
MAX_HISTORY_CELLS = 100
MAX_NAMESPACE = 20_000
# Words of a preprocessing layer's name that say what it does, not which input it is for.
_ROLE_WORDS = frozenset(
    {
        "norm",
        "normalizer",
        "normaliser",
        "normalization",
        "normalisation",
        "scaler",
        "layer",
        "lookup",
        "vectorizer",
        "vectorize",
        "vectoriser",
        "encoder",
        "disc",
        "discretizer",
        "bins",
        "bucket",
        "bucketizer",
        "index",
        "indexer",
    }
)
_INPUT_SUFFIXES = ("", "_input", "_in", "_inp")


def _stem(name: str) -> str | None:
    parts = [p for p in name.split("_") if p]
    kept = [p for p in parts if p.lower() not in _ROLE_WORDS]
    if not kept or len(kept) == len(parts):
        return None
    return "_".join(kept)


def _adapted_before(name: str, namespace: Mapping[str, Any], source: str) -> bool:
    marker = f"{name}.adapt("
    if marker in source:
        return True
    history = namespace.get("In")
    if type(history) is not list:
        return False
    return any(type(s) is str and marker in s for s in history[-MAX_HISTORY_CELLS:])


def _never_called(layer: Any) -> bool:
    nodes = (instance_dict(layer) or {}).get("_inbound_nodes")
    try:
        return nodes is not None and len(nodes) == 0
    except Exception:
        return False


def _raw_use(tree: ast.Module, stem: str) -> ast.expr | None:
    """The first ``x["stem"]`` or ``stem``/``stem_input`` the cell passes to a call (as
    an argument or an item of a list argument), outside a call of a name: a layer."""
    wanted = {stem + suffix for suffix in _INPUT_SUFFIXES}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        arguments: list[ast.expr] = []
        for argument in node.args:
            if isinstance(argument, ast.List | ast.Tuple):
                arguments.extend(argument.elts)
            else:
                arguments.append(argument)
        for argument in arguments:
            if (
                isinstance(argument, ast.Subscript)
                and isinstance(argument.slice, ast.Constant)
                and argument.slice.value == stem
            ):
                return argument
            if isinstance(argument, ast.Name) and argument.id in wanted:
                return argument
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for an adapted layer the model this cell builds leaves out, if any."""
    if len(source) > MAX_CELL_CHARS or ("Input(" not in source and "Model(" not in source):
        return []
    tree = parsed_source(source)
    if tree is None or len(namespace) > MAX_NAMESPACE:
        return []
    for name, value in list(namespace.items()):
        if name.startswith("_") or adapting_layer(value) is None:
            continue
        stem = _stem(name)
        if stem is None or not _never_called(value):
            continue
        if not _adapted_before(name, namespace, source):
            continue
        raw = _raw_use(tree, stem)
        if raw is None:
            continue
        written = ast.get_source_segment(source, raw)
        if written is None or "\n" in written:
            continue
        fix = f"{name}({written})"
        text = (
            f"`{name}` was adapted, and its name says it is for `{stem}`, but the model "
            f"this cell builds never applies it: `{written}` (line {raw.lineno}) goes in "
            f"raw, unscaled or uncoded, and `{name}` is never called. The first layers "
            "then get that feature on its own scale beside the preprocessed ones, which "
            "slows or destabilises training. "
            f"Nothing raises. Apply the layer, in place of `{written}`: `{fix}`."
        )
        return [reports.note(text, SECTION)]
    return []
