"""What a name or ``self.attr`` is bound to at a given point, evaluated lazily.

Name resolution follows Python's scoping: a name bound anywhere in a function
is local to it (unless declared ``global`` / ``nonlocal``); class bodies are
skipped by nested functions; comprehensions have their own scope for their
loop targets but otherwise run in place.

*Where* the lookup happens decides how precise it can be:

- in the scope that binds the name, it is flow-sensitive: the last binding
  before the use, plus earlier ones when that binding sits in a block the use
  is not in (an ``if`` branch, a loop body, a ``try``), until one that always
  runs is found;
- from a nested function (or via ``global``), the function may run at any
  time, so every binding of the name counts, except the ones derived from the
  name itself (``w = w - 1``), which can only repeat what it already was.

Values that disagree merge into ``UNKNOWN``: rules stay silent on those.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass
from typing import NamedTuple

from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.model import Binding, Model, Path, Position, Scope, Site

INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "half", "double"})
_DTYPE_ALIASES = {"half": "float16", "double": "float64"}
KNOWN_DTYPES = INT_DTYPES | FLOAT_DTYPES | {"bool", "string", "complex64", "complex128"}

# Kinds of values the analysis tells apart.
UNKNOWN_KIND = "unknown"
VARIABLE = "variable"  # tf.Variable / Keras add_weight
TENSOR = "tensor"  # an eager or symbolic tensor
TAPE = "tape"  # tf.GradientTape
TF_FUNCTION = "tf_function"  # a tf.function object
FUNCTION = "function"  # a plain ``def``
PY_NUMBER = "py_number"  # a Python int or float (never bool)
PY_BOOL = "py_bool"
PY_CONTAINER = "py_container"  # list / dict / set
PY_NONE = "py_none"
KERAS_LOSS = "keras_loss"  # an instance of a ``tf.keras.losses`` class: calling it gives a loss

_MAX_DEPTH = 40

# A read that more bindings than this may reach (a name rebound in thousands of ``if``
# branches, from thousands of functions, or ``self.w`` in thousands of methods) resolves
# to one ``UNRESOLVED`` binding: its value is unknown, so no rule reports on it. Finding
# and merging them all would cost time proportional to their number at every read, which
# makes such a file quadratic (2,000 if/else rebinds took 6 s).
MAX_REACHING = 16
# How many of a name's bindings a read may step over (bound later, or from another scope
# via ``global``) before it gives up the same way.
_MAX_SCANNED = 64
# ``Binding.kind`` of that stand-in: every rule treats an unknown kind as unknown.
UNRESOLVED = "unresolved"

# Float-by-default constructors and the position of their ``dtype`` parameter.
_DTYPE_POSITION = {"tf.zeros": 1, "tf.ones": 1, "tf.random.normal": 3, "tf.random.uniform": 3}

# Result dtypes below were measured with TensorFlow 2.21 (eager and traced agree).
# Ops returning integers whatever their input: the parameter that picks the result
# dtype (name, position; None: there is none) and its default.
_INTEGER_RESULTS: dict[str, tuple[str | None, int, str]] = {
    "tf.shape": ("out_type", 1, "int32"),
    "tf.size": ("out_type", 1, "int32"),
    "tf.rank": (None, 0, "int32"),
    "tf.argmax": ("output_type", 2, "int64"),
    "tf.math.argmax": ("output_type", 2, "int64"),
    "tf.argmin": ("output_type", 2, "int64"),
    "tf.math.argmin": ("output_type", 2, "int64"),
}
# Ops whose result has their first argument's dtype, for integer and float inputs.
_KEEPS_NUMERIC_DTYPE = frozenset(
    {f"tf.{name}" for name in ("abs", "negative", "square", "sign", "round", "cumsum")}
    | {f"tf.reduce_{name}" for name in ("sum", "mean", "max", "min", "prod")}
    | {f"tf.math.{name}" for name in ("abs", "negative", "square", "sign", "round", "cumsum")}
    | {f"tf.math.{name}" for name in ("cumprod",)}
    | {f"tf.math.reduce_{name}" for name in ("sum", "mean", "max", "min", "prod")}
    | {"tf.nn.relu"}
)
# The same for float inputs only: TensorFlow rejects integer inputs to these.
_KEEPS_FLOAT_DTYPE = frozenset(
    {f"tf.{name}" for name in ("sqrt", "exp", "sin", "cos", "tan", "tanh", "sigmoid", "floor")}
    | {"tf.reduce_logsumexp", "tf.math.reduce_logsumexp"}
    | {
        f"tf.math.{name}"
        for name in (
            "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh",
            "sigmoid", "floor", "ceil", "reciprocal", "softplus", "erf", "reduce_std",
            "reduce_variance",
        )
    }
    | {
        f"tf.nn.{name}"
        for name in ("sigmoid", "tanh", "softmax", "log_softmax", "softplus", "elu", "selu")
    }
)  # fmt: skip
# Element-wise ops of two operands: a Python number converts to the other one's dtype, so
# the result has the dtype of whichever operand is a tensor (``tf.pow(10000.0, x)``).
_BINARY_KEEPS_DTYPE = frozenset(
    {
        f"tf.{prefix}{name}"
        for prefix in ("", "math.")
        for name in ("pow", "add", "subtract", "multiply", "maximum", "minimum")
    }
)
_BOOL_RESULTS = frozenset(
    {"tf.reduce_any", "tf.reduce_all", "tf.math.reduce_any", "tf.math.reduce_all"}
)
# ``tf.range`` without ``dtype=``: the widest of its arguments' dtypes, in this order.
_RANGE_DTYPE_ORDER = ("int32", "int64", "float16", "bfloat16", "float32", "float64")
# ``a / b`` on integer tensors.
_TRUE_DIVISION_DTYPES = {
    "int8": "float32",
    "uint8": "float32",
    "int16": "float32",
    "uint16": "float32",
    "int32": "float64",
    "uint32": "float64",
    "int64": "float64",
    "uint64": "float64",
}

# ``origin`` of a Python container value: which builtin type it is.
_CONTAINER_LITERALS: dict[type, str] = {
    ast.List: "list",
    ast.ListComp: "list",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
}


class Value(NamedTuple):
    """What an expression is known to be. (A named tuple: inference builds one per
    expression it looks at, and a tuple is several times cheaper than a frozen dataclass.)"""

    kind: str = UNKNOWN_KIND
    dtype: str | None = None  # tensors and variables
    # tensors: "constant" for tf.constant / tf.convert_to_tensor results;
    # containers: "list" / "dict" / "set"
    origin: str | None = None
    persistent: bool | None = None  # tapes: None when not statically known
    number: int | float | None = None  # Python numbers with a known value
    node: ast.AST | None = None  # tapes: constructor call; functions: the def / lambda
    creator: ast.AST | None = None  # tf.function: the decorator or ``tf.function(...)`` call

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (VARIABLE, TENSOR)


UNKNOWN = Value()


def dtype_category(dtype: str | None) -> str | None:
    if dtype in INT_DTYPES:
        return "int"
    if dtype in FLOAT_DTYPES:
        return "float"
    return None


def literal_dtype(node: ast.AST) -> str | None:
    """The dtype ``tf.constant`` gives a Python literal (nested lists included)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return None
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            return "bool"
        if isinstance(value, int):
            # Ints that do not fit int32 become int64 (``tf.constant(2**31)``); past int64
            # the conversion fails.
            if -(2**31) <= sign * value < 2**31:
                return "int32"
            return "int64" if -(2**63) <= sign * value < 2**63 else None
        if isinstance(value, float):
            return "float32"
        if isinstance(value, complex):
            return "complex128"
        if isinstance(value, (str, bytes)):
            return "string"
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        if not node.elts:
            return "float32"  # tf.constant([]) is float32
        kinds = {literal_dtype(element) for element in node.elts}
        if None in kinds:
            return None
        if kinds <= {"int32", "float32"}:
            return "float32" if "float32" in kinds else "int32"
        if len(kinds) == 1:
            return kinds.pop()
    return None


