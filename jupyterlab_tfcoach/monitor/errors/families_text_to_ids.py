"""Raw text given to a model that reads token ids: ``model.predict(np.array(sentences))``
where the model's first step is an ``Embedding`` layer.

Keras refuses the strings with ``Invalid dtype: str800`` (NumPy's name for the array's
string dtype), which says nothing about tokens. The reading checks the model: an
``Embedding`` layer inside it and no layer that turns text into ids
(``TextVectorization``, ``StringLookup``), so the model was trained on ids the notebook
made itself. The fix maps the sentences the same way, with the one word-to-id dict the
notebook holds (each word looked up, the rows padded with ``keras.utils.pad_sequences``
to the model's input length when it has one). Without such a dict, or with a
``TextVectorization`` layer in the notebook, ``families_model_data.MODEL_DATA`` explains
it (its fix calls that layer).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    model_input_shapes,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_SECTION = "keras-model-api"
_INVALID_DTYPE = re.compile(r"^Invalid dtype: (?:str|<U|bytes|object)\w*")
_MODEL_CALLS = ("predict", "predict_on_batch", "evaluate", "fit", "__call__")
_TEXT_LAYERS = ("TextVectorization", "StringLookup", "Hashing")
_MAX_NAMES = 300
_VOCABULARY_MIN = 5


def _layer_classes(model: Any) -> list[str]:
    layers = library_attribute(model, "layers", None)
    try:
        return [type(layer).__name__ for layer in list(layers)[:50]] if layers else []
    except Exception:
        return []


def _input_dim(model: Any) -> int | None:
    layers = library_attribute(model, "layers", None)
    try:
        for layer in list(layers)[:50] if layers else []:
            if type(layer).__name__ == "Embedding":
                size = library_attribute(layer, "input_dim", None)
                return size if type(size) is int else None
    except Exception:
        return None
    return None


def _vocabulary(context: ErrorContext, input_dim: int | None) -> tuple[str, str] | None:
    """("layer" or "dict", name) of a text-to-ids mapping the notebook holds; a dict counts
    when its largest id fits the Embedding's table (``input_dim`` rows, maybe one spare
    for the padding id), so another dict of strings to ints is not taken for it."""
    dictionaries = []
    for name, value in list(context.namespace.items())[:_MAX_NAMES]:
        if type(name) is not str or name.startswith("_"):
            continue
        if type(value).__name__ == "TextVectorization":
            return "layer", name
        if type(value) is dict and len(value) >= _VOCABULARY_MIN:
            sample = list(value.items())[:50]
            if not all(type(key) is str and type(item) is int for key, item in sample):
                continue
            try:
                largest = max(value.values())
            except Exception:
                continue
            if input_dim is None or largest + 1 in (input_dim, input_dim - 1):
                dictionaries.append(name)
    return ("dict", dictionaries[0]) if len(dictionaries) == 1 else None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        owner = node.func.value if isinstance(node.func, ast.Attribute) else node.func
        if isinstance(node.func, ast.Attribute) and node.func.attr not in _MODEL_CALLS:
            continue
        try:
            found, model = value_of(owner, line.frame, context)
        except Exception:
            continue
        if not found or value_kind(model) != "model":
            continue
        classes = _layer_classes(model)
        if "Embedding" not in classes or any(name in _TEXT_LAYERS for name in classes):
            continue
        return _finding(node, owner, model, line, context)
    return None


def _finding(
    node: ast.Call, owner: ast.expr, model: Any, line: FailingLine, context: ErrorContext
) -> Finding | None:
    argument = node.args[0]
    # ``np.array(sentences)``: the text is the list inside.
    inner = argument
    if (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Attribute | ast.Name)
        and getattr(argument.func, "attr", getattr(argument.func, "id", "")) in ("array", "asarray")
        and len(argument.args) == 1
    ):
        inner = argument.args[0]
    text = line.frame.segment(inner)
    model_source = line.frame.segment(owner) or "the model"
    if not text or "\n" in text:
        return None
    rule = (
        f"{code(model_source)} starts from an `Embedding` layer, which looks up integer token "
        f"ids, and has no layer that turns text into ids; {code(text)} is raw text (Keras "
        "refuses an array of strings as input). Map the sentences to ids the way the "
        "training data was made"
    )
    vocabulary = _vocabulary(context, _input_dim(model))
    if vocabulary is None or vocabulary[0] == "layer":
        return None
    name = vocabulary[1]
    keras = context.module_alias("keras", "keras")
    shapes = model_input_shapes(model)
    length = shapes[0][1] if shapes and len(shapes[0]) == 2 else None
    maxlen = f", maxlen={length}" if type(length) is int else ""
    replacement = (
        f"{keras}.utils.pad_sequences([[{name}[w] for w in s.split() if w in {name}] "
        f"for s in {text}]{maxlen})"
    )
    rule += (
        f", with the notebook's word-to-id dict {code(name)} (words it does not hold "
        "are left out), padded into one array"
    )
    fixed = rewrite(line.frame, line.statement, argument, replacement) if line.statement else None
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None, section=_SECTION)
    return Finding(rule + ".", code(fixed), section=_SECTION)


TEXT_TO_IDS = ErrorFamily(
    "raw text given to a model that reads token ids",
    messages=(Message(_INVALID_DTYPE),),
    exception_type="ValueError",
    read=_read,
    section=_SECTION,
)
