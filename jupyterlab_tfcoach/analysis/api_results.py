"""What TensorFlow's calls and operators return: kind and dtype, as a table.

``API_RESULTS`` maps an API's canonical name (``tf.zeros``) to the row that reads its
result from the call. Most rows are parameterised families: the parameter that picks
the result dtype, its position and default (``IntegerResult``, ``FloatByDefault``), or
whose argument's dtype the result keeps (``KeepsArgumentDtype``, ``KeepsOperandDtype``).
The few calls that need more than that have a small named handler (``tf.constant``,
``tf.Variable``, ``tf.range``, ``tf.function``, ...). A name absent from the table is
unknown: ``tf.matmul`` or ``tf.keras.layers.Dense(...)`` give no value, so no rule reports
on their results. ``arithmetic_result`` gives what ``a <op> b`` returns.

Result dtypes were measured with TensorFlow 2.21 (eager and traced agree).

Neighbours: ``bindings.py`` resolves a call's callee, looks it up here and answers the
row's questions about the arguments (``ApiCall``); ``values.py`` defines ``Value``;
``arguments.py`` finds an argument by position or keyword.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from jupyterlab_tfcoach.analysis.arguments import has_unpacking, keyword, positional
from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.model import Path, Scope
from jupyterlab_tfcoach.analysis.values import (
    FLOAT_DTYPES,
    FUNCTION,
    INT_DTYPES,
    KERAS_LOSS,
    KNOWN_DTYPES,
    PY_NUMBER,
    TAPE,
    TENSOR,
    TF_FUNCTION,
    UNKNOWN,
    UNKNOWN_KIND,
    VARIABLE,
    Value,
    dtype_category,
)

KERAS_LOSSES = "tf.keras.losses."
KERAS_OPS = "tf.keras.ops."
# ``Value.origin`` of a Keras 3 variable (``keras.Variable``, a layer's ``add_weight``).
KERAS_ORIGIN = "keras"

# Calls of a method, known by its name alone (the object's class is not inferred).
METHOD_RESULTS: dict[str, Value] = {"add_weight": Value(VARIABLE, origin=KERAS_ORIGIN)}
# Calling a Keras loss object: Keras computes losses in float32 (also under a
# mixed-precision policy).
LOSS_OBJECT_RESULT = Value(TENSOR, dtype="float32")
# Builtins whose call makes a Python container (its ``origin``).
CONTAINER_BUILTINS = frozenset({"list", "dict", "set"})

_DTYPE_ALIASES = {"half": "float16", "double": "float64"}


def dtype_named(imports: TFImports, node: ast.AST | None) -> str | None:
    """``tf.float32`` / ``"float32"`` / ``tf.dtypes.int64`` -> dtype name."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value
    else:
        canonical = imports.resolve(node)
        if canonical is None:
            return None
        prefix, _, name = canonical.rpartition(".")
        if prefix not in ("tf", "tf.dtypes"):
            return None
    name = _DTYPE_ALIASES.get(name, name)
    return name if name in KNOWN_DTYPES else None