def _with_python_number(dtype: str | None, number: Value) -> str | None:
    """The dtype of ``tensor <op> number``: TF converts the number to the tensor's dtype.

    Any Python number converts to a float dtype; only an int converts to an integer
    dtype (``int_tensor * 0.5`` fails, so its result dtype is unknown).
    """
    if dtype in FLOAT_DTYPES or (dtype in INT_DTYPES and isinstance(number.number, int)):
        return dtype
    return None


def merge_values(values: list[Value]) -> Value:
    if len(values) == 1:
        return values[0]  # the common case; nothing to merge or unwrap
    if not values:
        return UNKNOWN
    # A ``def`` later wrapped by ``f = tf.function(f)``: calls see the tf.function.
    wrapped = {v.node for v in values if v.kind == TF_FUNCTION and v.node is not None}
    values = [v for v in values if not (v.kind == FUNCTION and v.node in wrapped)]
    first = values[0]
    if all(v == first for v in values[1:]):
        return first
    if any(v.kind != first.kind for v in values):
        return UNKNOWN
    dtype = first.dtype if all(v.dtype == first.dtype for v in values) else None
    origin = first.origin if all(v.origin == first.origin for v in values) else None
    persistent = first.persistent if all(v.persistent == first.persistent for v in values) else None
    return Value(first.kind, dtype=dtype, origin=origin, persistent=persistent)


class Resolution(NamedTuple):
    """The bindings a name may have at a point; ``flow_sensitive`` when in the same scope.

    A named tuple rather than a frozen dataclass: one is made for every name read, and a
    tuple is several times cheaper to build."""

    owner: Scope
    bindings: tuple[Binding, ...]
    flow_sensitive: bool


def _is_prefix(prefix: Path, path: Path) -> bool:
    # Blocks compare by identity (``eq=False``), so tuple equality is an identity test,
    # done in C instead of a generator.
    return len(prefix) <= len(path) and path[: len(prefix)] == prefix


_KERAS_LOSSES = "tf.keras.losses."


# Per-example losses from logits: the result has the logits' (float) dtype.
_CROSS_ENTROPY_WITH_LOGITS = frozenset(
    {
        "tf.nn.softmax_cross_entropy_with_logits",
        "tf.nn.sparse_softmax_cross_entropy_with_logits",
        "tf.nn.sigmoid_cross_entropy_with_logits",
        "tf.nn.weighted_cross_entropy_with_logits",
    }
)


