"""A layer or model given where its tensor is needed (issue #25):
``keras.Model(inputs=net.input, outputs=net.get_layer("conv_a"))``, ``outputs=[dense_1,
dense_2]``, ``inputs=backbone``.

Keras says ``All `outputs` values must be KerasTensors`` and shows the object it got: a
layer (or model) object. A functional model is built from the symbolic tensors its layers
produced when the graph was made, not from the layers: a built layer's result is its
``.output`` (a model's inputs, ``.input``). The reading finds, in the argument Keras
names, each value that is a layer or model object (a ``get_layer(...)`` call, or a name
holding one) and appends ``.output`` (``.input`` for ``inputs``) to each.

The same object given to a TensorFlow op (``Attempt to convert a value (<Dense ...>)``) or
among a layer call's tensors (``Only input tensors may be passed as positional
arguments``) is named as a layer, not a tensor; the ``.output`` fix is printed only where
the line works on Keras symbolic tensors and the layer was already called in the graph
(on real values the layer has to be called on them, which the entry says without a fix).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    class_mro,
    code,
    instance_attribute,
    rewrite_all,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_NOT_KERAS_TENSORS = re.compile(
    r"All `(?P<argument>inputs|outputs)` values must be KerasTensors\. Received: .*?"
    r"of type <class '(?P<type>[\w.]+)'>",
    re.S,
)
# A layer object given to a TensorFlow op or among a layer call's tensors.
_CONVERTED = re.compile(
    r"Attempt to convert a value \(<\w+ name=[^>]*>\) with an unsupported type "
    r"\(<class '(?P<type>keras\.[\w.]+)'>\) to a Tensor"
)
_POSITIONAL = re.compile(
    r"Only input tensors may be passed as positional arguments\. The following argument "
    r"value should be passed as a keyword argument: <\w+ name="
)
_LAYER_GETTERS = ("get_layer",)
_POSITION = {"inputs": 0, "outputs": 1}


def _is_layer(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _LAYER_GETTERS
    ):
        return True
    found, value = value_of(node, line.frame, context)
    if not found:
        return False
    return any(
        cls.__name__ == "Layer" and cls.__module__.startswith("keras") for cls in class_mro(value)
    )


def _argument(call: ast.Call, argument: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == argument:
            return keyword.value
    position = _POSITION[argument]
    return call.args[position] if len(call.args) > position else None


def _read_layer_as_tensor(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None:
        return None
    if not error.matched(_NOT_KERAS_TENSORS):
        return _layer_among_tensors(line, context)
    if not error.group("type").startswith("keras."):
        return None
    argument = error.group("argument")
    given = _argument(call, argument)
    if given is None:
        return None
    elements = (
        list(given.elts)
        if isinstance(given, (ast.List, ast.Tuple))
        else list(given.values)
        if isinstance(given, ast.Dict)
        else [given]
    )
    layers = [node for node in elements if _is_layer(node, line, context)]
    if not layers:
        return None
    attribute = "output" if argument == "outputs" else "input"
    shown = ", ".join(code(line.frame.segment(node) or "") for node in layers[:3])
    rule = (
        f"{shown} {'is a layer object' if len(layers) == 1 else 'are layer objects'}, not "
        f"{'a tensor' if len(layers) == 1 else 'tensors'}: a functional model is built "
        "from the symbolic tensors its layers produced when the graph was made, so "
        f"`{argument}` takes the layer's result, its `.{attribute}`"
    )
    replacements = []
    for node in layers:
        source = line.frame.segment(node)
        if not source or "\n" in source:
            return Finding(rule + ".", None, section="functional-api")
        replacements.append((node, f"{source}.{attribute}"))
    fixed = rewrite_all(line.frame, line.statement, replacements)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _called_already(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    """Whether the layer ``node`` names was called in a functional graph (it has a
    ``.output``): a ``get_layer`` of a model, or a layer with inbound nodes."""
    if isinstance(node, ast.Call):
        return True
    found, value = value_of(node, line.frame, context)
    if not found:
        return False
    present, nodes = instance_attribute(value, "_inbound_nodes")
    return present and type(nodes) is list and bool(nodes)


def _layer_among_tensors(line: FailingLine, context: ErrorContext) -> Finding | None:
    """A layer object given to a TensorFlow op (``tf.nn.relu(dense)``) or in a layer
    call's list of tensors (``Concatenate()([h, net.get_layer("h")])``). Among Keras
    symbolic tensors, a layer already called in the graph gives its ``.output``; given to
    an op on real values, the layer must be called on them: the cause only."""
    arguments: list[ast.expr] = []
    call = line.call
    for node in [*call.args, *(k.value for k in call.keywords)]:  # type: ignore[union-attr]
        arguments.extend(node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node])
    layers = [node for node in arguments if _is_layer(node, line, context)]
    if len(layers) != 1:
        return None
    layer = layers[0]
    written = line.frame.segment(layer) or ""
    if not written or "\n" in written:
        return None
    symbolic = any(type(operand.value).__name__ == "KerasTensor" for operand in line.operands)
    rule = (
        f"{code(written)} is a layer object, not a tensor: a layer's result is what calling "
        "it on a tensor returns"
    )
    if not symbolic or not _called_already(layer, line, context):
        return Finding(rule + ".", None, section="functional-api")
    rule += ", and in a functional model a layer already called gives it as its `.output`"
    fixed = rewrite_all(line.frame, line.statement, [(layer, f"{written}.output")])
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


LAYER_AS_TENSOR = ErrorFamily(
    "a layer or model given where its tensor is needed",
    messages=(Message(_NOT_KERAS_TENSORS), Message(_CONVERTED), Message(_POSITIONAL)),
    read=_read_layer_as_tensor,
    section="functional-api",
)