def literal_dtype(node: ast.AST) -> str | None:
    """The dtype ``tf.constant`` gives a Python literal (nested lists included)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return None
    if isinstance(node, ast.Constant):
        return _constant_dtype(node.value, sign)
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


def _constant_dtype(value: object, sign: int) -> str | None:
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


# -- operators -----------------------------------------------------------------

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


def _with_python_number(dtype: str | None, number: Value) -> str | None:
    """The dtype of ``tensor <op> number``: TF converts the number to the tensor's dtype.

    Any Python number converts to a float dtype; only an int converts to an integer
    dtype (``int_tensor * 0.5`` fails, so its result dtype is unknown).
    """
    if dtype in FLOAT_DTYPES or (dtype in INT_DTYPES and isinstance(number.number, int)):
        return dtype
    return None


def arithmetic_result(left: Value, right: Value, op: ast.operator) -> Value:
    """What ``left <op> right`` gives, for tensors and Python numbers."""
    if left.is_tensor_like and right.is_tensor_like:
        dtype = left.dtype if left.dtype == right.dtype else None
    elif left.is_tensor_like and right.kind == PY_NUMBER:
        dtype = _with_python_number(left.dtype, right)
    elif right.is_tensor_like and left.kind == PY_NUMBER:
        dtype = _with_python_number(right.dtype, left)
    elif left.is_tensor_like and right.kind == UNKNOWN_KIND:
        # A tensor and a value we cannot see (a parameter, a NumPy array): TensorFlow
        # converts the other operand to the tensor's dtype or raises, so when the line
        # runs its result has the tensor's dtype (measured with TF 2.21: int32 tensor *
        # float64 array is int32, float32 tensor + int64 array is float32).
        dtype = left.dtype
    elif right.is_tensor_like and left.kind == UNKNOWN_KIND:
        dtype = right.dtype
    else:
        if left.kind == PY_NUMBER and right.kind == PY_NUMBER:
            return Value(PY_NUMBER)
        return UNKNOWN
    if type(op) is ast.Div and dtype in INT_DTYPES:
        # ``/`` on integer tensors returns a float, by width (measured, TF 2.21).
        dtype = _TRUE_DIVISION_DTYPES.get(dtype)
    return Value(TENSOR, dtype=dtype)


# -- calls -----------------------------------------------------------------------


class Inference(Protocol):
    """What a row asks about a call's arguments (``bindings.Bindings`` answers)."""

    imports: TFImports

    def infer(self, node: ast.AST, scope: Scope, path: Path, depth: int = 0) -> Value: ...


class ApiCall(NamedTuple):
    """A call of a TensorFlow API, where it is, and the inference that reads its arguments.
    (A named tuple: one is made for every call of a name in the table.)"""

    node: ast.Call
    canonical: str
    scope: Scope
    path: Path
    depth: int
    inference: Inference

    def value(self, argument: ast.AST) -> Value:
        return self.inference.infer(argument, self.scope, self.path, self.depth + 1)

    def tensor_dtype(self, argument: ast.AST) -> str | None:
        """The dtype of a tensor argument; None when it is not known to be a tensor."""
        value = self.value(argument)
        return value.dtype if value.is_tensor_like else None

    def argument_dtype(self, argument: ast.AST) -> str | None:
        """The dtype TensorFlow converts an argument to: a literal's, else a tensor's."""
        return literal_dtype(argument) or self.tensor_dtype(argument)

    def dtype_named(self, argument: ast.AST | None) -> str | None:
        """The dtype a ``dtype=`` argument names."""
        return dtype_named(self.inference.imports, argument)


ResultRow = Callable[[ApiCall], Value]


@dataclass(frozen=True, slots=True)
class IntegerResult:
    """An integer whatever the input: ``parameter`` (at ``position``) picks the dtype,
    ``default`` without it; no parameter: always ``default``."""

    parameter: str | None
    position: int
    default: str

    def __call__(self, call: ApiCall) -> Value:
        node = call.node
        if has_unpacking(node):
            return Value(TENSOR)
        if self.parameter is None:
            return Value(TENSOR, dtype=self.default)
        chosen = keyword(node, self.parameter) or positional(node, self.position)
        return Value(TENSOR, dtype=self.default if chosen is None else call.dtype_named(chosen))


@dataclass(frozen=True, slots=True)
class FloatByDefault:
    """A constructor of float32 tensors unless ``dtype`` (at ``dtype_position``) says."""

    dtype_position: int

    def __call__(self, call: ApiCall) -> Value:
        node = call.node
        explicit = keyword(node, "dtype")
        if explicit is not None:
            return Value(TENSOR, dtype=call.dtype_named(explicit))
        # ``tf.zeros(shape, dtype)`` / ``tf.random.uniform(shape, lo, hi, dtype)``.
        if len(node.args) > self.dtype_position:
            return Value(TENSOR, dtype=call.dtype_named(node.args[self.dtype_position]))
        if has_unpacking(node):
            return Value(TENSOR)
        return Value(TENSOR, dtype="float32")


