"""A parameter stored as a plain tensor in a tf.Module or Keras layer: it never learns.

``self.b = tf.zeros((units,))`` in ``__init__`` stores a constant: it is not a variable,
so it is not in the object's ``trainable_variables``, the tape gives it no gradient and
it keeps its initial value while the object's variables train. Told after a cell whose
custom loop trained some variables (``training_symptoms``), for the objects that hold
them (found through what TensorFlow and Keras store, ``stored_state``; no user property
runs), from their class's source read with ``ast``.

A tensor attribute is told only when the class's own code shows it is a parameter
that was meant to learn:

- it is made by ``zeros``/``ones``/``zeros_like``/``ones_like``/``fill`` (a constant
  made from data, ``tf.constant(mask)``, or a fixed random projection is deliberate);
- the class's ``call``/``__call__`` uses it as an operand of ``+``, ``-``, ``*``, ``@``
  or ``matmul`` (adding zeros or multiplying by ones is a no-op unless the value learns;
  zeros used as padding in a ``concat`` are not an operand).

The fix wraps what the user wrote: ``tf.Variable(<their expression>)`` for a tf.Module,
``self.add_weight(shape=..., initializer="zeros")`` for a Keras layer (Keras 3 layers do
not track a ``tf.Variable``).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    library_attribute,
)
from jupyterlab_tfcoach.monitor.variables.kinds import KERAS_LAYER, KERAS_MODEL, TENSOR

SECTION = "parameters-are-variables"
_CONSTANT_MAKERS = frozenset({"zeros", "ones", "zeros_like", "ones_like", "fill"})
_KERAS_INITIALIZERS = {"zeros": "zeros", "ones": "ones"}
_CALL_METHODS = ("call", "__call__")
_MAX_CLASSES = 6
_MAX_ATTRIBUTES = 200


@dataclass
class ConstantParameter:
    holder: str  # how the user reaches the object: "lin"
    class_name: str  # "Linear"
    attribute: str  # "b"
    method: str  # the method that stores it: "__init__"
    statement: str  # "self.b = tf.zeros((out_dim,))"
    fix: str  # "self.b = tf.Variable(tf.zeros((out_dim,)))"


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def _is_self_attribute(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _methods(cls: type) -> list[tuple[str, ast.FunctionDef, str]]:
    """(name, definition, source) of the methods the user's classes in ``cls``'s MRO
    define (library classes are left out)."""
    found: list[tuple[str, ast.FunctionDef, str]] = []
    for klass in cls.__mro__[:_MAX_CLASSES]:
        if is_library_class(klass):
            continue
        try:
            members = dict(vars(klass))
        except Exception:
            continue
        for name, member in members.items():
            if type(member) is not types.FunctionType:
                continue
            code = member.__code__
            try:
                lines = linecache.getlines(code.co_filename)
                block = inspect.getblock(lines[code.co_firstlineno - 1 :])
                source = textwrap.dedent("".join(block))
                tree = ast.parse(source)
            except Exception:
                continue
            definition = tree.body[0] if tree.body else None
            if isinstance(definition, ast.FunctionDef):
                found.append((name, definition, source))
    return found


def _used_as_operand(definition: ast.FunctionDef, attribute: str) -> bool:
    for node in ast.walk(definition):
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, ast.Add | ast.Sub | ast.Mult | ast.MatMult
        ):
            if _is_self_attribute(node.left, attribute) or _is_self_attribute(
                node.right, attribute
            ):
                return True
        if (
            isinstance(node, ast.Call)
            and _callee(node) in ("matmul", "tensordot", "multiply", "add")
            and any(_is_self_attribute(a, attribute) for a in node.args)
        ):
            return True
    return False


def _stored_constant(
    methods: list[tuple[str, ast.FunctionDef, str]], attribute: str
) -> tuple[str, ast.Call, str] | None:
    """(method, the constant-making call, the source) of ``self.<attribute> = tf.zeros(...)``."""
    for name, definition, source in methods:
        for node in ast.walk(definition):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and _is_self_attribute(node.targets[0], attribute)
                and isinstance(node.value, ast.Call)
                and _callee(node.value) in _CONSTANT_MAKERS
            ):
                return name, node.value, source
    return None


def _segment(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node)
    return " ".join((text if text is not None else ast.unparse(node)).split())


def _fix(attribute: str, call: ast.Call, source: str, keras_layer: bool) -> str | None:
    made = _segment(source, call)
    if not keras_layer:
        return f"self.{attribute} = tf.Variable({made})"
    initializer = _KERAS_INITIALIZERS.get(_callee(call) or "")
    shape = call.args[0] if call.args else None
    if initializer is None or shape is None:
        return None
    return (
        f"self.{attribute} = self.add_weight(shape={_segment(source, shape)}, "
        f'initializer="{initializer}")'
    )


def _is_float_tensor(value: Any, kind_of: Callable[[Any], str | None]) -> bool:
    if kind_of(value) != TENSOR:
        return False
    dtype = library_attribute(value, "dtype")
    name = dtype if type(dtype) is str else library_attribute(dtype, "name", "")
    return type(name) is str and name.startswith(("float", "bfloat"))


def constant_parameters(
    holders: list[tuple[str, Any]], kind_of: Callable[[Any], str | None]
) -> list[ConstantParameter]:
    """Plain-tensor parameters of these objects (``(label, object)``, the objects that
    hold the variables that trained)."""
    found: list[ConstantParameter] = []
    for label, owner in holders:
        attributes = instance_dict(owner)
        if attributes is None:
            continue
        tensors = [
            name
            for name, value in list(attributes.items())[:_MAX_ATTRIBUTES]
            if type(name) is str and not name.startswith("_") and _is_float_tensor(value, kind_of)
        ]
        if not tensors:
            continue
        methods = _methods(type(owner))
        calls = [definition for name, definition, _ in methods if name in _CALL_METHODS]
        keras_layer = kind_of(owner) in (KERAS_LAYER, KERAS_MODEL)
        for attribute in tensors:
            if not any(_used_as_operand(definition, attribute) for definition in calls):
                continue
            stored = _stored_constant(methods, attribute)
            if stored is None:
                continue
            method, call, source = stored
            fix = _fix(attribute, call, source, keras_layer)
            if fix is None:
                continue
            found.append(
                ConstantParameter(
                    holder=label,
                    class_name=type(owner).__name__,
                    attribute=attribute,
                    method=method,
                    statement=f"self.{attribute} = {_segment(source, call)}",
                    fix=fix,
                )
            )
    return found
