"""A TensorFlow function called on a Keras functional model's symbolic tensors (issue #25).

``l1 = tf.abs(emb_a - emb_b)`` between ``keras.Input`` and ``keras.Model``: Keras 3's
inputs and layer outputs there are ``KerasTensor`` placeholders (a shape and a dtype, no
value) that only Keras layers and ``keras.ops`` functions take; a ``tf.`` function
refuses them (``A KerasTensor cannot be used as input to a TensorFlow function``).
tf.keras 2 wrapped such calls in layers by itself, so older tutorials write them.

Read from the failing line: each ``tf.<name>(...)`` call (its root name holds the
``tensorflow`` module) and the names on the line that hold KerasTensors. The fix is the
line with each such call that reads a KerasTensor rewritten:

- as ``keras.ops``'s function of the same work when the kernel's ``keras.ops`` has one: the
  name ``_KERAS_OPS_NAMES`` gives (``tf.reduce_mean`` is ``keras.ops.mean``), else the
  TensorFlow name's last part (``tf.nn.depth_to_space`` is ``keras.ops.depth_to_space``),
  taken only when its signature takes the call's positional arguments and keywords, and
  neither the name nor a keyword is one whose values the two libraries spell otherwise
  (``tf.split``'s sizes are ``keras.ops.split``'s indices; ``data_format="NHWC"``);
- else wrapped in a ``Lambda`` layer that runs the learner's own call on real tensors when
  the model runs: ``layers.Lambda(lambda x: tf.image.rgb_to_yuv(x))(x)`` (the lambda's
  parameter takes the symbolic name, so the call reads as written), or, for a call of
  several symbolic names, ``layers.Lambda(lambda t: f(t[0], t[1]))([a, b])``.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from types import ModuleType

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    rewrite_all,
    value_kind,
)
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


# TensorFlow functions whose ``keras.ops`` namesake reads its arguments otherwise:
# ``tf.split``'s list is sizes (keras.ops's indices), ``tf.shape`` is a tensor (a tuple of
# Nones there), ``tf.sort``'s and ``tf.norm``'s options differ.
_OTHER_MEANING = frozenset({"split", "shape", "sort", "argsort", "norm", "gather", "pad"})
# Keywords both libraries take whose values they spell otherwise ("NHWC"/"channels_last").
_OTHER_VALUES = frozenset({"data_format", "mode", "method", "padding", "direction", "ord"})
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
# The lambda's parameter for a call of several symbolic names, the first the call does
# not already use.
_LAMBDA_PARAMETERS = ("t", "ts", "tensors", "parts")


def _ops_module() -> ModuleType | None:
    module = sys.modules.get("keras.ops") or sys.modules.get("keras.api.ops")
    return module if isinstance(module, ModuleType) else None


def _ops_function(path: str, call: ast.Call, ops: ModuleType) -> str | None:
    """``keras.ops``'s name for the TensorFlow function at ``path`` when it does the same
    work with the call's arguments as written, else None."""
    name = _KERAS_OPS_NAMES.get(path)
    if name is None:
        last = path.rpartition(".")[2]
        if last in _OTHER_MEANING:
            return None
        name = last
    function = vars(ops).get(name)
    if not callable(function):
        return None
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters.values() if p.kind in _POSITIONAL]
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    if len(call.args) > len(positional):
        return None
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in parameters or keyword.arg in _OTHER_VALUES:
            return None
    return name


def _symbolic_names(node: ast.AST, symbolic: list[str]) -> list[ast.Name]:
    return [
        name
        for name in ast.walk(node)
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load) and name.id in symbolic
    ]


def _layers_prefix(context: ErrorContext) -> str | None:
    """How the learner's namespace reaches Keras's layers: ``layers`` (``from keras
    import layers``), ``keras.layers``, ``tf.keras.layers``; None when it does not."""
    for module_name in ("keras.layers", "keras.api.layers"):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name, value in context.namespace.items():
            if value is module and type(name) is str and not name.startswith("_"):
                return name
    keras = sys.modules.get("keras")
    if keras is not None:
        alias = context.module_alias("keras", "keras")
        if context.namespace.get(alias) is keras:
            return f"{alias}.layers"
    tensorflow = sys.modules.get("tensorflow")
    if tensorflow is not None:
        alias = context.module_alias("tensorflow", "tf")
        if context.namespace.get(alias) is tensorflow:
            return f"{alias}.keras.layers"
    return None