@dataclass(frozen=True, slots=True)
class KeepsArgumentDtype:
    """The first argument's dtype, when it is one of ``accepted``."""

    accepted: frozenset[str]

    def __call__(self, call: ApiCall) -> Value:
        node = call.node
        if has_unpacking(node):
            return Value(TENSOR)
        argument = positional(node, 0)
        for name in ("x", "input_tensor", "features", "logits"):
            argument = argument or keyword(node, name)
        if argument is None:
            return Value(TENSOR)
        dtype = call.argument_dtype(argument)
        return Value(TENSOR, dtype=dtype if dtype in self.accepted else None)


def keeps_operand_dtype(call: ApiCall) -> Value:
    """An element-wise op of two operands: a Python number converts to the other one's
    dtype, so the result has the dtype of whichever operand is a tensor
    (``tf.pow(10000.0, x)``)."""
    node = call.node
    if has_unpacking(node):
        return Value(TENSOR)
    operands = [call.value(operand) for operand in node.args[:2]]
    dtypes = {value.dtype for value in operands if value.is_tensor_like}
    return Value(TENSOR, dtype=dtypes.pop() if len(dtypes) == 1 else None)


def bool_result(call: ApiCall) -> Value:
    return Value(TENSOR, dtype=None if has_unpacking(call.node) else "bool")


def _constant(call: ApiCall, hint_possible: bool) -> Value:
    node = call.node
    explicit = keyword(node, "dtype")
    dtype_node = explicit if explicit is not None else positional(node, 1)
    first = positional(node, 0) or keyword(node, "value")
    dtype = call.dtype_named(dtype_node) if dtype_node is not None else None
    # ``convert_to_tensor(v, dtype_hint=tf.float32)``: the hint wins when ``v``
    # converts to it (Python ints do), so the literal's dtype is not the result.
    hinted = hint_possible and (keyword(node, "dtype_hint") is not None or len(node.args) > 2)
    if dtype_node is None and first is not None and not hinted:
        dtype = call.argument_dtype(first)
    return Value(TENSOR, dtype=dtype, origin="constant")


def constant_result(call: ApiCall) -> Value:
    return _constant(call, hint_possible=False)


def convert_to_tensor_result(call: ApiCall) -> Value:
    return _constant(call, hint_possible=True)


def variable_result(call: ApiCall) -> Value:
    node = call.node
    explicit = keyword(node, "dtype")
    initial = positional(node, 0) or keyword(node, "initial_value")
    if explicit is not None:
        dtype = call.dtype_named(explicit)
    elif initial is not None:
        dtype = call.argument_dtype(initial)
    else:
        dtype = None
    return Value(VARIABLE, dtype=dtype)


def keras_variable_result(call: ApiCall) -> Value:
    """``keras.Variable(initializer, shape=None, dtype=None, ...)``: ``dtype``, else the
    initial value's (``keras.Variable(1.0)`` is float32, ``keras.Variable(1)`` int32); a
    named initializer (``"ones"``) takes Keras's default float type, not known here."""
    node = call.node
    explicit = keyword(node, "dtype") or positional(node, 2)
    initial = positional(node, 0) or keyword(node, "initializer")
    if explicit is not None:
        dtype = call.dtype_named(explicit)
    elif initial is not None and not (
        isinstance(initial, ast.Constant) and isinstance(initial.value, str)
    ):
        dtype = call.argument_dtype(initial)
    else:
        dtype = None
    return Value(VARIABLE, dtype=dtype, origin=KERAS_ORIGIN)


# ``keras.ops`` functions that do not return one tensor (measured, Keras 3.15 on TF 2.21):
# ``shape`` gives a tuple, ``convert_to_numpy`` a NumPy array, the others tuples, lists,
# bools or whatever the function they run returns.
_KERAS_OPS_NOT_TENSOR = frozenset(
    {
        "shape", "convert_to_numpy", "is_tensor", "dtype", "unstack", "split", "array_split",
        "meshgrid", "eig", "eigh", "qr", "svd", "lu_factor", "top_k", "nonzero", "histogram",
        "unique", "cond", "switch", "while_loop", "fori_loop", "scan", "map",
        "vectorized_map", "associative_scan", "custom_gradient", "stft", "rfft", "fft",
        "fft2", "ifft2", "irfft", "istft",
    }
)  # fmt: skip