# Every TensorFlow name ``_call_value`` knows the result of (with the Keras losses' prefix).
_HANDLED_CALLS = frozenset(
    {
        "tf.constant",
        "tf.convert_to_tensor",
        "tf.Variable",
        "tf.cast",
        "tf.range",
        "tf.where",
        "tf.GradientTape",
        "tf.function",
        *_DTYPE_POSITION,
        *_INTEGER_RESULTS,
        *_KEEPS_NUMERIC_DTYPE,
        *_BINARY_KEEPS_DTYPE,
        *_KEEPS_FLOAT_DTYPE,
        *_BOOL_RESULTS,
        *_CROSS_ENTROPY_WITH_LOGITS,
    }
)


class Bindings:
    """Lazy value inference over a ``Model``."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.imports = model.imports
        self._binding_values: dict[int, Value] = {}
        self._in_progress: set[int] = set()
        self._tf_function_defs: dict[ast.AST, Value] | None = None
        self._tf_bodies: dict[int, Scope | None] = {}
        self._class_scopes: dict[ast.AST, Scope] | None = None
        self._traced_helpers: dict[Scope, TraceReach] | None = None
        self._traced_scopes: dict[Scope, TraceReach] | None = None
        self._loss_objects: frozenset[str] | None = None
        self._calls_to: dict[str, list[Site]] = {}
        self._sorted_positions: dict[tuple[int, str], tuple[int, list[Position] | None]] = {}
        # (scope id, name) -> (how many bindings the name had, what every read gets)
        self._everything_cache: dict[tuple[int, str], tuple[int, Resolution | None]] = {}
        # The ``UNRESOLVED`` stand-ins, kept alive: caches (here and in rules) key
        # bindings by ``id``, which a freed object's successor could reuse.
        self._unresolved: list[Binding] = []
        self._budget = model.budget

    def _unknown(
        self, owner: Scope, name: str, pos: Position, path: Path, flow_sensitive: bool
    ) -> Resolution:
        """Too many bindings may reach this read: one stand-in binding of unknown value,
        made where the read is (so a rule asking whether the value may come from an
        enclosing loop gets yes)."""
        binding = Binding(name, owner, pos, UNRESOLVED, owner.node, None, path)
        self._unresolved.append(binding)
        return Resolution(owner, (binding,), flow_sensitive)

    # -- names ----------------------------------------------------------------

    def resolve(self, scope: Scope, name: str, pos: Position, path: Path) -> Resolution | None:
        """The bindings ``name`` may refer to when read at ``pos`` in ``scope``; None: unbound."""
        if self._budget is not None:
            self._budget.tick()
        lookup = scope
        while lookup.kind == "comprehension" and name not in lookup.bindings:
            if lookup.parent is None:
                break
            lookup = lookup.parent
        if lookup.kind == "comprehension":
            found = tuple(lookup.bindings.get(name, ()))
            return Resolution(lookup, found, False) if found else None
        if name in lookup.global_names:
            return self._everything(self.model.module, name)
        if name in lookup.nonlocal_names:
            return self._everything(self._enclosing_binder(lookup, name), name)
        if name in lookup.bindings:
            return self._before(lookup, name, pos, path)
        return self._everything(self._enclosing_binder(lookup, name), name)

    def _enclosing_binder(self, scope: Scope, name: str) -> Scope | None:
        enclosing = scope.parent
        while enclosing is not None:
            if enclosing.kind != "class" and name in enclosing.bindings:
                return enclosing
            enclosing = enclosing.parent
        return None

    def _everything(self, owner: Scope | None, name: str) -> Resolution | None:
        if owner is None:
            return None
        every = owner.bindings.get(name, ())
        key = (id(owner), name)
        cached = self._everything_cache.get(key)
        if cached is not None and cached[0] == len(every):
            return cached[1]  # the same for every read: built once
        found = tuple(b for b in every if not b.self_referential and b.kind != "del")
        if len(found) > MAX_REACHING:
            resolution: Resolution | None = self._unknown(owner, name, (0, 0), (), False)
        else:
            resolution = Resolution(owner, found, False) if found else None
        self._everything_cache[key] = (len(every), resolution)
        return resolution

    def _before(self, owner: Scope, name: str, pos: Position, path: Path) -> Resolution | None:
        bindings = owner.bindings[name]
        if len(bindings) == 1:  # most names: one parameter, one assignment
            binding = bindings[0]
            if binding.remote or binding.pos > pos:
                return None
            return Resolution(owner, (binding,), True)
        candidates: list[Binding] = []
        first = self._count_at_or_before(owner, name, pos) - 1
        for index in range(first, -1, -1):
            binding = bindings[index]
            if binding.remote or binding.pos > pos:
                if first - index >= _MAX_SCANNED:
                    return self._unknown(owner, name, pos, path, True)
                continue
            candidates.append(binding)
            if _is_prefix(binding.path, path):
                break  # this binding always ran before the use: older ones are hidden
            if len(candidates) >= MAX_REACHING or first - index >= _MAX_SCANNED:
                return self._unknown(owner, name, pos, path, True)
        if not candidates:
            return None
        return Resolution(owner, tuple(candidates), True)

    def _count_at_or_before(self, owner: Scope, name: str, pos: Position) -> int:
        """How many of ``name``'s bindings may precede ``pos``: a bisection when they are in
        source order (the usual case), so a name rebound thousands of times in one scope
        (a 1 MiB file) stays linear overall instead of quadratic."""
        bindings = owner.bindings[name]
        key = (id(owner), name)
        cached = self._sorted_positions.get(key)
        if cached is None or cached[0] != len(bindings):
            ordered = [b.pos for b in bindings]
            cached = (len(bindings), ordered if ordered == sorted(ordered) else None)
            self._sorted_positions[key] = cached
        positions = cached[1]
        if positions is None:
            return len(bindings)  # not in source order: scan them all
        return bisect.bisect_right(positions, pos)

    def name_value(self, scope: Scope, node: ast.Name, path: Path) -> Value:
        resolution = self.resolve(scope, node.id, (node.lineno, node.col_offset), path)
        if resolution is None:
            return UNKNOWN
        return merge_values([self.binding_value(b) for b in resolution.bindings])

    def is_builtin(self, scope: Scope, name: str, pos: Position, path: Path) -> bool:
        """True when ``name`` is not bound anywhere it could be read from (so: the builtin)."""
        if self.resolve(scope, name, pos, path) is not None:
            return False
        # A module-level binding later in the file still shadows the builtin.
        return name not in self.model.module.bindings

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
            decorated = self.tf_function_defs().get(node)
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
            return self._arithmetic(target, value, statement.op)
        return UNKNOWN

    # -- expressions ----------------------------------------------------------

    def infer(self, node: ast.AST, scope: Scope, path: Path, depth: int = 0) -> Value:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        # Exact type tests, most frequent first: node types are disjoint, so the order
        # does not change the result, only how many tests a common node goes through.
        node_type = type(node)
        if node_type is ast.Name:
            resolution = self.resolve(scope, node.id, (node.lineno, node.col_offset), path)  # type: ignore[attr-defined]
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
            return self._arithmetic(left, right, node.op)  # type: ignore[attr-defined]
        if node_type is ast.UnaryOp:
            operand = self.infer(node.operand, scope, path, depth + 1)  # type: ignore[attr-defined]
            op = node.op  # type: ignore[attr-defined]
            if isinstance(op, ast.Not):
                return UNKNOWN
            if operand.kind == PY_NUMBER and operand.number is not None:
                number = operand.number
                if isinstance(op, ast.USub):
                    return Value(PY_NUMBER, number=-number)
                if isinstance(op, ast.UAdd):
                    return operand
                return Value(PY_NUMBER)
            if operand.is_tensor_like:
                return Value(TENSOR, dtype=operand.dtype)
            return UNKNOWN
        if node_type is ast.Subscript:
            base = self.infer(node.value, scope, path, depth + 1)  # type: ignore[attr-defined]
            if base.is_tensor_like:
                return Value(TENSOR, dtype=base.dtype)
            return UNKNOWN
        container = _CONTAINER_LITERALS.get(node_type)
        if container is not None:
            return Value(PY_CONTAINER, origin=container)
        return UNKNOWN

    def _arithmetic(self, left: Value, right: Value, op: ast.operator) -> Value:
        if left.is_tensor_like and right.is_tensor_like:
            dtype = left.dtype if left.dtype == right.dtype else None
        elif left.is_tensor_like and right.kind == PY_NUMBER:
            dtype = _with_python_number(left.dtype, right)
        elif right.is_tensor_like and left.kind == PY_NUMBER:
            dtype = _with_python_number(right.dtype, left)
        else:
            if left.kind == PY_NUMBER and right.kind == PY_NUMBER:
                return Value(PY_NUMBER)
            return UNKNOWN
        if type(op) is ast.Div and dtype in INT_DTYPES:
            # ``/`` on integer tensors returns a float, by width (measured, TF 2.21).
            dtype = _TRUE_DIVISION_DTYPES.get(dtype)
        return Value(TENSOR, dtype=dtype)

    def self_attribute_bindings(self, node: ast.Attribute, scope: Scope) -> list[Binding] | None:
        """The class-wide ``self.<attr> = ...`` bindings for ``self.attr`` read in a method.

        None when ``node`` is not ``self.<attr>`` inside a method; an empty list
        when it is but no method assigns that attribute.
        """
        function = scope.function
        if (
            function is None
            or function.class_scope is None
            or not isinstance(node.value, ast.Name)
            or node.value.id != function.self_name
        ):
            return None
        return function.class_scope.attr_bindings.get(node.attr, [])

    def instance_attribute_bindings(
        self, node: ast.Attribute, scope: Scope, path: Path
    ) -> list[Binding] | None:
        """For ``obj.attr`` where ``obj = C(...)`` with a class ``C`` of this file (a
        ``tf.Module``, a Keras layer), the ``self.attr = ...`` bindings of ``C``'s methods;
        None when ``obj`` is not known to be such an instance."""
        if not isinstance(node.value, ast.Name):
            return None
        class_scope = self.instance_class(scope, node.value, path)
        if class_scope is None:
            return None
        return class_scope.attr_bindings.get(node.attr, [])

    def _attribute_value(self, node: ast.Attribute, scope: Scope, path: Path, depth: int) -> Value:
        instance_bindings = self.self_attribute_bindings(node, scope)
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

    def dtype_of(self, node: ast.AST | None) -> str | None:
        """``tf.float32`` / ``"float32"`` / ``tf.dtypes.int64`` -> dtype name."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        else:
            canonical = self.imports.resolve(node)
            if canonical is None:
                return None
            prefix, _, name = canonical.rpartition(".")
            if prefix not in ("tf", "tf.dtypes"):
                return None
        name = _DTYPE_ALIASES.get(name, name)
        return name if name in KNOWN_DTYPES else None

    def _call_value(self, node: ast.Call, scope: Scope, path: Path, depth: int) -> Value:
        func = node.func
        canonical = self.imports.resolve(func)
        if canonical is None:
            if isinstance(func, ast.Attribute) and func.attr == "add_weight":
                return Value(VARIABLE)
            if self._called_loss_object(func, scope, path, depth):
                # Keras computes losses in float32 (also under a mixed-precision policy).
                return Value(TENSOR, dtype="float32")
            if isinstance(func, ast.Name) and func.id in ("list", "dict", "set"):
                if self.is_builtin(scope, func.id, (func.lineno, func.col_offset), path):
                    return Value(PY_CONTAINER, origin=func.id)
            return UNKNOWN
        if canonical not in _HANDLED_CALLS and not canonical.startswith(_KERAS_LOSSES):
            return UNKNOWN  # ``tf.matmul``, ``tf.keras.layers.Dense``: nothing known
        explicit_dtype = keyword(node, "dtype")
        if canonical in ("tf.constant", "tf.convert_to_tensor"):
            dtype_node = explicit_dtype if explicit_dtype is not None else positional(node, 1)
            first = positional(node, 0) or keyword(node, "value")
            dtype = self.dtype_of(dtype_node) if dtype_node is not None else None
            # ``convert_to_tensor(v, dtype_hint=tf.float32)``: the hint wins when ``v``
            # converts to it (Python ints do), so the literal's dtype is not the result.
            hinted = canonical == "tf.convert_to_tensor" and (
                keyword(node, "dtype_hint") is not None or len(node.args) > 2
            )
            if dtype_node is None and first is not None and not hinted:
                dtype = literal_dtype(first) or self._tensor_dtype(first, scope, path, depth)
            return Value(TENSOR, dtype=dtype, origin="constant")
        if canonical == "tf.Variable":
            initial = positional(node, 0) or keyword(node, "initial_value")
            if explicit_dtype is not None:
                dtype = self.dtype_of(explicit_dtype)
            elif initial is not None:
                dtype = literal_dtype(initial) or self._tensor_dtype(initial, scope, path, depth)
            else:
                dtype = None
            return Value(VARIABLE, dtype=dtype)
        if canonical in _DTYPE_POSITION:
            if explicit_dtype is not None:
                return Value(TENSOR, dtype=self.dtype_of(explicit_dtype))
            # ``tf.zeros(shape, dtype)`` / ``tf.random.uniform(shape, lo, hi, dtype)``.
            if len(node.args) > _DTYPE_POSITION[canonical]:
                return Value(TENSOR, dtype=self.dtype_of(node.args[_DTYPE_POSITION[canonical]]))
            if any(k.arg is None for k in node.keywords) or any(
                isinstance(a, ast.Starred) for a in node.args
            ):
                return Value(TENSOR)
            return Value(TENSOR, dtype="float32")
        if canonical == "tf.cast":
            target = positional(node, 1) or explicit_dtype
            return Value(TENSOR, dtype=self.dtype_of(target))
        if (
            canonical in _INTEGER_RESULTS
            or canonical in _KEEPS_NUMERIC_DTYPE
            or canonical in _BINARY_KEEPS_DTYPE
            or canonical in _KEEPS_FLOAT_DTYPE
            or canonical in _BOOL_RESULTS
        ):
            return Value(TENSOR, dtype=self._op_result_dtype(canonical, node, scope, path, depth))
        if canonical == "tf.range":
            return Value(TENSOR, dtype=self._range_dtype(node, scope, path, depth))
        if canonical == "tf.where" and _is_one_argument_where(node):
            return Value(TENSOR, dtype="int64")  # the indices of the true elements
        if canonical == "tf.GradientTape":
            return Value(TAPE, persistent=tape_persistence(node), node=node)
        if canonical.startswith(_KERAS_LOSSES):
            name = canonical[len(_KERAS_LOSSES) :]
            if name[:1].isupper():
                return Value(KERAS_LOSS)  # ``tf.keras.losses.MeanSquaredError(...)``
            if name.isidentifier():
                return Value(TENSOR, dtype="float32")  # ``tf.keras.losses.mse(y, p)``
        if canonical in _CROSS_ENTROPY_WITH_LOGITS:
            # The result has the logits' dtype, a float type (float32 unless told).
            logits = keyword(node, "logits")
            dtype = self._tensor_dtype(logits, scope, path, depth) if logits is not None else None
            return Value(TENSOR, dtype=dtype if dtype_category(dtype) == "float" else "float32")
        if canonical == "tf.function":
            wrapped = positional(node, 0) or keyword(node, "func")
            if wrapped is None:
                return UNKNOWN  # ``tf.function(jit_compile=True)`` is a decorator factory
            target = None
            if isinstance(wrapped, ast.Name):
                target_value = self.infer(wrapped, scope, path, depth + 1)
                if target_value.kind in (FUNCTION, TF_FUNCTION):
                    target = target_value.node
            elif isinstance(wrapped, ast.Lambda):
                target = wrapped
            return Value(TF_FUNCTION, node=target, creator=node)
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
                if (resolve(func) or "").startswith(_KERAS_LOSSES):
                    names.add(binding.name)
            self._loss_objects = frozenset(names)
        return self._loss_objects

    def _tensor_dtype(self, node: ast.AST, scope: Scope, path: Path, depth: int) -> str | None:
        value = self.infer(node, scope, path, depth + 1)
        return value.dtype if value.is_tensor_like else None

    def _op_result_dtype(
        self, canonical: str, node: ast.Call, scope: Scope, path: Path, depth: int
    ) -> str | None:
        """Result dtype of an op in the tables above; None unless certain from the call."""
        if has_unpacking(node):
            return None
        integer = _INTEGER_RESULTS.get(canonical)
        if integer is not None:
            parameter, position, default = integer
            if parameter is None:
                return default
            chosen = keyword(node, parameter) or positional(node, position)
            return default if chosen is None else self.dtype_of(chosen)
        if canonical in _BOOL_RESULTS:
            return "bool"
        if canonical in _BINARY_KEEPS_DTYPE:
            dtypes = {
                self._tensor_dtype(operand, scope, path, depth)
                for operand in node.args[:2]
                if self.infer(operand, scope, path, depth + 1).is_tensor_like
            }
            return dtypes.pop() if len(dtypes) == 1 else None
        argument = positional(node, 0)
        for name in ("x", "input_tensor", "features", "logits"):
            argument = argument or keyword(node, name)
        if argument is None:
            return None
        dtype = literal_dtype(argument) or self._tensor_dtype(argument, scope, path, depth)
        if canonical in _KEEPS_FLOAT_DTYPE:
            return dtype if dtype in FLOAT_DTYPES else None
        return dtype if dtype in INT_DTYPES or dtype in FLOAT_DTYPES else None

    def _range_dtype(self, node: ast.Call, scope: Scope, path: Path, depth: int) -> str | None:
        """``tf.range(start, limit, delta, dtype)``: ``dtype``, else the widest argument's."""
        if has_unpacking(node):
            return None
        chosen = keyword(node, "dtype") or positional(node, 3)
        if chosen is not None:
            return self.dtype_of(chosen)
        dtypes = []
        for position, name in enumerate(("start", "limit", "delta")):
            argument = positional(node, position) or keyword(node, name)
            if argument is None:
                continue  # no limit, or the default delta of 1 (int32, the narrowest)
            dtype = literal_dtype(argument)
            if dtype is None:
                value = self.infer(argument, scope, path, depth + 1)
                if value.is_tensor_like:
                    dtype = value.dtype
                elif value.kind == PY_NUMBER and value.number is not None:
                    dtype = literal_dtype(ast.Constant(value.number))
            if dtype not in _RANGE_DTYPE_ORDER:
                return None
            dtypes.append(dtype)
        return max(dtypes, key=_RANGE_DTYPE_ORDER.index) if dtypes else None

    def calls_to(self, canonical: str) -> list[Site]:
        """Calls whose callee is the TensorFlow name ``canonical``, in source order.

        Only calls spelled with the name's last component or a local alias of it
        can match, so only those are resolved.
        """
        cached = self._calls_to.get(canonical)
        if cached is not None:
            return cached
        spellings = {canonical.rsplit(".", 1)[-1]}
        spellings.update(local for local, bound in self.imports.names.items() if bound == canonical)
        by_name = self.model.calls_by_name
        found = [
            site
            for spelling in spellings
            for site in by_name.get(spelling, ())
            if self.imports.resolve(site.node.func) == canonical  # type: ignore[attr-defined]
        ]
        if len(spellings) > 1:
            found.sort(key=lambda site: (site.node.lineno, site.node.col_offset))  # type: ignore[attr-defined]
        self._calls_to[canonical] = found
        return found

    # -- tf.function ----------------------------------------------------------

    def tf_function_defs(self) -> dict[ast.AST, Value]:
        """Every ``def`` that is a tf.function, decorated or wrapped later in the file."""
        if self._tf_function_defs is not None:
            return self._tf_function_defs
        found: dict[ast.AST, Value] = {}
        self._tf_function_defs = found  # re-entrancy: wrapped lookups below infer names
        for site in self.model.defs:
            node = site.node
            for decorator in node.decorator_list:  # type: ignore[attr-defined]
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if self.imports.resolve(target) == "tf.function":
                    found[node] = Value(TF_FUNCTION, node=node, creator=decorator)
                    break
        for site in self.calls_to("tf.function"):
            call = site.node
            assert isinstance(call, ast.Call)
            if not call.args or not isinstance(call.args[0], ast.Name):
                continue
            name = call.args[0]
            resolution = self.resolve(
                site.scope, name.id, (name.lineno, name.col_offset), site.path
            )
            if resolution is None:
                continue
            for binding in resolution.bindings:
                if binding.kind == "def" and binding.node not in found:
                    found[binding.node] = Value(TF_FUNCTION, node=binding.node, creator=call)
        return found

    def is_tf_function_scope(self, scope: Scope | None) -> bool:
        return (
            scope is not None and scope.kind == "function" and scope.node in self.tf_function_defs()
        )

    def tf_function_body(self, scope: Scope) -> Scope | None:
        """The tf.function whose own body (not a nested def or lambda) contains ``scope``."""
        key = id(scope)
        if key in self._tf_bodies:
            return self._tf_bodies[key]
        function = scope.function
        body = function if self.is_tf_function_scope(function) else None
        self._tf_bodies[key] = body
        return body

    # -- instances and methods (classes defined in this file) -----------------

    def class_scope_of(self, class_def: ast.AST) -> Scope | None:
        """The scope of a ``class`` statement; the map is built once from the scope list."""
        if self._class_scopes is None:
            self._class_scopes = {
                scope.node: scope for scope in self.model.scopes if scope.kind == "class"
            }
        return self._class_scopes.get(class_def)

    def class_named(self, scope: Scope, name: ast.Name, path: Path) -> Scope | None:
        """The class scope ``name`` refers to, when every binding it may have is one
        ``class`` statement of this file."""
        resolution = self.resolve(scope, name.id, (name.lineno, name.col_offset), path)
        if resolution is None or len(resolution.bindings) != 1:
            return None
        binding = resolution.bindings[0]
        return self.class_scope_of(binding.node) if binding.kind == "class" else None

    def instance_class(self, scope: Scope, name: ast.Name, path: Path) -> Scope | None:
        """The class of ``obj`` read at ``name``, when each binding it may have is
        ``obj = C(...)`` with the same class ``C`` of this file; None otherwise."""
        resolution = self.resolve(scope, name.id, (name.lineno, name.col_offset), path)
        if resolution is None:
            return None
        found: Scope | None = None
        for binding in resolution.bindings:
            created = binding.value
            if (
                binding.kind != "assign"
                or not isinstance(created, ast.Call)
                or not isinstance(created.func, ast.Name)
            ):
                return None
            class_scope = self.class_named(binding.value_scope, created.func, binding.path)
            if class_scope is None or (found is not None and class_scope is not found):
                return None
            found = class_scope
        return found

    def method_binding(self, class_scope: Scope, name: str) -> Binding | None:
        """The one class-body binding of ``name`` in the class or, when it has none, in
        its bases defined in this file (searched depth-first, as single inheritance
        resolves); None when absent or bound more than once (which one wins is unknown)."""
        seen: set[int] = set()
        pending = [class_scope]
        while pending:
            current = pending.pop()
            if id(current) in seen or len(seen) > _MAX_DEPTH:
                continue
            seen.add(id(current))
            bindings = current.bindings.get(name)
            if bindings is not None:
                return bindings[0] if len(bindings) == 1 else None
            class_def = current.node
            parent = current.parent
            if not isinstance(class_def, ast.ClassDef) or parent is None:
                continue
            for base in reversed(class_def.bases):
                if isinstance(base, ast.Name):
                    base_scope = self.class_named(parent, base, current.definition_path)
                    if base_scope is not None:
                        pending.append(base_scope)
        return None

    def trace_reach(self, scope: Scope) -> TraceReach | None:
        """Whose trace runs the code in ``scope``: a tf.function's own body, or a plain
        function that such a body calls directly (see ``traced_helpers``); None: neither."""
        return self.traced_scopes().get(scope)

    def traced_scopes(self) -> dict[Scope, TraceReach]:
        """``trace_reach`` of every scope that has one, computed once: rules that visit
        every call or assignment test each with one dictionary lookup."""
        if self._traced_scopes is not None:
            return self._traced_scopes
        found: dict[Scope, TraceReach] = {}
        reach_of: dict[Scope, TraceReach | None] = {}  # per function; its inner scopes share it
        tf_defs, helpers = self.tf_function_defs(), self.traced_helpers()
        for scope in self.model.scopes:
            function = scope.function
            if function is None:
                continue
            if function not in reach_of:
                if function.kind == "function" and function.node in tf_defs:
                    reach_of[function] = TraceReach(function)
                else:
                    reach_of[function] = helpers.get(function)
            reach = reach_of[function]
            if reach is not None:
                found[scope] = reach
        self._traced_scopes = found
        return found

    def traced_helpers(self) -> dict[Scope, TraceReach]:
        """Plain functions that a tf.function's own body calls, each with the first such
        tf.function in source order.

        ``helper(x)`` whose name resolves only to ``def`` statements (nested in the
        tf.function, in an enclosing function or at module level), or ``self.helper(x)``
        in a tf.function method naming a method of the same class. Their bodies run
        while the caller traces. One level only: what a helper calls is not followed, and
        a def that is only passed along (``tf.py_function(helper, ...)``) is not called
        in the trace. Decorated defs are left out: a decorator (``tf.numpy_function``,
        a cache) may change when the body runs. Computed once, from the call index.
        """
        if self._traced_helpers is not None:
            return self._traced_helpers
        found: dict[Scope, TraceReach] = {}
        self._traced_helpers = found
        tf_defs = self.tf_function_defs()
        scope_of_def = {s.node: s for s in self.model.scopes if s.kind == "function"}
        # The scopes that run as part of a tf.function's own body (comprehensions in it
        # included), found once per scope; calls elsewhere are skipped with one lookup.
        bodies: dict[Scope, Scope] = {}
        for scope in self.model.scopes:
            function = scope.function  # as ``tf_function_body``, without a call per scope
            if function is not None and function.kind == "function" and function.node in tf_defs:
                bodies[scope] = function
        if not bodies:
            return found
        # A helper is called by its ``def``'s own name (``helper(x)``, ``self.helper(x)``):
        # only calls by those names are looked at. Each name's calls are in walk order, so
        # a helper still gets the first tf.function that calls it.
        def_names = {site.node.name for site in self.model.defs}  # type: ignore[attr-defined]
        calls_by_name = self.model.calls_by_name
        for site in (site for name in def_names for site in calls_by_name.get(name, ())):
            function = bodies.get(site.scope)
            if function is None:
                continue
            func = site.node.func  # type: ignore[attr-defined]
            if in_eager_only_branch(self.imports, site.path):
                continue  # an eager-only branch never runs while tracing
            for definition in self._called_defs(func, site, function):
                if definition in tf_defs or definition.decorator_list:  # type: ignore[attr-defined]
                    continue
                helper = scope_of_def.get(definition)
                if helper is not None and helper not in found:
                    found[helper] = TraceReach(function, helper)
        return found

    def _called_defs(self, func: ast.expr, site: Site, function: Scope) -> list[ast.AST]:
        """The ``def`` statements a call's callee (``helper`` / ``self.helper``) may be."""
        if isinstance(func, ast.Name):
            position = (func.lineno, func.col_offset)
            resolution = self.resolve(site.scope, func.id, position, site.path)
            bindings = resolution.bindings if resolution is not None else ()
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == function.self_name
            and function.class_scope is not None
            and func.attr not in function.class_scope.attr_bindings  # not set per instance
        ):
            bindings = tuple(function.class_scope.bindings.get(func.attr, ()))
        else:
            return []
        if not bindings or any(b.kind != "def" for b in bindings):
            return []  # rebound to something else somewhere: not known to be this def
        return [b.node for b in bindings]


