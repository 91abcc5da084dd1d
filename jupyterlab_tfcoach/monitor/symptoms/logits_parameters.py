"""A loss function of the learner's that hands raw scores to a probability loss.

``def loss_fn(y, logits): return tf.reduce_mean(keras.losses.
sparse_categorical_crossentropy(y, logits))`` keeps Keras's default ``from_logits=False``:
the loss reads its input as probabilities, clips it into [1e-7, 1 - 1e-7] and
renormalises the rows, so the values are wrong and every clipped score gets no
gradient. Training runs, worse or erratic; nothing raises. ``logits_losses.py`` reads the
loss calls of a cell's top level, whose prediction is a name with values to read; here the
call is inside the learner's function and its prediction is a parameter.

After a completed cell that defines a function at its top level (``def``; one substring
test otherwise): each call in it of a Keras probability loss that expects probabilities
(``probability_losses._probability_loss``: a ``keras.losses`` function or an object made
with ``from_logits`` False) whose prediction argument is one of the function's parameters.
Told when that parameter is named for scores (``logits``, ``scores``), or when the cell
calls the function with, at that place, a call of a model whose output is raw: a Keras
model whose last layer has no activation (``loss_agreement.model_ending``), or a
``tf.Module`` whose last layer, in a list it holds, has ``activation`` None. A parameter
called ``probs`` fed a softmax model stays silent. The fix is the loss call with
``from_logits=True``. A loss object made in an earlier cell whose note was already given
there (that cell made it and handed it scores) is not told again on a later cell that only
uses it: the fix is the earlier cell's, and repeating it would cover the later cell's own bug.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.variables.probability_losses import SECTION, _probability_loss

_SCORE_WORDS = ("logit", "score")
_RAW = (None, "linear")


def _raw_output(model: Any) -> bool:
    """Whether ``model``'s last layer, as stored, applies no activation."""
    try:
        from jupyterlab_tfcoach.monitor.training.loss_agreement import model_ending

        ending = model_ending(model)
        if ending is not None:
            return ending[0] in _RAW or ending[0] == "linear"
        for value in (instance_dict(model) or {}).values():
            if type(value) in (list, tuple) and value:
                last = instance_dict(value[-1])
                if last is not None and "activation" in last:
                    return last["activation"] is None
    except Exception:
        return False
    return False


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    found = _found(source, namespace)
    if found is None or _told_before(found[3][0], source, namespace):
        return []
    return [_note(*found, source)]


# How many earlier cells are read for a note already given on the same loss object.
_HISTORY_CELLS = 50

# (the function, the loss call, the parameter, the loss, the raw model call feeding it)
Found = tuple[
    ast.FunctionDef, ast.Call, str, tuple[str, bool, str, str], tuple[str, str, int] | None
]


def _told_before(loss: str, source: str, namespace: Mapping[str, Any]) -> bool:
    """Whether a loss object made in an earlier cell (``bce = BinaryCrossentropy()``) was
    already told in an earlier cell: its fix (``bce = ...(from_logits=True)``) is there,
    and this cell only uses the object again, so repeating the note here would hide this
    cell's own mistake behind an earlier cell's. A cell that makes the object again, or
    one whose earlier cells never gave the note, is told."""
    if not loss.isidentifier() or _made_here(loss, source):
        return False
    history = namespace.get("In") if hasattr(namespace, "get") else None
    if type(history) is not list:
        return False
    last = len(history) - 1
    for index in range(last, max(0, last - _HISTORY_CELLS), -1):
        earlier = history[index]
        if type(earlier) is not str or earlier.strip() == source.strip():
            continue
        if loss not in earlier:
            continue
        told = _found(earlier, namespace)
        if told is not None and told[3][0] == loss:
            return True
        if _made_here(loss, earlier):
            # The object's construction: cells before it made another object.
            return False
    return False


def _made_here(name: str, source: str) -> bool:
    tree = parsed_source(source)
    if tree is None:
        return False
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        for node in ast.walk(tree)
    )


def _found(source: str, namespace: Mapping[str, Any]) -> Found | None:
    """The first call in one of the cell's functions that hands a scores parameter to a
    probability loss: (function, call, parameter, loss, the raw model call feeding it)."""
    if "def " not in source:
        return None
    tree = parsed_source(source)
    if tree is None:
        return None
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        parameters = [a.arg for a in function.args.args]
        for node in ast.walk(function):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            prediction = node.args[1]
            if not isinstance(prediction, ast.Name) or prediction.id not in parameters:
                continue
            loss = _probability_loss(node, namespace, source)
            if loss is None:
                continue
            position = parameters.index(prediction.id)
            named = any(w in prediction.id.lower() for w in _SCORE_WORDS)
            fed = _raw_model_call(tree, function.name, position, namespace)
            if not named and fed is None:
                continue
            return function, node, prediction.id, loss, fed
    return None


def _raw_model_call(
    tree: ast.Module, function: str, position: int, namespace: Mapping[str, Any]
) -> tuple[str, str, int] | None:
    """(the model's name, the argument as written, the line) of a call of ``function``
    in the cell that passes a raw-output model's call at ``position``."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == function
            and len(node.args) > position
        ):
            continue
        argument = node.args[position]
        if (
            isinstance(argument, ast.Call)
            and isinstance(argument.func, ast.Name)
            and _raw_output(namespace.get(argument.func.id))
        ):
            return argument.func.id, ast.unparse(argument), node.lineno
    return None


def _note(
    function: ast.FunctionDef,
    call: ast.Call,
    parameter: str,
    loss: tuple[str, bool, str, str],
    fed: tuple[str, str, int] | None,
    source: str,
) -> Note:
    written = ast.get_source_segment(source, call) or ast.unparse(call)
    _loss, _is_object, activation, fix = loss
    text = (
        f"`{function.name}` gives `{parameter}` to `{written}` (line {call.lineno} of this "
        f"cell) with from_logits left False, so the loss takes `{parameter}` for "
        f"probabilities"
    )
    if fed is not None:
        model, argument, line = fed
        text += (
            f", but `{model}`'s last layer has no activation and `{argument}` (line {line}) "
            f"gives raw scores (logits)"
        )
    else:
        text += ", but its name says it holds raw scores (logits)"
    text += (
        ": Keras clips them into [1e-7, 1 - 1e-7] (and renormalises the rows), so the loss "
        "is wrong and every clipped score gets no gradient. Training runs, only worse. "
        "Nothing raises."
    )
    if fix:
        text += f" Tell the loss it gets logits: `{fix}`"
        text += "." if not _is_object else f" (or apply {activation} to the model's output first)."
    return reports.note(text, SECTION)