def keras_ops_result(call: ApiCall) -> Value:
    """``keras.ops.mean(x)``: a tensor (its dtype is not read here), but for the functions
    in ``_KERAS_OPS_NOT_TENSOR`` and the submodules' (``keras.ops.nn.*``), left unknown."""
    name = call.canonical[len(KERAS_OPS) :]
    if not name.isidentifier() or name in _KERAS_OPS_NOT_TENSOR:
        return UNKNOWN
    return Value(TENSOR)


def cast_result(call: ApiCall) -> Value:
    return Value(
        TENSOR, dtype=call.dtype_named(positional(call.node, 1) or keyword(call.node, "dtype"))
    )


# ``tf.range`` without ``dtype=``: the widest of its arguments' dtypes, in this order.
_RANGE_DTYPE_ORDER = ("int32", "int64", "float16", "bfloat16", "float32", "float64")


def range_result(call: ApiCall) -> Value:
    """``tf.range(start, limit, delta, dtype)``: ``dtype``, else the widest argument's."""
    node = call.node
    if has_unpacking(node):
        return Value(TENSOR)
    chosen = keyword(node, "dtype") or positional(node, 3)
    if chosen is not None:
        return Value(TENSOR, dtype=call.dtype_named(chosen))
    dtypes = []
    for position, name in enumerate(("start", "limit", "delta")):
        argument = positional(node, position) or keyword(node, name)
        if argument is None:
            continue  # no limit, or the default delta of 1 (int32, the narrowest)
        dtype = literal_dtype(argument)
        if dtype is None:
            value = call.value(argument)
            if value.is_tensor_like:
                dtype = value.dtype
            elif value.kind == PY_NUMBER and value.number is not None:
                dtype = literal_dtype(ast.Constant(value.number))
        if dtype not in _RANGE_DTYPE_ORDER:
            return Value(TENSOR)
        dtypes.append(dtype)
    return Value(TENSOR, dtype=max(dtypes, key=_RANGE_DTYPE_ORDER.index) if dtypes else None)


def where_result(call: ApiCall) -> Value:
    """``tf.where(condition)`` without ``x`` / ``y`` returns the int64 indices of the true
    elements; with them, the result is unknown here."""
    node = call.node
    if has_unpacking(node) or len(node.args) > 1:
        return UNKNOWN
    passed = {k.arg for k in node.keywords}
    if passed <= {"condition", "name"} and (len(node.args) == 1 or "condition" in passed):
        return Value(TENSOR, dtype="int64")
    return UNKNOWN


def gradient_tape_result(call: ApiCall) -> Value:
    return Value(TAPE, persistent=_tape_persistence(call.node), node=call.node)


def _tape_persistence(call: ast.Call) -> bool | None:
    """``persistent`` of a ``tf.GradientTape(...)`` call; None when not a literal."""
    if has_unpacking(call):
        return None
    flag = positional(call, 0) or keyword(call, "persistent")
    if flag is None:
        return False
    if isinstance(flag, ast.Constant) and isinstance(flag.value, bool):
        return flag.value
    return None


def cross_entropy_result(call: ApiCall) -> Value:
    """Per-example losses from logits: the logits' dtype, a float type (float32 unless
    told)."""
    logits = keyword(call.node, "logits")
    dtype = call.tensor_dtype(logits) if logits is not None else None
    return Value(TENSOR, dtype=dtype if dtype_category(dtype) == "float" else "float32")


def tf_function_result(call: ApiCall) -> Value:
    """``tf.function(f)`` / ``tf.function(lambda ...)``: a tf.function of that code."""
    node = call.node
    wrapped = positional(node, 0) or keyword(node, "func")
    if wrapped is None:
        return UNKNOWN  # ``tf.function(jit_compile=True)`` is a decorator factory
    target = None
    if isinstance(wrapped, ast.Name):
        target_value = call.value(wrapped)
        if target_value.kind in (FUNCTION, TF_FUNCTION):
            target = target_value.node
    elif isinstance(wrapped, ast.Lambda):
        target = wrapped
    return Value(TF_FUNCTION, node=target, creator=node)


def keras_loss_result(call: ApiCall) -> Value:
    """``tf.keras.losses.MeanSquaredError(...)`` makes a loss object; ``tf.keras.losses.mse(y,
    p)`` computes a float32 loss."""
    name = call.canonical[len(KERAS_LOSSES) :]
    if name[:1].isupper():
        return Value(KERAS_LOSS)
    if name.isidentifier():
        return Value(TENSOR, dtype="float32")
    return UNKNOWN


