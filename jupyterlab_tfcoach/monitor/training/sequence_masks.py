"""``Embedding(mask_zero=True)`` fed sequences in which 0 is a real token.

With ``mask_zero=True`` an Embedding tells the layers after it to skip every position
whose id is 0: 0 must mean padding only. When the tokenizer's ids start at 0 (a
vocabulary indexed from 0, ``np.unique(..., return_inverse=True)``), a real word with id
0 is masked out wherever it appears: an RNN skips it, a pooling layer leaves it out.
Nothing raises; the model never sees that word.

The symptom, measured once per ``fit`` whose model holds an Embedding with a stored
``mask_zero`` True: the inputs given (a NumPy integer array of rows, at most
``MAX_VALUES`` values; up to ``MAX_ROWS`` rows read, evenly spaced) have a 0 with a
non-zero id both before and after it in the same row. Padding (``pad_sequences``,
``padding="pre"`` or ``"post"``) only puts zeros at a row's start or end, so such a 0 is
a token: a row holds one when it has more zeros than its leading and trailing runs.
Three vectorised passes over the rows read (~3 ms for 5,000 rows of 200 ids). The
note names the Embedding (as written in the cells, when found), how
many rows hold such a 0, and the fix: ids from 1 (shift the tokenizer's ids by one
before padding, ``input_dim`` one larger) or, when the sequences were never padded, the
Embedding written without ``mask_zero``.

Nothing here imports TensorFlow or prints; every failure leaves the note out.
"""

from __future__ import annotations

import ast
import copy
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers
from jupyterlab_tfcoach.monitor.training import user_code

SECTION = "joining-indexing"  # an Embedding looks its rows up by id
MAX_LAYERS = 200
MAX_VALUES = 50_000_000
MAX_ROWS = 5_000  # rows read; a larger array is read every n-th row
MAX_HISTORY_CELLS = 50


@dataclass
class MaskedZeros:
    """One fit whose inputs hold 0 as a token under ``mask_zero=True``."""

    model: weakref.ReferenceType[Any]
    model_id: int
    x_id: int
    layer: weakref.ReferenceType[Any]
    input_dim: int | None
    rows: int  # rows with a 0 between two non-zero ids
    total_rows: int  # rows read (every row up to ``MAX_ROWS``)
    example: tuple[int, int] | None  # (row, position) of one such 0


def _masking_embedding(model: Any) -> Any | None:
    for layer in keras_layers(model, MAX_LAYERS):
        if type(layer).__name__ != "Embedding":
            continue
        if (instance_dict(layer) or {}).get("mask_zero") is True:
            return layer
    return None


def read_masked_zeros(model: Any, x: Any) -> MaskedZeros | None:
    """What one fit's inputs hold under a ``mask_zero=True`` Embedding (None: nothing)."""
    layer = _masking_embedding(model)
    if layer is None:
        return None
    cls = type(x)
    if cls.__name__ != "ndarray" or cls.__module__ != "numpy":
        return None
    if x.ndim != 2 or x.dtype.kind not in "iu" or x.size > MAX_VALUES or x.shape[1] < 3:
        return None
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    step = max(1, -(-int(x.shape[0]) // MAX_ROWS))
    read = x[::step]  # a view: every row up to MAX_ROWS, else evenly spaced ones
    nonzero = read != 0
    zeros = read.shape[1] - nonzero.sum(axis=1)
    leading = nonzero.argmax(axis=1)
    trailing = nonzero[:, ::-1].argmax(axis=1)
    # A row's zeros beyond its leading and trailing run lie between non-zero ids.
    rows = nonzero.any(axis=1) & (zeros > leading + trailing)
    count = int(rows.sum())
    if count == 0:
        return None
    row = int(rows.argmax())
    inner = ~nonzero[row]
    inner[: int(leading[row])] = False
    inner[read.shape[1] - int(trailing[row]) :] = False
    position = int(inner.argmax())
    row *= step
    input_dim = (instance_dict(layer) or {}).get("input_dim")
    return MaskedZeros(
        model=weakref.ref(model),
        model_id=id(model),
        x_id=id(x),
        layer=weakref.ref(layer),
        input_dim=input_dim if type(input_dim) is int else None,
        rows=count,
        total_rows=int(read.shape[0]),
        example=(row, position),
    )


def _written_embedding(sources: list[str]) -> str | None:
    """The newest ``...Embedding(..., mask_zero=True, ...)`` call written in the cells."""
    for source in sources:
        tree = user_code.parse(source)
        if tree is None:
            continue
        found = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "Embedding")
                or (isinstance(node.func, ast.Name) and node.func.id == "Embedding")
            )
            and any(
                k.arg == "mask_zero" and isinstance(k.value, ast.Constant) and k.value.value
                for k in node.keywords
            )
        ]
        if found:
            text = ast.get_source_segment(source, found[-1])
            return " ".join(text.split()) if text else None
    return None


def _without_mask_zero(written: str) -> str | None:
    tree = user_code.parse(written)
    node = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return None
    # The parsed tree is shared with every reader of this text: the call is changed on a copy.
    call = copy.deepcopy(node.value)
    call.keywords = [k for k in call.keywords if k.arg != "mask_zero"]
    return user_code.valid_code(ast.unparse(call))


def masked_zero_notes(
    found: list[MaskedZeros], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    notes: list[Note] = []
    told: set[int] = set()
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    sources = [cell_source, *reversed([s for s in earlier if type(s) is str])]
    for item in found:
        try:
            if item.model_id in told or item.model() is None:
                continue
            told.add(item.model_id)
            notes.append(_note(item, namespace, sources))
        except Exception:
            continue
    return notes


def _note(item: MaskedZeros, namespace: Mapping[str, Any], sources: list[str]) -> Note:
    name = name_bound_to(item.model_id, namespace)
    x = name_bound_to(item.x_id, namespace)
    who = f"`{name}`" if name else "the model"
    given = f"`{x}`" if x else "the inputs given to fit"
    written = _written_embedding(sources)
    layer = f"`{written}`" if written else "an Embedding with mask_zero=True"
    where = ""
    if item.example is not None and x:
        where = f" (e.g. `{x}[{item.example[0]}, {item.example[1]}]`)"
    text = (
        f"{who} starts with {layer}, which masks every position whose id is 0 as padding, "
        f"but {item.rows} of the {item.total_rows} rows read of {given} hold a 0 between two "
        f"non-zero ids{where}: padding only adds zeros at a row's start or end, so 0 is "
        f"also a real token here, and the layers after the Embedding skip it wherever it "
        f"appears (no error). Keep 0 for padding only: number the tokens from 1 (add 1 "
        f"to every id before padding"
    )
    text += f", and give the Embedding input_dim={item.input_dim + 1})" if item.input_dim else ")"
    fixed = _without_mask_zero(written) if written else None
    if fixed:
        text += (
            f"; or, if the rows were never padded, build it without the mask: `{fixed}`, "
            f"then fit again."
        )
    else:
        text += "."
    return reports.note(text, SECTION)
