"""A ``tf.RaggedTensor`` given to a Keras 3 layer or model (issue #25):
``scorer(lists)`` where ``lists`` holds rows of different lengths.

Keras 3 layers compute on dense arrays only: a ragged input reaches the first layer as
an unknown object and fails there with a message about that layer (``object of type
'RaggedTensor' has no len()`` in Dense, ``Cannot index into an inner ragged dimension``
in an RNN, a conversion error under ``predict``), never saying that ragged inputs are
not taken at all. The reading needs no message: the failing line calls a Keras layer or
model (``m(x)`` or ``m.predict(x)``) whose first input holds a ``tf.RaggedTensor`` of one
ragged axis (its ``row_splits``, bounded).

The fix keeps what the model computes for each row: ``x.to_tensor()`` pads every row
with zeros to the longest one, and then

- when every layer works on each position alone (Dense, Dropout, activations,
  ``Embedding``...: the layers' classes, read from what the model stores) and the output
  keeps the input's rank, padding never reaches a real position's result:
  ``tf.RaggedTensor.from_tensor(m(x.to_tensor()), lengths=x.row_lengths())`` gives the
  rows back without it;
- when some layer mixes a row's positions (pooling, an RNN, attention) and each such
  layer reads a Keras mask (``supports_masking``), the padding is told to them:
  ``m(x.to_tensor(), mask=tf.sequence_mask(x.row_lengths()))``, the result of each row
  alone;
- otherwise the padding would enter the result: the entry says so, and which layer
  reads it, without a fix.
"""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    raised_through_library,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers, stored

_MAX_ROWS = 1_000_000
_MAX_LAYERS = 200
# Layers whose output at a position depends on that position's input alone.
_POSITION_WISE = frozenset(
    {
        "Dense",
        "EinsumDense",
        "Dropout",
        "SpatialDropout1D",
        "GaussianNoise",
        "GaussianDropout",
        "AlphaDropout",
        "Activation",
        "ReLU",
        "LeakyReLU",
        "ELU",
        "PReLU",
        "Softmax",
        "Embedding",
        "Rescaling",
        "UnitNormalization",
        "Identity",
        "ActivityRegularization",
        "InputLayer",
    }
)
_CONTAINERS = frozenset({"Sequential", "Functional", "Model"})


def _row_lengths(value: Any) -> tuple[int, int, int] | None:
    """(rows, shortest, longest) of a RaggedTensor with one ragged axis, or None."""
    if type(value).__name__ != "RaggedTensor" or "tensorflow" not in type(value).__module__:
        return None
    numpy = sys.modules.get("numpy")
    try:
        if int(value.ragged_rank) != 1 or numpy is None:
            return None
        splits = value.row_splits
        if splits.shape[0] is None or splits.shape[0] > _MAX_ROWS + 1:
            return None
        lengths = numpy.diff(numpy.asarray(splits))
        if lengths.size == 0:
            return None
        return int(lengths.size), int(lengths.min()), int(lengths.max())
    except Exception:
        return None


def _ragged_call(line: FailingLine, context: ErrorContext) -> tuple[Any, ...] | None:
    """The call on the failing line of a layer or model (``m(x)``) or of a model's
    ``predict`` given a ragged first input: (call, callee node, callee, ragged node,
    ragged value, whether it is ``predict``)."""
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        callee_node: ast.expr = node.func
        predicting = False
        if isinstance(callee_node, ast.Attribute) and callee_node.attr == "predict":
            callee_node = callee_node.value
            predicting = True
        try:
            found, callee = value_of(callee_node, line.frame, context)
        except Exception:
            continue
        kind = value_kind(callee) if found else None
        if kind not in ("layer", "model") or (predicting and kind != "model"):
            continue
        argument = node.args[0]
        try:
            held, value = value_of(argument, line.frame, context)
        except Exception:
            continue
        if held and _row_lengths(value) is not None:
            return node, callee_node, callee, argument, value, predicting
    return None


def _class_name(layer: Any) -> str:
    try:
        return type(layer).__name__
    except Exception:
        return ""


