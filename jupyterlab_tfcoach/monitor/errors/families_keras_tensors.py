"""A TensorFlow function called on a Keras functional model's symbolic tensors (issue #25).

``l1 = tf.abs(emb_a - emb_b)`` between ``keras.Input`` and ``keras.Model``: Keras 3's
inputs and layer outputs there are ``KerasTensor`` placeholders (a shape and a dtype, no
value) that only Keras layers and ``keras.ops`` functions take; a ``tf.`` function
refuses them (``A KerasTensor cannot be used as input to a TensorFlow function``).
tf.keras 2 wrapped such calls in layers by itself, so older tutorials write them.

Read from the failing line: each ``tf.<name>(...)`` call (its root name holds the
``tensorflow`` module) and the names on the line that hold KerasTensors. The fix is the
line with each such function written as ``keras.ops``'s function of the same work (the
same name, or the one ``_KERAS_OPS_NAMES`` gives: ``tf.reduce_mean`` is
``keras.ops.mean``), checked against the ``keras.ops`` module the kernel has loaded; a
function without one gets the rule (a ``Lambda`` layer, or a layer of its own) only.
"""

from __future__ import annotations

import ast
import re
import sys
from types import ModuleType

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite_all, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "functional-api"
_KERAS_TENSOR_IN_TF = re.compile(r"A KerasTensor cannot be used as input to a TensorFlow function")
# TensorFlow's name -> keras.ops's, where they differ (keras.ops keeps NumPy's names).
_KERAS_OPS_NAMES = {
    "reduce_mean": "mean",
    "reduce_sum": "sum",
    "reduce_max": "max",
    "reduce_min": "min",
    "reduce_prod": "prod",
    "reduce_std": "std",
    "reduce_variance": "var",
    "reduce_logsumexp": "logsumexp",
    "concat": "concatenate",
    "math.abs": "abs",
    "math.log": "log",
    "math.exp": "exp",
    "math.sqrt": "sqrt",
    "math.square": "square",
    "math.maximum": "maximum",
    "math.minimum": "minimum",
    "math.reduce_mean": "mean",
    "math.reduce_sum": "sum",
    "math.l2_normalize": "normalize",
    "nn.l2_normalize": "normalize",
    "nn.relu": "relu",
    "nn.sigmoid": "sigmoid",
    "nn.softmax": "softmax",
    "nn.tanh": "tanh",
    "clip_by_value": "clip",
    "multiply": "multiply",
    "subtract": "subtract",
    "add": "add",
    "divide": "divide",
}


def _tensorflow_calls(line: FailingLine, context: ErrorContext) -> list[tuple[ast.Call, str]]:
    """Each ``tf.<path>(...)`` call of the failing statement, with its path after the
    module (``abs``, ``math.log``)."""
    found: list[tuple[ast.Call, str]] = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            path: list[str] = []
            root: ast.expr = node.func
            while isinstance(root, ast.Attribute):
                path.insert(0, root.attr)
                root = root.value
            if not isinstance(root, ast.Name):
                continue
            known, module = context.lookup(root.id, line.frame)
            if not known or not isinstance(module, ModuleType):
                continue
            name = str(vars(module).get("__name__") or "")
            if name.partition(".")[0] != "tensorflow":
                continue
            found.append((node, ".".join(path)))
    return found


def _keras_tensor_names(line: FailingLine, context: ErrorContext) -> list[str]:
    names: list[str] = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                known, value = context.lookup(node.id, line.frame)
                if known and value_kind(value) == "keras_tensor" and node.id not in names:
                    names.append(node.id)
    return names


def _ops_module() -> ModuleType | None:
    module = sys.modules.get("keras.ops") or sys.modules.get("keras.api.ops")
    return module if isinstance(module, ModuleType) else None


def _read_keras_tensor(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error  # recognised by its message; the rest is read from the line
    calls = _tensorflow_calls(line, context)
    symbolic = _keras_tensor_names(line, context)
    if not calls or not symbolic:
        return None
    shown = ", ".join(code(name) for name in symbolic[:4])
    written = [code(line.frame.segment(call.func) or path) for call, path in calls]
    functions = (
        f"{written[0]} is TensorFlow's function, which only takes"
        if len(written) == 1
        else f"{', '.join(written[:-1])} and {written[-1]} are TensorFlow's functions, which "
        "only take"
    )
    verb = "hold" if len(symbolic) > 1 else "holds"
    rule = (
        f"{shown} {verb} Keras symbolic tensors (KerasTensors: a shape and a dtype, no value): "
        "between `keras.Input` and `keras.Model`, a functional model is drawn from Keras "
        f"layers and `keras.ops` functions, and {functions} real tensors "
        "(tf.keras 2 wrapped it in a layer by itself; Keras 3 does not). Use "
        "`keras.ops`'s function of the same work (it builds a step of the model), or put "
        "the TensorFlow code in a layer of your own"
    )
    ops = _ops_module()
    keras = context.module_alias("keras", "keras")
    statement = line.statement
    if ops is None or statement is None:
        return Finding(rule + ".", None)
    places: list[tuple[ast.AST, str]] = []
    for call, path in calls:
        name = _KERAS_OPS_NAMES.get(path, path)
        if "." in name or not callable(vars(ops).get(name)):
            return Finding(rule + ".", None)
        places.append((call.func, f"{keras}.ops.{name}"))
    fixed = rewrite_all(line.frame, statement, places)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


KERAS_TENSOR_IN_TF = ErrorFamily(
    "a TensorFlow function given a functional model's symbolic tensors",
    messages=(Message(_KERAS_TENSOR_IN_TF),),
    read=_read_keras_tensor,
    section=SECTION,
    exception_type="ValueError",
)
