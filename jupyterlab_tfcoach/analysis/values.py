"""What the analysis knows an expression is: a ``Value`` (kind, dtype, origin), and how
values that may reach one read merge.

This module only describes values; nothing here looks at code. Its neighbours:
``bindings.py`` infers the ``Value`` of an expression or a binding (lazily, on a rule's
demand), ``api_results.py`` holds what TensorFlow's calls and operators return, and the
rules read the kinds and dtypes named here.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "half", "double"})
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


def merge_values(values: list[Value]) -> Value:
    """The one value several bindings that may reach a read agree on; what they disagree
    on is left unknown (``UNKNOWN`` when even their kinds differ: rules stay silent)."""
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
