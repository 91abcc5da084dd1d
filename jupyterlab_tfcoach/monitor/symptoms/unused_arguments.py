"""An argument the learner passes to their own function or layer that its body never reads.

``rnn_forward(x, mask)`` whose loop never looks at ``mask``, a custom layer's
``def predict_fn(x, training)`` that calls a global model with Dropout without it, a loss
``def weighted_mse(y, p, sample_weight)`` that averages without the weights: the caller
hands over a value that is meant to change the result, the function accepts it and drops
it. Everything runs; padded steps still update the state, dropout never turns on, the
weights weigh nothing. (A Keras layer's own ``call`` may leave ``training`` alone: Keras 3
hands it on to the layers it calls.)

Read after a completed cell (``cell_reading``, parsed once per source): each top-level
call whose callee holds, now, a plain function of the learner's (``__module__`` is
``__main__``), a ``tf.function`` of one, or an instance of the learner's own Keras layer
or model class (its ``call``). Its ``def`` is read from the source IPython keeps
(``user_code.method_source``); a parameter whose name's words say it modifies the result
(``mask``, ``training``, ``weight``/``weights``, ``axis``, ``temperature``, ``lengths``,
``threshold``, ``margin``, ``padding``) that the body never reads (no load of the name,
nested functions and comprehensions included) and that this call passes a value other
than ``None`` for (by position or keyword) is told, once per function.

The fix, when the body holds a call that takes the same keyword and is not given it
(for ``training``, told only then: a call of a global name holding a Keras model or layer
with Dropout-like or BatchNormalization layers; for ``axis``, a
``reduce_*``/``mean``/``sum``/``argmax``/``softmax`` call of one argument), is that line
with the keyword forwarded (``net(x, training=training)``). Otherwise the note says what
the value is for and where the body must use it, without code.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import library_class_names
from jupyterlab_tfcoach.monitor.symptoms.training_mode import mode_layers
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path
from jupyterlab_tfcoach.monitor.training.user_code import method_source

SECTION = "keras-model-api"
MAX_NOTES = 1
WANTED = re.compile(r"\w\s*\(")
_MEANING_WORDS = frozenset(
    {
        "mask",
        "masks",
        "training",
        "weight",
        "weights",
        "axis",
        "temperature",
        "lengths",
        "lens",
        "threshold",
        "margin",
        "padding",
    }
)
_AXIS_CALLS = frozenset(
    {
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_std",
        "reduce_variance",
        "reduce_prod",
        "mean",
        "sum",
        "argmax",
        "argmin",
        "softmax",
        "log_softmax",
        "std",
        "var",
        "max",
        "min",
    }
)
_PURPOSE = {
    "mask": "which positions are real: the body must use it (skip the padded steps, "
    "keep the state where the mask is 0, leave them out of sums and means)",
    "training": "whether the model is training: the body must pass it on to the layers "
    "that behave differently (Dropout, BatchNormalization)",
    "weight": "how much each value counts: the body must multiply by it before reducing",
    "axis": "which axis to work along: the body must pass it to its reduction",
}


def _callee(value: Any) -> tuple[Any, bool] | None:
    """(the learner's Python function, is a method taking ``self``) behind ``value``."""
    if type(value) is types.FunctionType:
        return (value, False) if value.__module__ == "__main__" else None
    attributes = instance_dict(value)
    if attributes is not None and "Function" in library_class_names(value):
        python = attributes.get("_python_function")
        if type(python) is types.FunctionType and python.__module__ == "__main__":
            return python, False
        return None
    cls = type(value)
    if getattr(cls, "__module__", None) == "__main__" and "Layer" in library_class_names(value):
        call = cls.__dict__.get("call")
        if type(call) is types.FunctionType:
            return call, True
    return None


def _meaningful(name: str) -> bool:
    return bool(_MEANING_WORDS.intersection(identifier_words(name)))


def _purpose(name: str) -> str:
    words = identifier_words(name)
    for word in words:
        for key, text in _PURPOSE.items():
            if word.startswith(key):
                return text
    return "a value meant to change the result: the body must use it"


def _reads(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _passed(call: ast.Call, params: list[str], method: bool) -> dict[str, ast.expr]:
    """The parameters this call gives a value, by name."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return {}
    positional = params[1:] if method else params
    given: dict[str, ast.expr] = {}
    for name, argument in zip(positional, call.args, strict=False):
        given[name] = argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            given[keyword.arg] = keyword.value
    return given


def _forwarding(
    definition: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    function: Any,
) -> ast.Call | None:
    """A call in the body that takes ``name`` as a keyword and is not given it."""
    for node in ast.walk(definition):
        if not isinstance(node, ast.Call) or any(k.arg == name for k in node.keywords):
            continue
        called = call_name(node)
        if name == "training":
            path = reference_path(node.func)
            value = None
            if path and len(path) == 1:
                value = function.__globals__.get(path[0])
            if value is not None and mode_layers(value):
                return node
        elif name == "axis" and called in _AXIS_CALLS and len(node.args) == 1:
            return node
    return None


def _with_keyword(source: str, call: ast.Call, name: str) -> str | None:
    if call.lineno != call.end_lineno:
        return None
    lines = source.splitlines()
    line = lines[call.lineno - 1]
    end = call.end_col_offset
    if end is None or line[end - 1 : end] != ")":
        return None
    inside = line[call.col_offset : end - 1].rstrip()
    joiner = "" if inside.endswith("(") else ", "
    return (line[: end - 1].rstrip() + joiner + f"{name}={name})" + line[end:]).strip()


def unused_argument_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None or sys.modules.get("keras") is None:
        return []
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call):
            continue
        found, value = held_at(reference_path(node.func), namespace)
        if not found:
            continue
        callee = _callee(value)
        if callee is None:
            continue
        function, method = callee
        source = method_source(function)
        if source is None or not source.tree.body:
            continue
        definition = source.tree.body[0]
        if not isinstance(definition, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        arguments = definition.args
        params = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        reads = set()
        for statement in definition.body:
            reads |= _reads(statement)
        passed = _passed(node, params, method)
        for name in params[1:] if method else params:
            if name in reads or not _meaningful(name) or name not in passed:
                continue
            given = passed[name]
            if isinstance(given, ast.Constant) and given.value is None:
                continue
            if name == "training" and method:
                # Keras 3 hands a layer's ``training`` on to the layers it calls.
                continue
            call_text = code.segment(node) or code.segment(node.func) or "the call"
            given_text = code.segment(given) or "a value"
            owner = f"{type(value).__name__}.call" if method else definition.name
            forward = _forwarding(definition, name, function)
            if name == "training" and forward is None:
                continue  # no layer in the body behaves differently in training
            fix = ""
            if forward is not None:
                fixed = _with_keyword(source.source, forward, name)
                if fixed is not None:
                    line = source.first_line + forward.lineno - 1
                    fix = (
                        f" Line {line} of the cell that defines `{owner}` is where to pass "
                        f"it. Fix: `{fixed}`."
                    )
            text = (
                f"`{call_text}` (line {node.lineno} of this cell) passes `{given_text}` as "
                f"`{name}`, but `{owner}` never reads `{name}`: the value is dropped and the "
                f"result is the same as without it. `{name}` says {_purpose(name)}. "
                f"Nothing raises.{fix}"
            )
            notes.append(reports.note(text, SECTION))
            break
    return notes
