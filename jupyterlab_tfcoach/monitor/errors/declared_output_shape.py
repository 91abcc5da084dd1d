"""A custom layer whose ``compute_output_shape`` says another shape than its ``call``
gives (issue #25): ``return input_shape`` in a layer whose ``call`` concatenates, pools or
projects.

Keras builds a functional model symbolically from ``compute_output_shape`` when the layer
defines one, so the next layer is built for the declared shape; when data flows, ``call``
gives its real shape and the next layer refuses it: ``Input 0 of layer 'dense' is
incompatible with the layer: expected axis -1 of input shape to have value 3, but received
input with shape (2, 6)``. The message reads like data of the wrong width, but the data
given to the model has the width its ``Input`` declares. The reading claims it only then:
the data on the failing line matches the model's input on that axis, the refusing layer
(found by the message's name among the model's layers, read through Keras) comes right
after a layer of the learner's class that defines ``compute_output_shape`` itself. The
entry names that method, the shape it declared (what the refusing layer was built for)
and the one ``call`` gave; the fix returns the real last axis, as a multiple of the input's
when it is one. Nothing of the learner's runs: shapes come from the message and from what
Keras stored.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    built_input_shape,
    model_input_shapes,
    show_shape,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    Finding,
    Recognised,
    operand_of,
    shape_list,
)
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, library_attribute

_type_name = type.__dict__["__name__"].__get__
_MAX_LAYERS = 500
_RECEIVED = re.compile(r"inputs=tf\.Tensor\(shape=\((?P<shape>[^)]*)\)")


def _own_method(cls: type, name: str) -> bool:
    """Whether the first class of ``cls``'s MRO defining ``name`` is the learner's."""
    for klass in type.__dict__["__mro__"].__get__(cls):
        if name in vars(klass):
            return not is_library_class(klass)
    return False


def _layer_before(model: Any, name: str) -> tuple[Any, Any] | None:
    """The layer named ``name`` in ``model`` and the layer just before it."""
    layers = library_attribute(model, "layers")
    if type(layers) is not list or len(layers) > _MAX_LAYERS:
        return None
    for index, layer in enumerate(layers):
        if library_attribute(layer, "name") == name:
            return (layers[index - 1], layer) if index > 0 else None
    return None


def declared_output_finding(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not (isinstance(call, ast.Call) and call.args and error.group("axis") == "-1"):
        return None
    model_node = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    model = operand_of(model_node, line, context)
    data = operand_of(call.args[0], line, context)
    data_shape = data.shape if data is not None else None
    if data_shape is None:
        # Data written in the call (``np.ones((2, 3))``): Keras lists what it received.
        listed = _RECEIVED.search(error.parsed.full_message or error.parsed.message or "")
        data_shape = shape_list(listed.group("shape")) if listed is not None else None
    data_source = line.frame.segment(call.args[0]) or "the data"
    received = shape_list(error.group("given"))
    if model is None or model.kind != "model" or not data_shape or "\n" in data_source:
        return None
    if received is None or received[-1] is None:
        return None
    found = _layer_before(model.value, error.group("layer"))
    if found is None:
        return None
    upstream, refusing = found
    cls = type(upstream)
    if is_library_class(cls) or not _own_method(cls, "compute_output_shape"):
        return None
    upstream_input = built_input_shape(upstream)
    declared = built_input_shape(refusing)
    wanted = int(error.group("value"))
    if upstream_input is None or declared is None or declared[-1] != wanted:
        return None
    # The data fits the model's input: the width changed inside, at the upstream layer.
    inputs = model_input_shapes(model.value)
    if len(inputs) != 1 or inputs[0][-1] is None or inputs[0][-1] != data_shape[-1]:
        return None
    real, width = received[-1], upstream_input[-1]
    name = _type_name(cls)
    method = f"{name}.compute_output_shape"
    rule = (
        f"the data fits {code(model.source)} ({code(data_source)} is {show_shape(data_shape)}); "
        f"the width changes inside it. {code(method)} told Keras its output is "
        f"{show_shape(declared)}, so the next layer was built for {wanted} features, but "
        f"{code(name + '.call')} gives {show_shape(received)}: the model was built from the "
        f"declared shape, and the data meets the real one"
    )
    if width is not None and width > 0 and real % width == 0 and real != width:
        last = f"{real // width} * input_shape[-1]"
    else:
        last = str(real)
    fixed = f"return (*input_shape[:-1], {last})"
    fix = (
        f"make {code(method)} return the shape {code(name + '.call')} gives, "
        f"{code(fixed)}, then build the model again"
    )
    return Finding(rule + ".", fix, section="functional-api")
