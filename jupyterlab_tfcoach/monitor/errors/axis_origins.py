"""Where a vector lost (or never had) the axis another operand has (issue #25).

A ``(N,)`` vector meeting an ``(N, 1)`` column is a shape question whose answer is usually
a few lines up: ``y = f(x[:, 0])`` picked a column with an integer index, ``tf.squeeze``,
``.flatten()`` or ``tf.reshape(v, [-1])`` flattened it, ``tf.reduce_mean(t, axis=-1)``
reduced the last axis without ``keepdims``, or ``np.linspace(a, b, n)`` and
``rng.uniform(lo, hi, n)`` made a vector from the start. A teacher names that statement,
not only the op where the shapes met, and often fixes it there: every later use of the
name then has the column shape.

``statement_of`` finds the newest ``name = ...`` before a line, outside ``def`` and
``class`` bodies (in loops and branches too: a loop's assignment above the call is what
the call read), in the running cell, else in earlier cells, newest first (their sources
as ``linecache`` keeps them). ``axis_origin`` reads that statement's value from its root
down through what keeps a shape (a cast, an element-wise function of one value, a sign,
arithmetic with a number or a name holding a scalar) to the one part that drops or never
had the axis, and rewrites that part so the statement makes ``(N, 1)``:

- ``x[:, 0]`` -> ``x[:, 0:1]`` (an integer index as the last of whole slices);
- a reduction over the last axis (``axis=-1`` or ``axis=1`` on a matrix) -> ``keepdims=True``;
- ``v.flatten()``, ``v.ravel()``, ``v.reshape(-1)``, ``tf.reshape(v, [-1])`` -> ``(-1, 1)``;
- ``tf.squeeze(c)`` of a name holding ``(N, 1)`` -> ``c``;
- ``np.linspace``/``np.arange``/``tf.range`` -> ``[:, None]`` on the call; a random draw
  or ``np.zeros``-like constructor given one length -> ``(n, 1)``.

Any other part on the way (a name holding a vector, a call whose shape it cannot tell)
stops the reading: the statement is then not named, as its vector may come from
elsewhere. Values are read as shapes only (``describe``); no user code runs. Shared by the
silent broadcast symptom (``symptoms/broadcast.py``, ``symptoms/call_broadcast.py``) and
open to the error families that need the same answer.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, reference_path

MAX_CELL_CHARS = 50_000
# Earlier cells read for the name's assignment, newest first.
MAX_EARLIER_CELLS = 40

# Functions of one value whose result has that value's shape (the last part of the name).
_SHAPE_KEEPING = frozenset(
    {
        "cast",
        "astype",
        "asarray",
        "array",
        "constant",
        "convert_to_tensor",
        "identity",
        "stop_gradient",
        "numpy",
        "float32",
        "float64",
        "float16",
        "int32",
        "int64",
        "abs",
        "negative",
        "sign",
        "square",
        "sqrt",
        "exp",
        "expm1",
        "log",
        "log1p",
        "sin",
        "cos",
        "tan",
        "tanh",
        "sinh",
        "cosh",
        "arctan",
        "atan",
        "sigmoid",
        "relu",
        "softplus",
        "erf",
        "round",
        "floor",
        "ceil",
        "clip",
        "clip_by_value",
    }
)
# Reductions that drop the axis they reduce unless told ``keepdims=True``.
_REDUCTIONS = frozenset(
    {
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_std",
        "reduce_variance",
        "reduce_logsumexp",
        "mean",
        "sum",
        "max",
        "min",
        "prod",
        "std",
        "var",
        "amax",
        "amin",
        "nanmean",
        "nansum",
        "median",
    }
)
_FLATTENING_METHODS = frozenset({"flatten", "ravel"})
_RANGES = frozenset({"linspace", "arange", "range"})
# A NumPy draw's ``size`` position (the Generator's and ``np.random``'s alike).
_DRAW_SIZE = {
    "uniform": 2,
    "normal": 2,
    "lognormal": 2,
    "integers": 2,
    "randint": 2,
    "binomial": 2,
    "beta": 2,
    "gamma": 2,
    "exponential": 1,
    "poisson": 1,
    "choice": 1,
    "standard_normal": 0,
    "random": 0,
}
# Constructors whose first argument (or ``shape=``) is the shape.
_SHAPED = frozenset({"zeros", "ones", "empty", "full"})
_TF_DRAWS = frozenset({"normal", "uniform", "truncated_normal"})
_LIBRARIES = ("numpy", "tensorflow", "keras", "jax")
# ``np.float32``, ``tf.int64``: a dtype given to a cast keeps the shape.
_DTYPE_NAMES = frozenset(
    {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64"}
    | {"uint8", "bool", "bool_", "complex64", "complex128"}
)
_type_module = type.__dict__["__module__"].__get__


@dataclass(frozen=True)
class AxisOrigin:
    """The statement that made ``name`` a vector, the part of it that did, and the
    statement rewritten to make a column instead (None when no rewrite is sure)."""

    name: str
    statement: str  # ``y = (amp * np.sin(x[:, 0])).astype("float32")``
    where: str  # ``line 18 of this cell``, ``Cell In[4], line 2``
    part: str  # ``x[:, 0]``
    cause: str  # what the part does to the axis, a clause for the learner
    fixed: str | None

    def sentence(self, shape: str, column_shape: str, with_fix: bool = True) -> str:
        """Where the vector was made and, when it is sure and ``with_fix``, that statement
        rewritten to make the column, as one more remedy beside the fix already given."""
        said = (
            f" `{self.name}` got its {shape} shape at {self.where}, `{self.statement}`: "
            f"`{self.part}` {self.cause}."
        )
        if self.fixed is None or not with_fix:
            return said
        return (
            f"{said} Or fix it where it is made, `{self.fixed}`: `{self.name}` is then "
            f"{column_shape} for every use after it."
        )


# ------------------------------------------------------------- the statement
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _assignments(body: list[ast.stmt], name: str, before: int | None) -> ast.Assign | None:
    """The last ``name = ...`` among ``body``'s statements (in loops, branches, ``with``
    blocks; not in nested ``def``/``class``) starting before line ``before``."""
    found: ast.Assign | None = None
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, _SCOPES):
            continue
        if before is not None and getattr(node, "lineno", 0) >= before:
            if isinstance(node, ast.stmt):
                continue
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
        if isinstance(node, ast.stmt):
            pending.extend(
                child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)
            )
    return found


@dataclass(frozen=True)
class Made:
    """A name's newest assignment: the statement's node, its cell's source, where it is."""

    statement: ast.Assign
    source: str
    where: str


