"""A SavedModel folder given to Keras 3's ``load_model``.

``model.export(path)`` and ``tf.saved_model.save(model, path)`` write a TensorFlow
SavedModel, a folder holding ``saved_model.pb``, for serving; Keras 3's ``load_model``
reads only its own ``.keras`` files (and legacy ``.h5``), and refuses the folder with
``File format not supported``. The cause to name is what wrote the folder (the cell's
``.export(...)`` or ``saved_model.save(...)`` call with the same path, else the folder's
``saved_model.pb``); the two routes are a layer that calls the SavedModel
(``keras.layers.TFSMLayer(path, call_endpoint=...)``, ``"serve"`` for ``export``,
``"serving_default"`` for ``tf.saved_model.save``) for inference, or a ``.keras`` save
for a Keras model with ``predict`` and ``fit``. The layer is printed as the fix only when
the cell does not go on to use the loaded object as a model (``.predict``/``.evaluate``
/``.fit``/``.summary``), which a layer does not have; otherwise both routes are told.
"""

from __future__ import annotations

import ast
import os
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import error_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_NOT_SUPPORTED = re.compile(r"File format not supported: filepath=(?P<path>[^\n]*?)\. Keras 3")
# The serving endpoint each writer makes: ``export`` "serve", ``saved_model.save`` the
# default signature.
_ENDPOINTS = {"export": "serve", "save": "serving_default"}
_MODEL_METHODS = frozenset({"predict", "evaluate", "fit", "summary", "save", "compile"})


def _writer(path: str, context: ErrorContext) -> tuple[str, str] | None:
    """The call of the cells that wrote ``path`` as a SavedModel, as written, and the
    serving endpoint it makes (``export`` -> "serve", ``saved_model.save`` ->
    "serving_default")."""
    for cell in error_cells(context):
        if path not in cell.source:
            continue
        tree = cell.tree()
        for node in ast.walk(tree) if tree is not None else ():
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if not any(isinstance(a, ast.Constant) and a.value == path for a in arguments):
                continue
            written = cell.segment(node)
            if not written or "\n" in written:
                continue
            kind = node.func.attr
            if kind == "save" and not (cell.segment(node.func) or "").endswith("saved_model.save"):
                continue
            if kind in _ENDPOINTS:
                return written, _ENDPOINTS[kind]
    return None


def _used_as_model(line: FailingLine, name: str) -> bool:
    tree = line.frame.tree()
    return tree is not None and any(
        isinstance(node, ast.Attribute)
        and node.attr in _MODEL_METHODS
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        for node in ast.walk(tree)
    )


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    path = error.group("path")
    call = line.call
    if not (isinstance(call, ast.Call) and call.args):
        return None
    name = getattr(call.func, "attr", None) or getattr(call.func, "id", None)
    if name != "load_model":
        return None
    writer = _writer(path, context)
    try:
        is_saved_model = os.path.isfile(os.path.join(path, "saved_model.pb"))
    except Exception:
        is_saved_model = False
    if writer is None and not is_saved_model:
        return None
    made = f"{code(writer[0])} wrote" if writer else "it holds"
    rule = (
        f"{code(repr(path))} is a TensorFlow SavedModel folder ({made} a `saved_model.pb` "
        "for serving), and Keras 3's `load_model` reads only Keras's own `.keras` files "
        "(and legacy `.h5`). To use the SavedModel, load it as a layer you call, "
        "`keras.layers.TFSMLayer(path, call_endpoint=...)` (inference only: no "
        "`predict` or `fit`); to get a Keras model back, save it with "
        '`model.save("name.keras")` and load that file'
    )
    statement = line.statement
    if writer is None or not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return Finding(rule + ".", None)
    target = statement.targets[0]
    if not isinstance(target, ast.Name) or _used_as_model(line, target.id):
        used = code(getattr(target, "id", "the result"))
        return Finding(
            rule + f". This cell goes on to use {used} as a model, which a TFSMLayer is not: "
            "keep the Keras model with the `.keras` save, or call the layer instead.",
            None,
        )
    written_path = line.frame.segment(call.args[0])
    if not written_path:
        return Finding(rule + ".", None)
    layer = f'keras.layers.TFSMLayer({written_path}, call_endpoint="{writer[1]}")'
    fixed = rewrite(line.frame, statement, call, layer)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + f". Call the layer on a batch, `{target.id}(x)`.", code(fixed))


SAVED_MODEL_FOLDER = ErrorFamily(
    "a SavedModel folder given to load_model",
    messages=(Message(_NOT_SUPPORTED),),
    exception_type="ValueError",
    read=_read,
    section="keras-saving",
)