def _layer_kinds(callee: Any) -> tuple[list[str], list[str]] | None:
    """(names of layers that mix a row's positions and read a mask, names of those that
    mix them and do not), from the layers the model stores; None past the bound."""
    layers = keras_layers(callee, _MAX_LAYERS + 1)
    if len(layers) > _MAX_LAYERS:
        return None
    masked: list[str] = []
    unmasked: list[str] = []
    for layer in layers:
        name = _class_name(layer)
        if name in _CONTAINERS and layer is not callee:
            continue
        # An RNN's cell runs one step at a time inside its RNN, which reads the mask.
        if name in _CONTAINERS or name in _POSITION_WISE or name.endswith("Cell"):
            continue
        attributes = instance_dict(layer)
        flag = attributes.get("_supports_masking") if attributes is not None else None
        (masked if flag is True else unmasked).append(name)
    return masked, unmasked


def _takes_mask(callee: Any) -> bool:
    """Whether the callee's own ``call`` has a ``mask`` parameter (models always do)."""
    if _class_name(callee) in _CONTAINERS:
        return True
    try:
        return "mask" in inspect.signature(type(callee).call).parameters
    except Exception:
        return False


def _output_rank(callee: Any) -> int | None:
    """The rank of a model's single output, from its stored functional outputs."""
    functional = stored(callee, "_functional")
    source = functional if functional is not None else callee
    outputs = stored(source, "_outputs")
    if type(outputs) is not list or len(outputs) != 1:
        return None
    shape = stored(outputs[0], "_shape")
    return len(shape) if type(shape) is tuple else None


def _listing(names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    return ", ".join(unique[:4]) + (", ..." if len(unique) > 4 else "")


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if not raised_through_library(context, error.parsed):
        return None
    found = _ragged_call(line, context)
    if found is None or line.statement is None:
        return None
    call, callee_node, callee, argument, value, predicting = found
    callee_text = line.frame.segment(callee_node)
    ragged = line.frame.segment(argument)
    if not callee_text or not ragged or "\n" in ragged or "\n" in callee_text:
        return None
    rows, shortest, longest = _row_lengths(value) or (0, 0, 0)
    kinds = _layer_kinds(callee)
    if kinds is None:
        return None
    masked, unmasked = kinds
    held = describe(callee_text, callee)
    kind = value_kind(callee)
    tf = tf_alias(context)
    rule = (
        f"{held.sentence() if held else code(callee_text)}; {code(ragged)} is a "
        f"tf.RaggedTensor of {rows} rows of {shortest} to {longest} entries. Keras 3 layers "
        "take no ragged input: they compute on dense arrays, so the first layer fails on it, "
        f"whatever its message says. Give {code(callee_text)} a padded tensor, "
        f"{code(ragged + '.to_tensor()')} (each row filled with zeros up to the longest)"
    )
    padded = f"{ragged}.to_tensor()"
    lengths = f"{ragged}.row_lengths()"
    called = f"{callee_text}.predict" if predicting else callee_text
    replacement: str | None = None
    output_rank = _output_rank(callee) if kind == "model" else None
    keeps_rank = output_rank is None or output_rank == len(value.shape)
    if not masked and not unmasked and keeps_rank:
        rule += (
            f", and keep what it computes for each row: every layer of {code(callee_text)} "
            "works on each position alone, so the padding never changes a real entry's "
            f"result, and {code(f'{tf}.RaggedTensor.from_tensor(..., lengths={lengths})')} "
            "drops it again."
        )
        replacement = f"{tf}.RaggedTensor.from_tensor({called}({padded}), lengths={lengths})"
    elif masked and not unmasked and not predicting and _takes_mask(callee):
        rule += (
            f". {_listing(masked)} mixes the entries of a row, so the padding zeros would "
            "count in each row's result; these layers read a Keras mask, so pass one that "
            f"is True at the real entries, {code(f'mask={tf}.sequence_mask({lengths})')}: "
            "each row's result is then the one it gets alone."
        )
        replacement = f"{callee_text}({padded}, mask={tf}.sequence_mask({lengths}))"
    elif unmasked:
        rule += (
            f". {_listing(unmasked)} mixes the entries of a row and reads no mask, so "
            "the padding zeros would enter each row's result: pad with a value the "
            "model ignores, or call it on each row alone."
        )
    else:
        rule += "."
    fixed = rewrite(line.frame, line.statement, call, replacement) if replacement else None
    return Finding(rule, code(fixed) if fixed and "\n" not in fixed else None)


RAGGED_INPUTS = ErrorFamily(
    "a tf.RaggedTensor given to a Keras 3 layer or model",
    messages=(),
    read=_read,
    section="keras-model-api",
)