def _each(names: Iterable[str], row: ResultRow) -> dict[str, ResultRow]:
    return dict.fromkeys(names, row)


def _under(prefix: str, *names: str) -> list[str]:
    return [prefix + name for name in names]


def _math(*names: str) -> list[str]:
    """``tf.abs`` and ``tf.math.abs`` alike."""
    return [*_under("tf.", *names), *_under("tf.math.", *names)]


def _table(*groups: Mapping[str, ResultRow]) -> dict[str, ResultRow]:
    """One row per name: a name in two groups is a mistake in the table, not a choice."""
    table: dict[str, ResultRow] = {}
    for group in groups:
        for name, row in group.items():
            if name in table:
                raise ValueError(f"{name} has two rows in API_RESULTS")
            table[name] = row
    return table


# Ops whose result has their first argument's dtype, for integer and float inputs.
_KEEPS_NUMERIC_DTYPE = [
    *_math("abs", "negative", "square", "sign", "round", "cumsum"),
    *_math("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"),
    "tf.math.cumprod",
    "tf.nn.relu",
]
# The same for float inputs only: TensorFlow rejects integer inputs to these.
_KEEPS_FLOAT_DTYPE = [
    *_under("tf.", "sqrt", "exp", "sin", "cos", "tan", "tanh", "sigmoid", "floor"),
    *_math("reduce_logsumexp"),
    *_under(
        "tf.math.",
        "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh",
        "sigmoid", "floor", "ceil", "reciprocal", "softplus", "erf", "reduce_std",
        "reduce_variance",
    ),
    *_under("tf.nn.", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "elu", "selu"),
]  # fmt: skip
_CROSS_ENTROPY_WITH_LOGITS = _under(
    "tf.nn.",
    "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
    "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits",
)

API_RESULTS: dict[str, ResultRow] = _table(
    {
        "tf.constant": constant_result,
        "tf.convert_to_tensor": convert_to_tensor_result,
        "tf.Variable": variable_result,
        "tf.keras.Variable": keras_variable_result,
        "tf.cast": cast_result,
        "tf.range": range_result,
        "tf.where": where_result,
        "tf.GradientTape": gradient_tape_result,
        "tf.function": tf_function_result,
        # Float-by-default constructors and the position of their ``dtype`` parameter.
        "tf.zeros": FloatByDefault(1),
        "tf.ones": FloatByDefault(1),
        "tf.random.normal": FloatByDefault(3),
        "tf.random.uniform": FloatByDefault(3),
        # Integers whatever the input: the parameter that picks the dtype, its position.
        "tf.shape": IntegerResult("out_type", 1, "int32"),
        "tf.size": IntegerResult("out_type", 1, "int32"),
        "tf.rank": IntegerResult(None, 0, "int32"),
        "tf.argmax": IntegerResult("output_type", 2, "int64"),
        "tf.math.argmax": IntegerResult("output_type", 2, "int64"),
        "tf.argmin": IntegerResult("output_type", 2, "int64"),
        "tf.math.argmin": IntegerResult("output_type", 2, "int64"),
    },
    _each(_math("reduce_any", "reduce_all"), bool_result),
    _each(_KEEPS_NUMERIC_DTYPE, KeepsArgumentDtype(INT_DTYPES | FLOAT_DTYPES)),
    _each(_KEEPS_FLOAT_DTYPE, KeepsArgumentDtype(FLOAT_DTYPES)),
    _each(_math("pow", "add", "subtract", "multiply", "maximum", "minimum"), keeps_operand_dtype),
    _each(_CROSS_ENTROPY_WITH_LOGITS, cross_entropy_result),
)


def result_row(canonical: str) -> ResultRow | None:
    """How a call of ``canonical`` gives its result; None: nothing is known of it."""
    row = API_RESULTS.get(canonical)
    if row is None and canonical.startswith(KERAS_LOSSES):
        return keras_loss_result
    if row is None and canonical.startswith(KERAS_OPS):
        return keras_ops_result
    return row
