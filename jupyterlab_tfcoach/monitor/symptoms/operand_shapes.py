"""The shape of an operand the cell computed on the spot, read from the names it holds.

A learner rarely subtracts two bare names: ``forecast - tf.cast(measured, tf.float32)``,
``y_true - np.float32(preds)``, ``labels == tf.constant([1, 0, 1])`` or ``-scores`` reach
the broadcast just as well. After the cell ran only the names are left, so such an operand
is followed through what cannot change a shape: a cast or an element-wise function of one
value (``tf.cast``, ``tf.abs``, ``np.float32``, ``x.astype(...)``, ``tf.nn.sigmoid``...), a
sign, arithmetic with a number, a comparison with a number (``scores < 0.5``: a mask of
the same shape), and a tensor or array built from a literal list. An index of whole
slices and whole numbers (``fit[:, 0]`` drops an axis), a NumPy array indexed by a name
holding an array of integer positions (``targets[batch]``: a minibatch drawn by index,
shaped as the positions then the array's other axes) and arithmetic of two values, one
a scalar (``fit[:, 0] + offset`` with ``offset`` a number) or both of one shape, are
followed too. Anything else (a squeeze, an index with ``None`` or a partial slice, a model
call, two values that broadcast) is not followed: its shape is not known for sure, and the
expression is left alone.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, describe, show_shape
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path

# Functions of one value whose result has that value's shape (the last part of the name:
# ``tf.math.abs`` and ``np.abs`` alike).
_SHAPE_KEEPING = frozenset(
    {
        "cast",
        "abs",
        "square",
        "sqrt",
        "exp",
        "log",
        "log1p",
        "negative",
        "sign",
        "round",
        "floor",
        "ceil",
        "sigmoid",
        "tanh",
        "relu",
        "softmax",
        "softplus",
        "identity",
        "stop_gradient",
        "convert_to_tensor",
        "asarray",
        "float32",
        "float64",
        "int32",
        "int64",
        "astype",
        "numpy",
    }
)
# Read by ``call_broadcast.py`` too: a parameter seen through such a function.
SHAPE_KEEPING = _SHAPE_KEEPING
# Constructors that turn a literal list into a tensor (first) or an array (second).
_TENSOR_FROM_LIST = frozenset({"constant", "convert_to_tensor"})
_ARRAY_FROM_LIST = frozenset({"array", "asarray"})
_NUMPY_NAMES = frozenset({"np", "numpy", "onp"})
_DTYPE_NAMES = frozenset(
    {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "bool"}
)
_MAX_DEPTH = 6
_MAX_LIST_ITEMS = 10_000


@functools.lru_cache(maxsize=256)
def _parsed(source: str) -> ast.AST | None:
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError:
        return None


def operand_of(source: str, namespace: dict[str, Any]) -> Operand | None:
    """``source`` (one operand as the cell wrote it) described with its shape, when the
    names it holds and what was done to them say it for sure."""
    node = _parsed(source)
    if node is None:
        return None
    found = _follow(node, namespace, 0)
    if found is None:
        return None
    kind, shape, dtype = found
    words = " ".join(part for part in (show_shape(shape), dtype) if part)
    noun = "NumPy array" if kind == "array" else "tensor"
    return Operand(source, kind, f"a {words} {noun}", shape, dtype or None)


def followable(node: ast.AST) -> bool:
    """Whether an operand is of a form ``operand_of`` can follow (names decide the rest)."""
    return _followable(node, 0)


def _followable(node: ast.AST, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if reference_path(node) is not None:
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _followable(node.operand, depth + 1)
    if isinstance(node, ast.BinOp):
        left_number, right_number = _is_number(node.left), _is_number(node.right)
        if left_number != right_number:
            other = node.right if left_number else node.left
            return _followable(other, depth + 1)
        if not left_number and isinstance(node.op, _ARITHMETIC):
            # Two values: followed when the names say one is a scalar or both are alike.
            return _followable(node.left, depth + 1) and _followable(node.right, depth + 1)
        return False
    if isinstance(node, ast.Subscript):
        indexed = _index_items(node) is not None or reference_path(node.slice) is not None
        return indexed and _followable(node.value, depth + 1)
    if isinstance(node, ast.Compare):
        other = _compared_with_number(node)
        return other is not None and _followable(other, depth + 1)
    if isinstance(node, ast.Call) and _reshaped(node) is not None:
        reshaped = _reshaped(node)
        assert reshaped is not None
        return _followable(reshaped[0], depth + 1)
    if isinstance(node, ast.Call):
        source = _call_source(node)
        return source is not None and (
            _literal_dims(source) is not None or _followable(source, depth + 1)
        )
    return False


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _index_items(node: ast.Subscript) -> list[str] | None:
    """``[":", "int"]`` for ``x[:, 0]``: an index of whole slices and whole numbers only,
    whose result's shape is sure (``x[:, 0]`` drops an axis, ``x[:, :]`` keeps them). A
    partial slice, ``None`` (an axis added, often on purpose), ``...`` or an array of
    indices is not followed."""
    index = node.slice
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    kinds: list[str] = []
    for item in items:
        if isinstance(item, ast.Slice) and item.lower is None and item.upper is None:
            if item.step is not None:
                return None
            kinds.append(":")
        elif _int_literal(item) is not None:
            kinds.append("int")
        else:
            return None
    return kinds


def _scalar_name(node: ast.AST, namespace: dict[str, Any]) -> bool:
    """Whether ``node`` names a Python or NumPy number (a mean kept from the data, say)."""
    path = reference_path(node)
    if path is None:
        return False
    found, value = held_at(path, namespace)
    cls = type(value)
    if not found or cls is bool:
        return False
    return cls in (int, float) or (
        cls.__module__ == "numpy" and cls.__name__.startswith(("float", "int"))
    )


def _follow_pair(
    node: ast.BinOp, namespace: dict[str, Any], depth: int
) -> tuple[str, tuple[int | None, ...], str] | None:
    """``a + b`` of two values: the other's shape when one is a scalar (a number held by
    a name, a rank-0 tensor), the common shape when both are alike; None when they
    broadcast (that result's shape is the question, not an answer)."""
    if not isinstance(node.op, _ARITHMETIC):
        return None
    sides = [node.left, node.right]
    for index, side in enumerate(sides):
        if _scalar_name(side, namespace):
            found = _follow(sides[1 - index], namespace, depth + 1)
            return (found[0], found[1], "") if found is not None else None
    left = _follow(node.left, namespace, depth + 1)
    right = _follow(node.right, namespace, depth + 1)
    if left is None or right is None:
        return None
    if right[1] == ():
        return left[0], left[1], ""
    if left[1] == ():
        return right[0], right[1], ""
    if left[1] == right[1] and None not in left[1]:
        return left[0], left[1], left[2] if left[2] == right[2] else ""
    return None


def _compared_with_number(node: ast.Compare) -> ast.AST | None:
    """``x`` in ``x < 0.5`` or ``0.5 <= x`` (one comparison, a number on one side): the
    result is a boolean mask of ``x``'s shape."""
    if len(node.ops) != 1 or len(node.comparators) != 1:
        return None
    left, right = node.left, node.comparators[0]
    left_number, right_number = _is_number(left), _is_number(right)
    if left_number == right_number:
        return None
    return right if left_number else left


def _call_source(call: ast.Call) -> ast.AST | None:
    """The value a shape-keeping call works on: ``x`` in ``tf.cast(x, ...)`` and in
    ``x.astype(...)``; None for any other call."""
    name = call_name(call)
    if name not in _SHAPE_KEEPING and name not in _ARRAY_FROM_LIST | _TENSOR_FROM_LIST:
        return None
    if name in ("astype", "numpy"):
        func = call.func
        return func.value if isinstance(func, ast.Attribute) else None
    if not call.args or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    return call.args[0]  # softmax over any axis keeps the shape too


def _int_literal(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _reshaped(call: ast.Call) -> tuple[ast.AST, tuple[int, ...]] | None:
    """``(x, (-1, 1))`` for ``x.reshape(-1, 1)``, ``x.reshape((-1, 1))``,
    ``tf.reshape(x, [-1, 1])`` and ``np.reshape(x, (-1, 1))``: a reshape to a shape written
    as whole-number literals, whose result's shape the value's size decides for sure."""
    if call_name(call) != "reshape" or call.keywords or not isinstance(call.func, ast.Attribute):
        return None
    root = call.func.value
    module = isinstance(root, ast.Name) and root.id in (*_NUMPY_NAMES, "tf", "tensorflow")
    if module:
        if len(call.args) != 2:
            return None
        value, written = call.args[0], [call.args[1]]
    else:
        value, written = root, list(call.args)
    if len(written) == 1 and isinstance(written[0], (ast.Tuple, ast.List)):
        written = list(written[0].elts)
    dims = [_int_literal(item) for item in written]
    if not dims or any(dim is None or dim < -1 for dim in dims) or dims.count(-1) > 1:
        return None
    return value, tuple(dim for dim in dims if dim is not None)


def _new_shape(
    shape: tuple[int | None, ...], target: tuple[int, ...]
) -> tuple[int | None, ...] | None:
    """The shape ``reshape(target)`` gives a value of ``shape``, None when not sure."""
    if any(dim is None for dim in shape):
        return None
    size = 1
    for dim in shape:
        size *= int(dim)  # type: ignore[arg-type]
    known = 1
    for dim in target:
        if dim != -1:
            known *= dim
    if -1 in target:
        if known == 0 or size % known:
            return None
        return tuple(size // known if dim == -1 else dim for dim in target)
    return target if known == size else None


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _literal_dims(node: ast.AST) -> tuple[int, ...] | None:
    """The shape of a nested list literal of numbers, ``(3,)`` for ``[20, 18, 26]``."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    if len(node.elts) > _MAX_LIST_ITEMS or not node.elts:
        return None
    inner = [_literal_dims(item) for item in node.elts]
    if all(_is_number(item) for item in node.elts):
        return (len(node.elts),)
    if all(dims is not None for dims in inner) and len(set(inner)) == 1:
        first = inner[0]
        assert first is not None
        return (len(node.elts), *first)
    return None


def _library(call: ast.Call) -> str:
    """ "array" for NumPy's calls (``np.float32(x)``, ``x.astype(...)``, ``t.numpy()``),
    "tensor" for TensorFlow's and Keras', "" when the call does not say."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return ""
    if func.attr in ("astype", "numpy"):
        return "array"
    root = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name):
        if root.id in _NUMPY_NAMES:
            return "array"
        if root.id in ("tf", "tensorflow", "keras", "ops", "K"):
            return "tensor"
    return ""


def _cast_dtype(call: ast.Call) -> str | None:
    """``float32`` for ``tf.cast(x, tf.float32)``, ``np.float32(x)``, ``x.astype("float32")``."""
    name = call_name(call)
    if name in _DTYPE_NAMES:
        return name
    if name not in ("cast", "astype", "convert_to_tensor", "constant", "array", "asarray"):
        return None
    candidates = list(call.args[1:] if name != "astype" else call.args[:1])
    candidates += [keyword.value for keyword in call.keywords if keyword.arg == "dtype"]
    for candidate in candidates:
        if isinstance(candidate, ast.Attribute) and candidate.attr in _DTYPE_NAMES:
            return candidate.attr
        if isinstance(candidate, ast.Constant) and candidate.value in _DTYPE_NAMES:
            return str(candidate.value)
    return None


def _follow(
    node: ast.AST, namespace: dict[str, Any], depth: int
) -> tuple[str, tuple[int | None, ...], str] | None:
    """``(kind, shape, dtype)`` of an operand; dtype "" when it is not known for sure."""
    if depth > _MAX_DEPTH:
        return None
    path = reference_path(node)
    if path is not None:
        found, value = held_at(path, namespace)
        if not found:
            return None
        described = describe(".".join(path), value)
        if described is None or described.shape is None:
            return None
        if described.kind not in ("tensor", "variable", "keras_variable", "array"):
            return None
        kind = "array" if described.kind == "array" else "tensor"
        return kind, described.shape, described.dtype or ""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _follow(node.operand, namespace, depth + 1)
    if isinstance(node, ast.BinOp):
        left_number, right_number = _is_number(node.left), _is_number(node.right)
        if left_number and right_number:
            return None
        if not left_number and not right_number:
            return _follow_pair(node, namespace, depth)
        found = _follow(node.right if left_number else node.left, namespace, depth + 1)
        if found is None:
            return None
        # A number may change an integer's dtype (``/``): only the shape is sure.
        return found[0], found[1], ""
    if isinstance(node, ast.Compare):
        other = _compared_with_number(node)
        found = _follow(other, namespace, depth + 1) if other is not None else None
        return (found[0], found[1], "bool") if found is not None else None
    if isinstance(node, ast.Subscript) and reference_path(node.slice) is not None:
        return _follow_positions(node, namespace, depth)
    if isinstance(node, ast.Subscript):
        items = _index_items(node)
        found = _follow(node.value, namespace, depth + 1) if items is not None else None
        if found is None or items is None or len(items) > len(found[1]):
            return None
        kept = [dim for dim, item in zip(found[1], items, strict=False) if item == ":"]
        return found[0], (*kept, *found[1][len(items) :]), found[2]
    if isinstance(node, ast.Call) and _reshaped(node) is not None:
        reshaped = _reshaped(node)
        assert reshaped is not None
        found = _follow(reshaped[0], namespace, depth + 1)
        shape = _new_shape(found[1], reshaped[1]) if found is not None else None
        if found is None or shape is None:
            return None
        return _library(node) or found[0], shape, found[2]
    if isinstance(node, ast.Call):
        source = _call_source(node)
        if source is None:
            return None
        name = call_name(node)
        dims = _literal_dims(source)
        if dims is not None:
            kind = _library(node) or ("array" if name in _ARRAY_FROM_LIST else "tensor")
            return kind, dims, _cast_dtype(node) or ""
        found = _follow(source, namespace, depth + 1)
        if found is None:
            return None
        kind = _library(node) or found[0]
        dtype = _cast_dtype(node)
        if dtype is None:
            dtype = found[2] if name not in ("softmax", "sigmoid", "sqrt", "exp", "log") else ""
        return kind, found[1], dtype
    return None


_INTEGER_DTYPES = frozenset(
    {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
)


def _follow_positions(
    node: ast.Subscript, namespace: dict[str, Any], depth: int
) -> tuple[str, tuple[int | None, ...], str] | None:
    """``targets[batch]``: a NumPy array indexed by a name holding a NumPy array of integer
    positions has the positions' shape, then the array's other axes. A boolean mask (its
    count is not a shape) and a tensor (which takes no array of positions) are not
    followed."""
    path = reference_path(node.slice)
    found, positions = held_at(path, namespace)
    if not found:
        return None
    index = describe(".".join(path or ()), positions)
    if index is None or index.kind != "array" or index.shape is None:
        return None
    if index.dtype not in _INTEGER_DTYPES:
        return None
    indexed = _follow(node.value, namespace, depth + 1)
    if indexed is None or indexed[0] != "array" or not indexed[1]:
        return None
    return "array", (*index.shape, *indexed[1][1:]), indexed[2]
