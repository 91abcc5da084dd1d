"""A ``TextVectorization`` whose ``output_sequence_length`` cuts most texts short.

``TextVectorization(output_sequence_length=n)`` pads or truncates every text to ``n``
token ids. Set below the texts' length, it keeps each text's first ``n`` words and drops
the rest without a word: the words that decide the label may never reach the model
(accuracy stays low), and nothing raises.

After a cell that completed (a cell without ``output_sequence_length`` or a call of a
name costs one substring test), each top-level call ``V(texts)`` of the cell is read:
``V`` holds a Keras ``TextVectorization`` with an int ``output_sequence_length``, the
default whitespace split and no n-grams (its stored ``_output_sequence_length``,
``_split``, ``_ngrams``), and ``texts`` names a list or tuple of strings, a 1-D NumPy
array of strings or a 1-D string tensor (at most ``MAX_TEXTS``). Each text's words are
counted by ``str.split`` (the layer's split, before punctuation is stripped: a close
count). When at least ``SHARE_CUT`` of the texts have more words than the length, the
note names the layer, the length, how many texts are cut and the longest; fix: the
layer built with ``output_sequence_length`` the longest text's word count.

Reads the texts' word counts only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import TEXTS, held_array
from jupyterlab_tfcoach.monitor.syntax import held_at, parsed_source, reference_path

SECTION = "preprocessing-adapt"
MAX_TEXTS = 20_000
MAX_CELL_CHARS = 50_000
SHARE_CUT = 0.25
_LAYER = ("keras.src.layers.preprocessing.text_vectorization", "TextVectorization")


def _length(layer: Any) -> int | None:
    if not any((c.__module__, c.__name__) == _LAYER for c in class_mro(layer)):
        return None
    stored = instance_dict(layer) or {}
    length = stored.get("_output_sequence_length")
    if type(length) is not int or length < 1:
        return None
    if stored.get("_split") != "whitespace" or stored.get("_ngrams") is not None:
        return None
    return length


def _texts(value: Any) -> list[str] | None:
    items: Any
    if type(value) in (list, tuple):
        items = value
    else:
        # The count is read from the shape before any value is copied or listed.
        array = held_array(value, MAX_TEXTS, TEXTS, ndim=1)
        if array is None or array.dtype.kind not in "USO":
            return None
        items = array.tolist()
    if not 0 < len(items) <= MAX_TEXTS:
        return None
    texts: list[str] = []
    for item in items:
        if type(item) is bytes:
            item = item.decode("utf-8", "replace")
        if type(item) is not str:
            return None
        texts.append(item)
    return texts


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a vectorizer whose sequence length cuts most texts, if any."""
    if len(source) > MAX_CELL_CHARS or "(" not in source:
        return []
    if "output_sequence_length" not in source and "vectoriz" not in source.lower():
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
                continue
            path = reference_path(node.func)
            argument = reference_path(node.args[0])
            if path is None or argument is None:
                continue
            found, layer = held_at(path, namespace)  # type: ignore[arg-type]
            length = _length(layer) if found else None
            if length is None:
                continue
            found, value = held_at(argument, namespace)  # type: ignore[arg-type]
            texts = _texts(value) if found else None
            if texts is None:
                continue
            counts = [len(text.split()) for text in texts]
            cut = sum(1 for count in counts if count > length)
            if cut >= SHARE_CUT * len(counts):
                return [_note(node, ".".join(path), ".".join(argument), length, cut, counts)]
    return []


def _note(call: ast.Call, layer: str, texts: str, length: int, cut: int, counts: list[int]) -> Note:
    longest = max(counts)
    text = (
        f"`{layer}` keeps the first {length} tokens of each text "
        f"(`output_sequence_length={length}`), but {cut} of the {len(counts)} texts in "
        f"`{texts}` (line {call.lineno} of this cell) have more words, up to {longest}: "
        "their ends are cut off silently, and the words there (often the ones that "
        "decide the label) never reach the model. Nothing raises. Build the layer with a "
        f"length that covers the texts, the longest one's word count: "
        f"`output_sequence_length={longest}` (then adapt it again)."
    )
    return reports.note(text, SECTION)