@dataclass(frozen=True)
class TraceReach:
    """Code that runs while ``function`` (a tf.function) traces: its own body, or the body
    of ``helper``, a plain function it calls directly."""

    function: Scope
    helper: Scope | None = None


# Calls that are true only when a tf.function body runs eagerly (``run_functions_eagerly``).
_EAGER_CHECKS = frozenset({"tf.executing_eagerly", "tf.config.functions_run_eagerly"})


def _eager_check(imports: TFImports, test: ast.expr) -> bool:
    return isinstance(test, ast.Call) and imports.resolve(test.func) in _EAGER_CHECKS


def in_eager_only_branch(imports: TFImports, path: Path) -> bool:
    """Inside ``if tf.executing_eagerly():`` (or the ``else`` of its negation).

    While tracing the test is False, so that code never runs in the graph: eager-only
    debugging there (``print``, ``.numpy()``) is correct.
    """
    for block in path:
        owner = block.owner
        if block.kind != "if" or not isinstance(owner, ast.If):
            continue
        test = owner.test
        if block.branch == 0 and _eager_check(imports, test):
            return True
        if (
            block.branch == 1
            and isinstance(test, ast.UnaryOp)
            and isinstance(test.op, ast.Not)
            and _eager_check(imports, test.operand)
        ):
            return True
    return False


def positional(call: ast.Call, index: int) -> ast.expr | None:
    """The ``index``-th positional argument, unless a ``*args`` makes positions unknown."""
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return None
        if position == index:
            return argument
    return None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == name:
            return item.value
    return None


def has_unpacking(call: ast.Call) -> bool:
    """``f(*args)`` / ``f(**kwargs)``: which parameter gets what is unknown."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _is_one_argument_where(call: ast.Call) -> bool:
    """``tf.where(condition)`` without ``x`` / ``y``: it returns int64 indices."""
    if has_unpacking(call) or len(call.args) > 1:
        return False
    passed = {k.arg for k in call.keywords}
    return passed <= {"condition", "name"} and (len(call.args) == 1 or "condition" in passed)


def tape_persistence(call: ast.Call) -> bool | None:
    """``persistent`` of a ``tf.GradientTape(...)`` call; None when not a literal."""
    if any(k.arg is None for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return None
    flag = positional(call, 0) or keyword(call, "persistent")
    if flag is None:
        return False
    if isinstance(flag, ast.Constant) and isinstance(flag.value, bool):
        return flag.value
    return None
