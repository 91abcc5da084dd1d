"""What a binding or an expression holds (a ``Value``), inferred lazily, on a rule's demand.

A name read gets the values of the bindings that may reach it (``resolution.py`` finds
them) merged; values that disagree merge into ``UNKNOWN``, and rules stay silent on those.
A call gets what ``api_results.py`` says its TensorFlow API returns; ``self.attr`` the
values of the class's ``self.attr = ...`` bindings. Each binding's value is computed once
and cached; a binding met again while its own value is computed (``w = f(w)`` through
a cycle) or past ``_MAX_DEPTH`` nested inferences is unknown.

``Bindings`` is what a rule's context holds for one file: ``names`` (``resolution.py``:
which bindings a name or attribute may refer to), ``traced`` (``traced.py``: which code a
tf.function's trace runs) and the inference below. ``lookup.py`` asks it too, at a cursor.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.analysis.api_results import (
    CONTAINER_BUILTINS,
    KERAS_LOSSES,
    LOSS_OBJECT_RESULT,
    METHOD_RESULTS,
    ApiCall,
    arithmetic_result,
    result_row,
)
from jupyterlab_tfcoach.analysis.model import Binding, Model, Path, Scope
from jupyterlab_tfcoach.analysis.resolution import MAX_REACHING, NameResolver
from jupyterlab_tfcoach.analysis.traced import TracedCode
from jupyterlab_tfcoach.analysis.values import (
    FUNCTION,
    KERAS_LOSS,
    PY_BOOL,
    PY_CONTAINER,
    PY_NONE,
    PY_NUMBER,
    TAPE,
    TENSOR,
    UNKNOWN,
    Value,
    merge_values,
)

_MAX_DEPTH = 40

# ``origin`` of a Python container value: which builtin type it is.
_CONTAINER_LITERALS: dict[type, str] = {
    ast.List: "list",
    ast.ListComp: "list",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
}


class Bindings:
    """Lazy value inference over a ``Model``, with its name resolution and traced code."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.imports = model.imports
        self.names = NameResolver(model)
        self.traced = TracedCode(model, self.names)
        self._resolve = self.names.resolve  # once per name read: one attribute lookup less
        self._binding_values: dict[int, Value] = {}
        self._in_progress: set[int] = set()
        self._loss_objects: frozenset[str] | None = None

    # -- bindings -------------------------------------------------------------

    def binding_value(self, binding: Binding, depth: int = 0) -> Value:
        key = id(binding)
        cached = self._binding_values.get(key)
        if cached is not None:
            return cached
        if key in self._in_progress or depth > _MAX_DEPTH:
            return UNKNOWN
        self._in_progress.add(key)
        try:
            value = self._compute_binding_value(binding, depth)
        finally:
            self._in_progress.discard(key)
        self._binding_values[key] = value
        return value

    def _compute_binding_value(self, binding: Binding, depth: int) -> Value:
        kind = binding.kind
        if kind == "def":
            node = binding.node
            decorated = self.traced.tf_function_defs().get(node)
            # Only a decorator makes the *name* a tf.function; ``step = tf.function(f)``
            # leaves ``f`` itself a plain Python function.
            if decorated is not None and decorated.creator in node.decorator_list:  # type: ignore[attr-defined]
                return decorated
            return Value(FUNCTION, node=node)
        if binding.value is None:
            return UNKNOWN
        scope, path = binding.value_scope, binding.path
        if kind == "assign":
            return self.infer(binding.value, scope, path, depth + 1)
        if kind == "with":
            value = self.infer(binding.value, scope, path, depth + 1)
            return value if value.kind == TAPE else UNKNOWN  # ``__enter__`` returns the tape
        if kind == "augassign":
            value = self.infer(binding.value, scope, path, depth + 1)
            statement = binding.node
            assert isinstance(statement, ast.AugAssign)
            target = self.infer(statement.target, scope, path, depth + 1)
            return arithmetic_result(target, value, statement.op)
        return UNKNOWN

    # -- expressions ----------------------------------------------------------

    def infer(self, node: ast.AST, scope: Scope, path: Path, depth: int = 0) -> Value:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        # Exact type tests, most frequent first: node types are disjoint, so the order
        # does not change the result, only how many tests a common node goes through.
        node_type = type(node)
        if node_type is ast.Name:
            resolution = self._resolve(scope, node.id, (node.lineno, node.col_offset), path)  # type: ignore[attr-defined]
            if resolution is None:
                return UNKNOWN
            bindings = resolution.bindings
            if len(bindings) == 1:  # the usual case: no list to build and merge
                return self.binding_value(bindings[0], depth + 1)
            return merge_values([self.binding_value(b, depth + 1) for b in bindings])
        if node_type is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, bool):
                return Value(PY_BOOL)
            if isinstance(value, (int, float)):
                return Value(PY_NUMBER, number=value)
            if value is None:
                return Value(PY_NONE)
            return UNKNOWN
        if node_type is ast.Call:
            return self._call_value(node, scope, path, depth)  # type: ignore[arg-type]
        if node_type is ast.Attribute:
            return self._attribute_value(node, scope, path, depth)  # type: ignore[arg-type]
        if node_type is ast.BinOp:
            left = self.infer(node.left, scope, path, depth + 1)  # type: ignore[attr-defined]
            right = self.infer(node.right, scope, path, depth + 1)  # type: ignore[attr-defined]
            return arithmetic_result(left, right, node.op)  # type: ignore[attr-defined]
        if node_type is ast.UnaryOp:
            return self._unary_value(node, scope, path, depth)  # type: ignore[arg-type]
        if node_type is ast.Subscript:
            base = self.infer(node.value, scope, path, depth + 1)  # type: ignore[attr-defined]
            return Value(TENSOR, dtype=base.dtype) if base.is_tensor_like else UNKNOWN
        container = _CONTAINER_LITERALS.get(node_type)
        if container is not None:
            return Value(PY_CONTAINER, origin=container)
        return UNKNOWN

    def _unary_value(self, node: ast.UnaryOp, scope: Scope, path: Path, depth: int) -> Value:
        operand = self.infer(node.operand, scope, path, depth + 1)
        op = node.op
        if isinstance(op, ast.Not):
            return UNKNOWN
        if operand.kind == PY_NUMBER and operand.number is not None:
            if isinstance(op, ast.USub):
                return Value(PY_NUMBER, number=-operand.number)
            if isinstance(op, ast.UAdd):
                return operand
            return Value(PY_NUMBER)
        if operand.is_tensor_like:
            return Value(TENSOR, dtype=operand.dtype)
        return UNKNOWN

    def _attribute_value(self, node: ast.Attribute, scope: Scope, path: Path, depth: int) -> Value:
        instance_bindings = self.names.self_attribute_bindings(node, scope)
        function = scope.function
        if instance_bindings is None or function is None or function.class_scope is None:
            return UNKNOWN  # not ``self.<attr>`` inside a method
        # ``class C: count = 0`` is the default ``self.count`` starts from.
        class_bindings = function.class_scope.bindings.get(node.attr, ())
        if len(instance_bindings) + len(class_bindings) > MAX_REACHING:
            return UNKNOWN  # too many to merge at every read (see ``MAX_REACHING``)
        bindings = [*instance_bindings, *class_bindings]
        if not bindings:
            return UNKNOWN
        values = [self.binding_value(b, depth + 1) for b in bindings if not b.self_referential]
        # ``self.v = None`` placeholders guard a later creation; they are not a type.
        values = [v for v in values if v.kind != PY_NONE]
        return merge_values(values)

    # -- calls ----------------------------------------------------------------

    def _call_value(self, node: ast.Call, scope: Scope, path: Path, depth: int) -> Value:
        canonical = self.imports.resolve(node.func)
        if canonical is None:
            return self._local_call_value(node.func, scope, path, depth)
        row = result_row(canonical)
        if row is None:
            return UNKNOWN  # ``tf.matmul``, ``tf.keras.layers.Dense``: nothing known
        return row(ApiCall(node, canonical, scope, path, depth, self))

    def _local_call_value(self, func: ast.expr, scope: Scope, path: Path, depth: int) -> Value:
        """A call of something that is not a TensorFlow name: a known method, a Keras loss
        object, or a builtin container."""
        if isinstance(func, ast.Attribute) and func.attr in METHOD_RESULTS:
            return METHOD_RESULTS[func.attr]
        if self._called_loss_object(func, scope, path, depth):
            return LOSS_OBJECT_RESULT
        if isinstance(func, ast.Name) and func.id in CONTAINER_BUILTINS:
            if self.names.is_builtin(scope, func.id, (func.lineno, func.col_offset), path):
                return Value(PY_CONTAINER, origin=func.id)
        return UNKNOWN

    def _called_loss_object(self, func: ast.expr, scope: Scope, path: Path, depth: int) -> bool:
        """``loss_fn(y, p)`` with ``loss_fn = tf.keras.losses.X(...)``, or ``X(...)(y, p)``."""
        if isinstance(func, ast.Call):
            return self._call_value(func, scope, path, depth + 1).kind == KERAS_LOSS
        if isinstance(func, ast.Name):
            name = func.id
        elif isinstance(func, ast.Attribute):
            name = func.attr
        else:
            return False
        # Most calls are of names never bound to a loss object: no inference for those.
        if name not in self._loss_object_names():
            return False
        return self.infer(func, scope, path, depth + 1).kind == KERAS_LOSS

    def _loss_object_names(self) -> frozenset[str]:
        """Names (``loss_fn``) and ``self`` attributes bound to a Keras loss object anywhere."""
        if self._loss_objects is None:
            bindings = [
                *self.model.call_assignments,
                *(
                    binding
                    for scope in self.model.scopes
                    if scope.kind == "class"
                    for attr_bindings in scope.attr_bindings.values()
                    for binding in attr_bindings
                    if type(binding.value) is ast.Call
                ),
            ]
            names = set()
            resolve = self.imports.resolve
            for binding in bindings:
                func = binding.value.func  # type: ignore[union-attr]
                # Cheap test before resolving: ``losses.MeanSquaredError`` ends in a class
                # name (the ``mse`` function gives a tensor, not a loss object); a bare
                # name may be any alias.
                func_type = type(func)
                if func_type is ast.Attribute:
                    if not func.attr[:1].isupper():
                        continue
                elif func_type is not ast.Name:
                    continue
                if (resolve(func) or "").startswith(KERAS_LOSSES):
                    names.add(binding.name)
            self._loss_objects = frozenset(names)
        return self._loss_objects
