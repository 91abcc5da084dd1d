"""A per-example operation over axis 0 inside a Keras layer's or model's ``call``.

Keras calls ``call`` with a batch: axis 0 counts the batch's examples. An
``l2_normalize(e, axis=0)``, ``softmax(z, axis=0)`` or TensorFlow's ``argmax(z)`` (axis 0
by default) there works across the examples instead of within each one: no embedding
comes out with length 1, a softmax spreads one unit of probability over the batch, and
every example's output depends on the others in its batch and on the batch size.
Training and prediction run; nothing raises.

After a completed cell holding ``def call`` and one of the operations' names (substring
tests otherwise), each class of the cell whose bases end in ``Model`` or ``Layer``
(``keras.Model``, ``layers.Layer``), or whose class object in the namespace has a Keras
``Layer`` in its method resolution order, is read (``ast``, never run): in its ``call``
(not in nested functions), a call of ``l2_normalize``, ``normalize``, ``softmax``,
``log_softmax``, ``argmax`` or ``argmin`` whose axis is the constant 0 (or left out for
TensorFlow's ``argmax``/``argmin``, as ``compiled_axis.py`` reads it). The note names the
class, the call and the line; the fix is the call over the last axis.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.compiled_axis import (
    PER_EXAMPLE,
    _axis,
    _fixed,
    over_examples,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "class-axis"
MAX_CELL_CHARS = 50_000
# ``compiled_axis.py``'s operations, and ``normalize`` (``tf.linalg.normalize``,
# ``keras.utils.normalize``), which a layer's call uses to make unit vectors.
_OPERATIONS = PER_EXAMPLE | {"normalize"}
_EFFECTS = {
    "l2_normalize": "each feature is scaled to length 1 over the batch, so no example's "
    "vector has length 1",
    "normalize": "each feature is scaled to length 1 over the batch, so no example's "
    "vector has length 1",
    "softmax": "one unit of probability is spread over the batch's examples, so no "
    "example's outputs sum to 1",
    "log_softmax": "one unit of probability is spread over the batch's examples, so no "
    "example's outputs sum to 1",
    "argmax": "it picks, for each feature, the example that scores highest, not each "
    "example's highest feature",
    "argmin": "it picks, for each feature, the example that scores lowest, not each "
    "example's lowest feature",
}


def _base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Name):
            names.append(base.id)
    return names


def _keras_layer(node: ast.ClassDef, namespace: Mapping[str, Any]) -> bool:
    if any(name.endswith(("Model", "Layer")) for name in _base_names(node)):
        return True
    value = namespace.get(node.name)
    if not isinstance(value, type):
        return False
    try:
        bases = value.__mro__
    except Exception:
        return False
    return any(
        base.__name__ == "Layer" and base.__module__.startswith(("keras", "tf_keras"))
        for base in bases
    )


def _calls_in(function: ast.FunctionDef) -> list[ast.Call]:
    found: list[ast.Call] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and over_examples(node, _OPERATIONS):
            found.append(node)
    return sorted(found, key=lambda call: (call.lineno, call.col_offset))


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for an operation over the batch axis in a layer's ``call``, if any."""
    if len(source) > MAX_CELL_CHARS or "def call" not in source:
        return []
    if not any(name in source for name in _OPERATIONS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or not _keras_layer(node, namespace):
            continue
        for item in node.body:
            if not (isinstance(item, ast.FunctionDef) and item.name == "call"):
                continue
            for call in _calls_in(item):
                note = _note(source, node.name, call)
                if note is not None:
                    return [note]
    return []


def _note(source: str, owner: str, call: ast.Call) -> Note | None:
    text = ast.get_source_segment(source, call)
    if not text or "\n" in text:
        return None
    name = call_name(call) or "l2_normalize"
    axis = "over axis 0" if _axis(call) is not None else "over axis 0 (TensorFlow's default)"
    message = (
        f"`{text}` (line {call.lineno} of this cell, in `{owner}.call`) works {axis}, and "
        "Keras calls `call` with a batch, whose axis 0 counts the examples: "
        f"{_EFFECTS[name]}, and each example's output depends on the others in its batch "
        "and on the batch size. It trains and predicts; nothing raises. Within each "
        f"example is the last axis: `{_fixed(call)}`."
    )
    return reports.note(message, SECTION)
