"""A custom loss whose parameters are named in the swapped order: ``def my_loss(y_pred, y_true)``.

Keras calls every loss as ``loss(y_true, y_pred)``, by position. A function written
``def my_loss(y_pred, y_true)`` therefore gets the labels in ``y_pred`` and the model's
output in ``y_true``: nothing raises, a symmetric loss (a squared error) is unchanged,
and any other (a cross-entropy, a one-sided or weighted error) computes something else.

Read at compile time: ``fit_watch.py``'s hook on ``Trainer.compile`` passes the loss
given (``loss=``, the second argument, or each value of a list or dict of losses) to
``swapped_loss``, which reads the names of the first two parameters of a plain Python
function of the user's (``__code__.co_varnames``; a ``keras.losses.Loss`` subclass of
the user's is read by its ``call``): a first name meaning the prediction (``y_pred``,
``preds``, ``logits``, ...) and a second meaning the labels (``y_true``, ``labels``,
``target``, ...). No call is made, nothing is traced. The note names the function, the
compile call and where the def is; the fix is the def line with the two names swapped
(the body keeps its names, so it then reads what Keras passes).

Cost: a few attribute reads per compile call (measured ~0.002 ms); a note, when due,
reads the cells' sources for the def line (~0.1 ms).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import user_code

SECTION = "labels-and-loss"
MAX_PER_CELL = 8
PREDICTION_NAMES = frozenset(
    {
        "y_pred",
        "ypred",
        "pred",
        "preds",
        "prediction",
        "predictions",
        "predicted",
        "y_hat",
        "yhat",
        "output",
        "outputs",
        "logits",
        "probs",
        "scores",
        "y_predicted",
    }
)
LABEL_NAMES = frozenset(
    {
        "y_true",
        "ytrue",
        "true",
        "y",
        "label",
        "labels",
        "target",
        "targets",
        "truth",
        "y_target",
        "y_actual",
        "actual",
        "ground_truth",
    }
)


@dataclass
class SwappedLoss:
    """A loss given to compile whose first parameter names the prediction."""

    function: weakref.ReferenceType[Any]
    name: str  # the function's (or the Loss class's) name
    first: str
    second: str
    model: weakref.ReferenceType[Any]
    method: bool  # a Loss subclass's ``call``


def _parameters(function: Any, skip_self: bool) -> tuple[str, str] | None:
    code = getattr(function, "__code__", None)
    if code is None or type(function).__name__ not in ("function", "method"):
        return None
    names = code.co_varnames[: code.co_argcount]
    if skip_self:
        names = names[1:]
    return (names[0], names[1]) if len(names) >= 2 else None


def swapped_loss(loss: Any, model: Any) -> SwappedLoss | None:
    """The loss given to compile, when it is the user's own with swapped parameter names."""
    if type(loss).__name__ == "function":
        module = getattr(loss, "__module__", "") or ""
        if module.startswith(("keras", "tensorflow")):
            return None
        parameters, function, method = _parameters(loss, False), loss, False
    elif not is_library_class(type(loss)) and any(
        k.__name__ == "Loss" and k.__module__.startswith("keras") for k in type(loss).__mro__
    ):
        function = type(loss).__dict__.get("call")
        parameters, method = _parameters(function, True), True
    else:
        return None
    if parameters is None:
        return None
    first, second = parameters
    if first not in PREDICTION_NAMES or second not in LABEL_NAMES:
        return None
    name = getattr(function, "__qualname__", "") if method else getattr(loss, "__name__", "")
    return SwappedLoss(weakref.ref(function), str(name), first, second, weakref.ref(model), method)