def statement_of(
    name: str,
    filename: str,
    line: int,
    cell_files: Mapping[str, int],
    where: Callable[[str, int], str],
    body: list[ast.stmt] | None = None,
) -> Made | None:
    """The newest ``name = ...`` before ``line`` of ``filename`` (of ``body``, a function's
    statements, when given; else the cell's top level and its blocks), else the last one of
    the earlier cells, newest first. ``where(filename, line)`` says where it is."""
    source = "".join(linecache.getlines(filename))
    if not source or len(source) > MAX_CELL_CHARS:
        return None
    in_function = body is not None
    if body is None:
        tree = parsed_source(source)
        if tree is None:
            return None
        body = tree.body
    found = _assignments(body, name, line)
    if found is not None:
        return Made(found, source, where(filename, found.lineno))
    number = cell_files.get(filename)
    if number is None or in_function:
        return None
    earlier = sorted(((n, f) for f, n in cell_files.items() if n < number), reverse=True)
    for _, other in earlier[:MAX_EARLIER_CELLS]:
        text = "".join(linecache.getlines(other))
        if not text or name not in text or len(text) > MAX_CELL_CHARS:
            continue
        tree = parsed_source(text)
        found = _assignments(tree.body, name, None) if tree is not None else None
        if found is not None:
            return Made(found, text, where(other, found.lineno))
    return None