def _in_a_layer(frame: CellFrame, call: ast.Call, names: list[ast.Name], prefix: str) -> str | None:
    """The call wrapped in a ``Lambda`` layer applied to its symbolic names."""
    written = frame.segment(call)
    if not written or "\n" in written:
        return None
    distinct = list(dict.fromkeys(name.id for name in names))
    if len(distinct) == 1:
        # The lambda's parameter is the symbolic name: inside, the call reads as written.
        return f"{prefix}.Lambda(lambda {distinct[0]}: {written})({distinct[0]})"
    used = {node.id for node in ast.walk(call) if isinstance(node, ast.Name)}
    parameter = next((p for p in _LAMBDA_PARAMETERS if p not in used), None)
    if parameter is None:
        return None
    body = rewrite_all(
        frame, call, [(name, f"{parameter}[{distinct.index(name.id)}]") for name in names]
    )
    if not body or "\n" in body:
        return None
    return f"{prefix}.Lambda(lambda {parameter}: {body})([{', '.join(distinct)}])"


def _rewritten(
    line: FailingLine,
    context: ErrorContext,
    calls: list[tuple[ast.Call, str]],
    symbolic: list[str],
) -> tuple[str, list[str], list[str]] | None:
    """(the fixed statement, the ``keras.ops`` functions it uses, the TensorFlow calls it
    puts in a layer), or None when it cannot be written on one line."""
    statement = line.statement
    ops = _ops_module()
    if statement is None or ops is None:
        return None
    keras = context.module_alias("keras", "keras")
    places: list[tuple[ast.AST, str]] = []
    used: list[str] = []
    wrapped: list[str] = []
    inside: set[int] = set()
    for call, path in calls:  # outermost first: ast.walk visits a call before its arguments
        if id(call) in inside:
            continue
        names = _symbolic_names(call, symbolic)
        if not names:
            continue  # a TensorFlow call on real values is TensorFlow's to run
        name = _ops_function(path, call, ops)
        if name is not None:
            places.append((call.func, f"{keras}.ops.{name}"))
            used.append(f"{keras}.ops.{name}")
            continue
        prefix = _layers_prefix(context)
        layer = _in_a_layer(line.frame, call, names, prefix) if prefix else None
        if layer is None:
            return None
        places.append((call, layer))
        wrapped.append(line.frame.segment(call.func) or path)
        inside.update(id(node) for node in ast.walk(call))
    if not places:
        return None
    fixed = rewrite_all(line.frame, statement, places)
    if not fixed or "\n" in fixed:
        return None
    try:
        ast.parse(fixed)
    except SyntaxError:
        return None
    return fixed, used, wrapped


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
        "(tf.keras 2 wrapped it in a layer by itself; Keras 3 does not)"
    )
    found = _rewritten(line, context, calls, symbolic)
    if found is None:
        return Finding(
            rule + ". Use `keras.ops`'s function of the same work where it has one, or put "
            "the TensorFlow call in a layer: a `keras.layers.Lambda` whose function runs it, "
            "or a small layer of your own whose `call` runs it.",
            None,
        )
    fixed, used, wrapped = found
    advice = []
    if used:
        names = list(dict.fromkeys(used))
        listed = ", ".join(code(name) for name in names)
        one = len(names) == 1
        advice.append(
            f"{listed} {'is' if one else 'are'} Keras's function{'' if one else 's'} of the "
            f"same work: {'it takes' if one else 'they take'} KerasTensors and "
            f"{'builds' if one else 'build'} a step of the model (keeping the TensorFlow "
            "call inside a `Lambda` layer, which runs it on real tensors, works too)"
        )
    if wrapped:
        listed = ", ".join(code(name) for name in dict.fromkeys(wrapped))
        advice.append(
            f"`keras.ops` has no function of the same work for {listed}, so the call goes "
            "in a layer: a `Lambda` layer runs it on real tensors each time the model runs "
            "(a small layer of your own whose `call` runs it does the same, and saves with "
            "the model without the Lambda's code)"
        )
    return Finding(rule + ". " + "; ".join(advice) + ".", code(fixed))


KERAS_TENSOR_IN_TF = ErrorFamily(
    "a TensorFlow function given a functional model's symbolic tensors",
    messages=(Message(_KERAS_TENSOR_IN_TF),),
    read=_read_keras_tensor,
    section=SECTION,
    exception_type="ValueError",
)