def losses_given(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The losses a compile call was given (``loss=`` or the second positional argument;
    each value of a list or dict)."""
    loss = kwargs.get("loss", args[1] if len(args) > 1 else None)
    if type(loss) in (list, tuple):
        return list(loss)[:MAX_PER_CELL]
    if type(loss) is dict:
        return list(loss.values())[:MAX_PER_CELL]
    return [loss] if loss is not None else []


def _def_line(function: Any, namespace: Mapping[str, Any], cell_source: str) -> tuple[str, str]:
    """(the def line as written, where it is) found in the cells' sources."""
    code = getattr(function, "__code__", None)
    name = getattr(code, "co_name", "")
    sources, counts = user_code.cell_sources(namespace, cell_source)
    for source, count in zip(sources, counts, strict=True):
        if f"def {name}" not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                line = source.splitlines()[node.lineno - 1].strip()
                return line, user_code.cell_place(count, node.lineno)
    return "", ""


def swapped_loss_notes(
    found: list[SwappedLoss], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    notes: list[Note] = []
    told: set[int] = set()
    for item in found:
        function = item.function()
        model = item.model()
        if function is None or id(function) in told:
            continue
        told.add(id(function))
        model_name = name_bound_to(id(model), namespace) if model is not None else None
        compiled = f"`{model_name}.compile`" if model_name else "compile"
        line, place = _def_line(function, namespace, cell_source)
        wrong = f"({item.first}, {item.second}"
        right = f"({item.second}, {item.first}"
        if item.method:
            wrong = f"(self, {item.first}, {item.second}"
            right = f"(self, {item.second}, {item.first}"
        written = f"`{line}` ({place})" if line else f"`{item.name}`"
        text = (
            f"{written} is given to {compiled} as the loss, and its parameters are named in "
            f"the swapped order: Keras always calls a loss as loss(y_true, y_pred), so "
            f"`{item.first}` receives the labels and `{item.second}` the model's output. "
            f"Nothing raises: a symmetric loss such as a squared error gives the same "
            f"numbers, but any other (a cross-entropy, a weighted or one-sided error) "
            f"computes something else and trains the model toward it."
        )
        if line and wrong in line:
            fixed = line.replace(wrong, right, 1)
            text += (
                f" Swap the two parameters in the def line (the body keeps its names), run "
                f"that cell and compile again: `{fixed}`"
            )
        else:
            text += (
                f" Swap `{item.first}` and `{item.second}` in the def line (the body keeps "
                f"its names), then compile again."
            )
        notes.append(reports.note(text, SECTION))
    return notes


def swapped_loss_class_notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """After a cell that defines a ``keras.losses.Loss`` subclass whose ``call`` names
    its parameters in the swapped order: told where the class is written, whether the
    loss then goes to compile or is called in a custom loop (a cell that also compiles
    is left to the compile hook: one note per cause). Reads the class's code object."""
    if "Loss" not in source or "def call" not in source or ".compile(" in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    notes: list[Note] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or len(notes) >= MAX_PER_CELL:
            continue
        cls = namespace.get(node.name)
        if not isinstance(cls, type) or is_library_class(cls):
            continue
        if not any(k.__name__ == "Loss" and k.__module__.startswith("keras") for k in cls.__mro__):
            continue
        parameters = _parameters(cls.__dict__.get("call"), True)
        if parameters is None:
            continue
        first, second = parameters
        if first not in PREDICTION_NAMES or second not in LABEL_NAMES:
            continue
        method = next(
            (m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "call"), None
        )
        if method is None:
            continue
        line = source.splitlines()[method.lineno - 1].strip()
        wrong, right = f"(self, {first}, {second}", f"(self, {second}, {first}"
        text = (
            f"`{line}` (line {method.lineno} of this cell) in `{node.name}`, a "
            f"`keras.losses.Loss`, names its parameters in the swapped order: Keras calls a "
            f"loss object as loss(y_true, y_pred), in compile and when you call it yourself, "
            f"so `{first}` receives the labels and `{second}` the model's output. Nothing "
            f"raises: a symmetric loss gives the same numbers, any other computes something "
            f"else."
        )
        if wrong in line:
            text += (
                f" Swap the two parameters in the def line (the body keeps its names): "
                f"`{line.replace(wrong, right, 1)}`"
            )
        notes.append(reports.note(text, SECTION))
    return notes