# ------------------------------------------------------- reading the value
def _is_library_module(path: tuple[str, ...] | None, namespace: Mapping[str, Any]) -> bool:
    """``np.linspace``, ``tf.math.reduce_mean``: the call's first name holds a module of
    NumPy, TensorFlow, Keras or JAX (a user object's method of the same name is not)."""
    if not path or len(path) < 2 or path[0] not in namespace:
        return False
    value = namespace[path[0]]
    if type(value).__name__ != "module":
        return False
    module = getattr(value, "__name__", "")
    return type(module) is str and module.split(".")[0] in _LIBRARIES


def _array_name(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[int | None, ...] | None:
    """The shape an array, tensor or variable named by ``node`` holds, else None."""
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return None
    described = describe(node.id, namespace[node.id])
    if described is None or described.kind not in ("array", "tensor", "variable"):
        return None
    return described.shape


def _scalar(node: ast.AST, namespace: Mapping[str, Any]) -> bool:
    """A number: a literal, a name holding a Python number or a 0-d array or tensor, or
    arithmetic of those."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.UnaryOp):
        return _scalar(node.operand, namespace)
    if isinstance(node, ast.BinOp):
        return _scalar(node.left, namespace) and _scalar(node.right, namespace)
    if isinstance(node, ast.Name) and node.id in namespace:
        value = namespace[node.id]
        if type(value) in (int, float):
            return True
        described = describe(node.id, value)
        return described is not None and described.shape == ()
    return False


def _not_array(node: ast.AST, namespace: Mapping[str, Any]) -> bool:
    """An argument that cannot change a result's shape: a literal, a dtype, a number."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr in _DTYPE_NAMES
    return _scalar(node, namespace)


def _int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _whole_slice(node: ast.AST) -> bool:
    if isinstance(node, ast.Slice):
        return node.lower is None and node.upper is None and node.step is None
    return isinstance(node, ast.Constant) and node.value is Ellipsis


@dataclass(frozen=True)
class _Part:
    node: ast.AST  # the part named
    cause: str
    # (node to replace, its replacement) for the fix; None when no rewrite is sure.
    change: tuple[ast.AST, str] | None


def _keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _segment(line: str, node: ast.AST) -> str:
    """The node's text on its one line (offsets are UTF-8 bytes)."""
    return line.encode()[node.col_offset : node.end_col_offset].decode(errors="replace")


def _part(node: ast.AST, line: str, namespace: Mapping[str, Any]) -> _Part | None:
    """The part of a value that drops or never had the second axis, followed from the root
    through what keeps a shape; None when anything else is on the way."""
    if isinstance(node, ast.UnaryOp):
        return _part(node.operand, line, namespace)
    if isinstance(node, ast.BinOp):
        if _scalar(node.right, namespace):
            return _part(node.left, line, namespace)
        if _scalar(node.left, namespace):
            return _part(node.right, line, namespace)
        return None
    if isinstance(node, ast.Subscript):
        return _indexed(node, line)
    if not isinstance(node, ast.Call):
        return None
    name = call_name(node)
    func = node.func
    library = _library_of(node, namespace)
    module_form = library is not None and _is_library_module(reference_path(func), namespace)
    method_of = func.value if isinstance(func, ast.Attribute) and not module_form else None
    if name in _SHAPE_KEEPING:
        if method_of is not None and all(_not_array(a, namespace) for a in node.args):
            return _part(method_of, line, namespace)
        if module_form and node.args and all(_not_array(a, namespace) for a in node.args[1:]):
            return _part(node.args[0], line, namespace)
        return None
    if name in _REDUCTIONS:
        return _reduced(node, line, namespace, module_form, method_of)
    if name in _FLATTENING_METHODS | {"reshape", "squeeze"}:
        return _flattened(node, name, line, namespace, module_form, method_of)
    if library is not None:
        return _made_flat(node, name, line, library, namespace)
    return None


def _indexed(node: ast.Subscript, line: str) -> _Part | None:
    """``x[:, 0]``, ``x[..., -1]``: an integer index as the last of whole slices."""
    index = node.slice
    parts = index.elts if isinstance(index, ast.Tuple) else None
    if not parts or len(parts) < 2 or not all(_whole_slice(p) for p in parts[:-1]):
        return None
    last = _int_value(parts[-1])
    if last is None:
        return None
    base = _segment(line, node.value)
    kept = f"{last}:" if last == -1 else f"{last}:{last + 1}"
    return _Part(
        node,
        f"takes one column of `{base}` by an integer index, which drops that axis",
        (parts[-1], kept),
    )


def _reduced(
    node: ast.Call,
    line: str,
    namespace: Mapping[str, Any],
    module_form: bool,
    method_of: ast.AST | None,
) -> _Part | None:
    """A reduction without ``keepdims``: over the last axis of a matrix the fix keeps it."""
    if method_of is not None and _array_name(method_of, namespace) is None:
        return None  # ``frame.mean(axis=1)`` of an object whose method may not take keepdims
    if method_of is None and not module_form:
        return None
    keep = _keyword(node, "keepdims") or _keyword(node, "keep_dims")
    if keep is not None:
        return None
    axis_node = _keyword(node, "axis")
    axis_value = axis_node.value if axis_node is not None else None
    if axis_value is None:
        positional = node.args[0:1] if method_of is not None else node.args[1:2]
        axis_value = positional[0] if positional else None
    axis = _int_value(axis_value) if axis_value is not None else None
    if axis is None:
        return None
    written = _segment(line, node)
    cause = f"reduces axis {axis} without `keepdims=True`, which drops that axis"
    if axis not in (-1, 1) or not written.endswith(")"):
        return _Part(node, cause, None)
    return _Part(node, cause, (node, f"{written[:-1].rstrip()}, keepdims=True)"))


def _flattened(
    node: ast.Call,
    name: str | None,
    line: str,
    namespace: Mapping[str, Any],
    module_form: bool,
    method_of: ast.AST | None,
) -> _Part | None:
    """``v.flatten()``, ``v.ravel()``, ``v.reshape(-1)``, ``tf.reshape(v, [-1])``,
    ``np.ravel(v)``, ``tf.squeeze(c)``."""
    if method_of is not None:
        if _array_name(method_of, namespace) is None and not isinstance(method_of, ast.Subscript):
            return None
        base = _segment(line, method_of)
        if name in _FLATTENING_METHODS and not node.args:
            cause = f"makes `{base}` one flat axis"
            return _Part(node, cause, (node, f"{base}.reshape(-1, 1)"))
        if name == "reshape" and len(node.args) == 1 and _flat_shape(node.args[0]):
            return _Part(node, "reshapes to one flat axis", (node.args[0], "-1, 1"))
        if name == "squeeze" and not node.args and not node.keywords:
            return _squeezed(node, method_of, base, namespace)
        return None
    if not module_form or not node.args:
        return None
    base = _segment(line, node.args[0])
    if name == "ravel" and len(node.args) == 1:
        module = _segment(line, node.func)[: -len("ravel")]
        return _Part(
            node, f"makes `{base}` one flat axis", (node, f"{module}reshape({base}, (-1, 1))")
        )
    if name == "reshape" and len(node.args) == 2 and _flat_shape(node.args[1]):
        shape = node.args[1]
        fixed = "[-1, 1]" if isinstance(shape, ast.List) else "(-1, 1)"
        return _Part(node, "reshapes to one flat axis", (shape, fixed))
    if name == "squeeze":
        return _squeezed(node, node.args[0], base, namespace)
    return None


def _flat_shape(node: ast.AST) -> bool:
    """``-1``, ``[-1]``, ``(-1,)``."""
    if isinstance(node, ast.List | ast.Tuple):
        return len(node.elts) == 1 and _int_value(node.elts[0]) == -1
    return _int_value(node) == -1


def _squeezed(
    node: ast.Call, argument: ast.AST, base: str, namespace: Mapping[str, Any]
) -> _Part | None:
    """A squeeze: the fix leaves it out when the squeezed name holds a column."""
    shape = _array_name(argument, namespace)
    cause = f"removes the axis of size 1 of `{base}`"
    if shape is not None and len(shape) == 2 and shape[1] == 1:
        return _Part(node, cause, (node, base))
    return _Part(node, cause, None)


def _library_of(node: ast.Call, namespace: Mapping[str, Any]) -> str | None:
    """``numpy`` for ``np.linspace(...)`` or ``rng.uniform(...)`` (a NumPy generator),
    ``tensorflow`` for ``tf.random.normal(...)``; None for anything else."""
    func = node.func
    if not isinstance(func, ast.Attribute):
        return None
    path = reference_path(func)
    if path and path[0] in namespace:
        value = namespace[path[0]]
        if type(value).__name__ == "module":
            module = getattr(value, "__name__", "")
        else:
            # Read through ``type``'s own descriptor: nothing of the object's class runs.
            module = _type_module(type(value)) if len(path) == 2 else ""
        if type(module) is str and module.split(".")[0] in _LIBRARIES:
            return module.split(".")[0]
    return None


def _made_flat(
    node: ast.Call, name: str | None, line: str, library: str, namespace: Mapping[str, Any]
) -> _Part | None:
    """A library constructor that makes a vector: a range, a draw or a filled array given
    one length."""
    cause = "makes a vector, with no second axis"
    written = _segment(line, node)
    if name in _RANGES:
        return _Part(node, cause, (node, f"{written}[:, None]"))
    size: ast.AST | None = None
    if name in _SHAPED or (library != "numpy" and name in _TF_DRAWS):
        keyword = _keyword(node, "shape")
        size = keyword.value if keyword is not None else (node.args[0] if node.args else None)
    elif library == "numpy" and name in _DRAW_SIZE:
        keyword = _keyword(node, "size")
        position = _DRAW_SIZE[name]
        if keyword is not None:
            size = keyword.value
        elif len(node.args) > position:
            size = node.args[position]
    if size is None:
        return None
    if isinstance(size, ast.List | ast.Tuple):
        if len(size.elts) != 1 or isinstance(size.elts[0], ast.Starred):
            return None
        inner = _segment(line, size.elts[0])
        fixed = f"[{inner}, 1]" if isinstance(size, ast.List) else f"({inner}, 1)"
        return _Part(node, cause, (size, fixed))
    if _scalar(size, namespace):
        return _Part(node, cause, (size, f"({_segment(line, size)}, 1)"))
    return None


def axis_origin(made: Made, name: str, namespace: Mapping[str, Any]) -> AxisOrigin | None:
    """The part of ``made``'s statement that drops or never had the second axis, and the
    statement rewritten to keep one; None when the value's shape comes from anything else."""
    statement = made.statement
    if statement.lineno != statement.end_lineno:
        return None
    lines = made.source.splitlines()
    if not 0 < statement.lineno <= len(lines):
        return None
    line = lines[statement.lineno - 1]
    part = _part(statement.value, line, namespace)
    if part is None:
        return None
    written = _segment(line, statement)
    fixed: str | None = None
    if part.change is not None:
        target, replacement = part.change
        data = line.encode()
        start, end = target.col_offset, target.end_col_offset
        if end is not None and statement.col_offset <= start < end:
            stop = statement.end_col_offset or len(data)
            fixed = (
                data[statement.col_offset : start].decode(errors="replace")
                + replacement
                + data[end:stop].decode(errors="replace")
            )
    return AxisOrigin(name, written, made.where, _segment(line, part.node), part.cause, fixed)
