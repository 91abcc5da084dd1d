"""What a teacher reads at the failing line: where it is, the call on it, and what each
value named there holds (issue #25).

From the exception's traceback ``ErrorContext.frames`` already knows the innermost place
in the user's cells; this module reads that place as a teacher would:

- ``where``: ``line 5 of this cell`` (or ``of cell In[3]`` for a helper defined earlier),
  and the function it is in;
- ``call``: the call the failing instruction belongs to (its exact position when Python
  recorded one, else the first call of the line);
- ``operands``: each name, ``name.attr`` chain or ``name[...]`` on the failing statement,
  with what its value is: a tensor, variable or array by shape and dtype, a Python scalar
  by type and value, a list by length (and its items' shapes), a Keras layer by class and
  ``units``/``filters`` and the input shape it was built for, a model by its inputs'
  shapes, a ``tf.Module`` by the variables it tracks, a dataset by its elements' shapes.

Nothing here runs the user's code nor makes TensorFlow trace: values are found as
``ErrorContext.resolve`` finds them (locals, then the namespace; attributes only from
instance dictionaries), and what a TensorFlow or Keras object knows is read with
``stored_state.library_attribute`` (only the libraries' own descriptors run) or straight
from what the library stores. Work is bounded (at most ``MAX_OPERANDS`` values, a few
items of a list); every reading that fails is left out, never raised.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    bound_names,
    class_mro,
    code,
    instance_attribute,
    library_class,
    value_kind,
)
from jupyterlab_tfcoach.monitor.stored_state import (
    is_library_class,
    keras_trainable_variables,
    keras_variables,
    library_attribute,
    module_variables,
    stored,
)

MAX_OPERANDS = 8
_MAX_CALL_CHARS = 120
_MAX_LIST_ITEMS = 4
_MAX_VARIABLES = 1000
_type_name = type.__dict__["__name__"].__get__
_SCALARS = (bool, int, float, complex)


@dataclass(frozen=True)
class Operand:
    """A value named on the failing line, as the explanation shows it."""

    source: str  # ``inputs``, ``self.kernel``, ``images.shape[1:]``
    kind: str  # "tensor", "variable", "symbolic", "array", "list", "scalar", "layer", ...
    description: str  # "a (8, 3) float32 tensor"
    shape: tuple[int | None, ...] | None = None
    dtype: str | None = None
    value: Any = field(default=None, repr=False, compare=False)

    def sentence(self) -> str:
        return f"{code(self.source)} is {self.description}"


@dataclass
class FailingLine:
    """The innermost place in the user's cells the error went through."""

    frame: CellFrame
    where: str  # "line 5 of this cell (in `call`)"
    statement: ast.stmt | None
    call: ast.expr | None  # an ``ast.Call`` unless the failing instruction is an operator
    call_source: str | None  # the call, else the failing statement, on one line
    operands: list[Operand]

    def operand(self, source: str) -> Operand | None:
        return next((found for found in self.operands if found.source == source), None)

    def with_shape(self, shape: tuple[int | None, ...]) -> list[Operand]:
        return [found for found in self.operands if found.shape == shape]

    def result_names(self) -> str | None:
        """``grad_w`` for ``grad_w = tape.gradient(...)``: what the failing statement was
        computing, when the failing call is part of an assignment's value."""
        statement, call = self.statement, self.call
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target: ast.expr = statement.targets[0]
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
            target = statement.target
        else:
            return None
        value = statement.value
        if value is None or call is None or not any(node is call for node in ast.walk(value)):
            return None
        names = self.frame.segment(target)
        if not names or "\n" in names or len(names) > 60:
            return None
        return names


def read_failing_line(context: ErrorContext) -> FailingLine | None:
    """The failing line of the innermost cell frame, read; None when there is none."""
    try:
        frames = context.frames()
        if not frames:
            return None
        frame = frames[0]
        statement = frame.statement()
        call = _call_on_line(frame)
        shown = call if call is not None else statement
        call_source = _one_line(frame.segment(shown)) if shown is not None else None
        if call_source is None:
            line = frame.source().splitlines()[frame.position.line - 1 : frame.position.line]
            call_source = _one_line(line[0].strip()) if line else None
        return FailingLine(
            frame,
            _where(frame, context),
            statement,
            call,
            call_source,
            _operands(frame, context),
        )
    except Exception:
        return None


def _one_line(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(part.strip() for part in text.splitlines())
    return flat if len(flat) <= _MAX_CALL_CHARS else flat[: _MAX_CALL_CHARS - 3] + "..."


def _where(frame: CellFrame, context: ErrorContext) -> str:
    files = context.cell_files
    number = files.get(frame.filename)
    latest = max(files.values()) if files else None
    cell = "this cell" if number is None or number == latest else f"cell In[{number}]"
    where = f"line {frame.position.line} of {cell}"
    function = _enclosing_function(frame)
    return f"{where} (in {code(function)})" if function else where


def _enclosing_function(frame: CellFrame) -> str | None:
    """The innermost function the failing line is in, as the user named it: a method of a
    class defined in the cell is ``MyLayer.call`` (the class the user wrote, not Keras's)."""
    tree = frame.tree()
    if tree is None:
        return None
    line = frame.position.line
    found: str | None = None
    body: list[ast.stmt] = tree.body
    owner: str | None = None
    while True:
        inner = next(
            (
                node
                for node in body
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.lineno <= line <= (node.end_lineno or node.lineno)
            ),
            None,
        )
        if inner is None:
            # Compound statements (if, for, with) nest functions too.
            nested = [
                child
                for node in body
                if node.lineno <= line <= (node.end_lineno or node.lineno)
                for name in ("body", "orelse", "finalbody")
                for child in getattr(node, name, None) or []
                if isinstance(child, ast.stmt)
            ]
            if not nested:
                return found
            body = nested
            continue
        if isinstance(inner, ast.ClassDef):
            owner = inner.name
        else:
            found = f"{owner}.{inner.name}" if owner else inner.name
            owner = None
        body = inner.body


def _function_bound_names(frame: CellFrame) -> set[str]:
    """Names the enclosing function binds (parameters, assignments): for frames known only
    from TensorFlow's message, the namespace's value of such a name is not the one the
    line used."""
    tree = frame.tree()
    if tree is None:
        return set()
    line = frame.position.line
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and (
            node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            names |= bound_names(node)
    return names


def _call_on_line(frame: CellFrame) -> ast.expr | None:
    """The expression the failing instruction belongs to (a call, an operator, an item
    read), else the first call of the line."""
    nodes = [node for part in frame.header() for node in ast.walk(part)]
    exact = [
        node
        for node in nodes
        if isinstance(node, (ast.Call, ast.BinOp, ast.Subscript)) and frame.at_position(node)
    ]
    if exact:
        return exact[0]
    on_line = [
        node for node in nodes if isinstance(node, ast.Call) and node.lineno == frame.position.line
    ]
    on_line.sort(key=lambda call: (call.lineno, call.col_offset))
    return on_line[0] if on_line else None


# ------------------------------------------------------------------ operands
def _references(node: ast.AST) -> list[ast.expr]:
    """The names, ``a.b`` chains and ``a[...]`` reads of an expression, outermost kept."""
    found: list[ast.expr] = []

    def visit(current: ast.AST) -> None:
        if _is_reference(current):
            found.append(current)  # type: ignore[arg-type]
            if isinstance(current, ast.Subscript):
                # `g[0, 0]`: what `g` is can be said even when the item cannot.
                visit(current.value)
                visit(current.slice)
            return
        if isinstance(current, (ast.Assign, ast.AnnAssign)):
            # `m = t @ v`, `self.w = ...`: what the target held before is unrelated to
            # the error; `x[0] = 1` does read the object assigned into.
            targets = current.targets if isinstance(current, ast.Assign) else [current.target]
            for target in targets:
                if isinstance(target, ast.Subscript):
                    visit(target.value)
            if current.value is not None:
                visit(current.value)
            return
        if isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute):
            # `model.predict(x)`: the object the method belongs to is an operand.
            visit(current.func.value)
            for child in (*current.args, *current.keywords):
                visit(child)
            return
        for child in ast.iter_child_nodes(current):
            visit(child)

    visit(node)
    return found


def _is_reference(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not _constant_index(node.slice):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _constant_index(index: ast.AST) -> bool:
    if isinstance(index, ast.Constant):
        return True
    if isinstance(index, ast.UnaryOp) and isinstance(index.operand, ast.Constant):
        return True
    if isinstance(index, ast.Slice):
        return all(part is None or _constant_index(part) for part in (index.lower, index.upper))
    if isinstance(index, ast.Tuple):
        return all(_constant_index(part) for part in index.elts)
    return False


def _operands(frame: CellFrame, context: ErrorContext) -> list[Operand]:
    nodes: list[ast.expr] = []
    for part in frame.header():
        nodes.extend(_references(part))
    nodes.sort(key=lambda node: (node.lineno, node.col_offset))
    hidden = _function_bound_names(frame) if frame.local_names is None else set()
    operands: list[Operand] = []
    seen: set[str] = set()
    for node in nodes:
        if len(operands) >= MAX_OPERANDS:
            break
        source = frame.segment(node)
        if not source or source in seen or "\n" in source:
            continue
        seen.add(source)
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name) and root.id in hidden:
            continue
        try:
            found, value = value_of(node, frame, context)
            described = describe(source, value) if found else None
        except Exception:
            described = None
        if described is not None:
            operands.append(described)
    return operands


def value_of(node: ast.AST, frame: CellFrame, context: ErrorContext) -> tuple[bool, Any]:
    """``ErrorContext.resolve`` plus what TensorFlow and Keras compute themselves:
    library attributes (``dense.kernel``, ``x.shape``), a ``tf.Module``'s or a layer's
    ``trainable_variables``, and constant indexes of tuples (``x.shape[1:]``)."""
    if isinstance(node, ast.Name):
        return context.lookup(node.id, frame)
    if isinstance(node, ast.Attribute):
        found, owner = value_of(node.value, frame, context)
        if not found:
            return False, None
        return _attribute(owner, node.attr)
    if isinstance(node, ast.Subscript):
        found, owner = value_of(node.value, frame, context)
        if not found or type(owner) not in (tuple, list, dict):
            return False, None
        index = _index(node.slice)
        if type(owner) is dict and index is None:
            # `batch["image"]`: a plain dict read with a constant key runs no user code.
            index = _key(node.slice)
        if index is None:
            return False, None
        try:
            return True, owner[index]
        except Exception:
            return False, None
    return False, None


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is str else None


def _index(node: ast.AST) -> Any:
    try:
        value = ast.literal_eval(node) if not isinstance(node, ast.Slice) else None
    except Exception:
        return None
    if isinstance(node, ast.Slice):
        parts = []
        for part in (node.lower, node.upper, node.step):
            if part is None:
                parts.append(None)
                continue
            try:
                literal = ast.literal_eval(part)
            except Exception:
                return None
            if type(literal) is not int:
                return None
            parts.append(literal)
        return slice(*parts)
    return value if type(value) is int else None


# Attributes listing what a layer or module tracks -> whether only trainable ones.
TRACKED_ATTRIBUTES = {
    "trainable_variables": True,
    "trainable_weights": True,
    "variables": False,
    "weights": False,
}


def _attribute(owner: Any, name: str) -> tuple[bool, Any]:
    found, value = instance_attribute(owner, name)
    if found:
        return True, value
    kind = _kind(owner)
    if name in TRACKED_ATTRIBUTES and kind in ("layer", "model", "module"):
        variables = tracked_variables(owner, kind, trainable=TRACKED_ATTRIBUTES[name])
        return (variables is not None), (tuple(variables) if variables is not None else None)
    if name == "shape" and kind in (
        "tensor",
        "variable",
        "keras_variable",
        "symbolic",
        "array",
        "keras_tensor",
    ):
        shape = _shape(owner)
        return (shape is not None), shape
    if is_library_class(type(owner)) and kind not in ("layer", "model", "module"):
        value = library_attribute(owner, name, _ABSENT)
        return (value is not _ABSENT), (None if value is _ABSENT else value)
    return False, None


_ABSENT: Any = object()


def tracked_variables(owner: Any, kind: str, trainable: bool) -> list[Any] | None:
    """What ``owner.trainable_variables`` (or ``.variables``) holds, rebuilt from stored
    state: user overrides of those properties never run."""
    if kind in ("layer", "model"):
        if trainable:
            return keras_trainable_variables(owner, _MAX_VARIABLES)
        return keras_variables(owner, with_seed_state=True, limit=_MAX_VARIABLES)
    variable_types = tuple(t for t in (_class("variable"),) if t is not None)
    module_type = _class("module")
    if not variable_types or module_type is None:
        return None
    return module_variables(
        owner,
        lambda value: any(t in _mro(value) for t in variable_types),
        lambda value: module_type in _mro(value),
        _MAX_VARIABLES,
        trainable_only=trainable,
    )


# ------------------------------------------------------------------ describing
def _class(key: str) -> type | None:
    return library_class(key)


_mro = class_mro
_kind = value_kind


def _dims(shape: Any) -> tuple[int | None, ...] | None:
    """A shape as a tuple: Python's tuple, NumPy's, TensorFlow's ``TensorShape``."""
    if type(shape) is tuple:
        dims = shape
    elif is_library_class(type(shape)):
        dims = library_attribute(shape, "_dims")
        if type(dims) is not tuple:
            return None
    else:
        return None
    if all(d is None or type(d) is int for d in dims):
        return dims
    return None


def _shape(value: Any) -> tuple[int | None, ...] | None:
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(value) is getattr(numpy, "ndarray", None):
        return tuple(int(d) for d in value.shape)
    return _dims(library_attribute(value, "shape"))


def _dtype(value: Any) -> str | None:
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(value) is getattr(numpy, "ndarray", None):
        name = value.dtype.name
        return name if type(name) is str else None
    dtype = library_attribute(value, "dtype")
    if type(dtype) is str:
        return dtype
    if dtype is not None and is_library_class(type(dtype)):
        name = library_attribute(dtype, "name")
        return name if type(name) is str else None
    return None


def show_shape(shape: tuple[int | None, ...]) -> str:
    inner = ", ".join("None" if d is None else str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


_TENSOR_WORDS = {
    "tensor": "tensor",
    "variable": "tf.Variable",
    "keras_variable": "Keras variable",
    "symbolic": "symbolic tensor (inside a traced function)",
    "keras_tensor": "Keras symbolic tensor",
    "array": "NumPy array",
}


# While a report reads the cell's values (``describing_once``), each tensor, variable or
# array is described once: a dozen checks describe the same values of an edited cell, each
# reading its class, shape and dtype again (~20 us a value). Kept by id with the value
# beside it (its id cannot be reused while the entry lives), and dropped when the report
# ends (``done_describing``), so no user object outlives the report. A tensor's kind, shape
# and dtype do not change while the monitor reads it.
_TensorParts = tuple[Any, str, tuple[int | None, ...] | None, str | None, str]
_DESCRIBED: dict[int, _TensorParts] | None = None


def describing_once() -> None:
    """From now until ``done_describing``, describe each tensor or array once."""
    global _DESCRIBED
    _DESCRIBED = {}


def done_describing() -> None:
    """Forget the values described since ``describing_once`` (the report is made)."""
    global _DESCRIBED
    _DESCRIBED = None


def describe(source: str, value: Any, nested: bool = False) -> Operand | None:
    """What ``value`` is, in a few words; None for modules, functions and classes. Items of
    a list are described one level deep only (``nested``), so the work stays bounded."""
    described = _DESCRIBED
    if described is not None:
        held = described.get(id(value))
        if held is not None and held[0] is value:
            _value, kind, shape, dtype, text = held
            return None if shape is None else Operand(source, kind, text, shape, dtype, value)
    kind = _kind(value)
    if kind in _TENSOR_WORDS:
        shape, dtype = _shape(value), _dtype(value)
        text = ""
        if shape is not None:
            words = " ".join(
                part for part in (show_shape(shape), dtype, _TENSOR_WORDS[kind]) if part
            )
            text = f"a {words}"
        if described is not None:
            described[id(value)] = (value, kind, shape, dtype, text)
        if shape is None:
            return None
        return Operand(source, kind, text, shape, dtype, value)
    if kind in ("layer", "model"):
        return Operand(source, kind, _describe_layer(value, kind), value=value)
    if kind == "module":
        return Operand(source, kind, _describe_module(value), value=value)
    if kind == "dataset":
        return Operand(source, kind, _describe_dataset(value), value=value)
    cls = type(value)
    if value is None:
        return Operand(source, "none", "None", value=value)
    if cls in _SCALARS:
        return Operand(source, "scalar", f"the Python {_type_name(cls)} {value!r}", value=value)
    if cls is str:
        shown = value if len(value) <= 40 else value[:37] + "..."
        return Operand(source, "scalar", f"the string {shown!r}", value=value)
    if cls in (list, tuple):
        if nested:
            count = "1 item" if len(value) == 1 else f"{len(value)} items"
            return Operand(source, "list", f"a {_type_name(cls)} of {count}")
        return _describe_sequence(source, value)
    if cls is dict:
        return Operand(source, "dict", f"a dict of {len(value)} keys", value=value)
    return None


def _describe_sequence(source: str, value: list[Any] | tuple[Any, ...]) -> Operand:
    noun = "list" if type(value) is list else "tuple"
    shape = tuple(value) if type(value) is tuple and _dims(value) is not None else None
    if shape is not None and value:
        return Operand(source, "shape", show_shape(shape), shape, value=value)
    if not value:
        return Operand(source, "list", f"an empty {noun}", value=value)
    items = []
    for item in value[:_MAX_LIST_ITEMS]:
        described = describe("", item, nested=True)
        items.append(described.description if described is not None else _type_name(type(item)))
    more = ", ..." if len(value) > _MAX_LIST_ITEMS else ""
    count = "1 item" if len(value) == 1 else f"{len(value)} items"
    return Operand(source, "list", f"a {noun} of {count} ({'; '.join(items)}{more})", value=value)


def _class_name(value: Any) -> str:
    try:
        name = _type_name(type(value))
    except Exception:
        return "object"
    return name if type(name) is str else "object"


def _describe_layer(layer: Any, kind: str) -> str:
    name = _class_name(layer)
    details = []
    for attribute in ("units", "filters", "kernel_size"):
        value = stored(layer, attribute)
        if type(value) is int or (type(value) is tuple and _dims(value) is not None):
            details.append(f"{attribute}={value}")
    if kind == "model":
        shapes = model_input_shapes(layer)
        built_on = built_input_shape(layer) if not shapes else None
        if shapes:
            details.append("input " + ", ".join(show_shape(shape) for shape in shapes))
        elif built_on is not None:
            details.append(f"built for input {show_shape(built_on)}")  # a subclassed model
        else:
            details.append("no input shape yet")
        return f"a Keras {name} model ({', '.join(details)})"
    built = stored(layer, "built")
    shape = layer_input_shape(layer)
    if built is True and shape is not None:
        details.append(f"built for input {show_shape(shape)}")
    elif built is False:
        details.append("not built yet")
    inside = f" ({', '.join(details)})" if details else ""
    return f"a Keras {name} layer{inside}"


def layer_input_shape(layer: Any) -> tuple[int | None, ...] | None:
    """The input shape a Keras 3 layer was built for (``_build_shapes_dict``)."""
    shapes = stored(layer, "_build_shapes_dict")
    if type(shapes) is not dict or len(shapes) != 1:
        return None
    return _dims(next(iter(shapes.values())))


def built_input_shape(layer: Any) -> tuple[int | None, ...] | None:
    """The one input shape Keras 3 kept when the layer or model was built (its
    ``_build_shapes_dict``, a ``TrackedDict``), the batch axis shown as None (any size)."""
    shapes = stored(layer, "_build_shapes_dict")
    if not isinstance(shapes, dict) or len(shapes) != 1:
        return None
    only = _dims(next(iter(dict.values(shapes))))
    return (None, *only[1:]) if only else None


def model_input_shapes(model: Any) -> list[tuple[int | None, ...]]:
    """The batch shapes of a Keras model's inputs, from what it stores: a functional
    model's ``_inputs``, a Sequential's ``_functional`` or its leading ``InputLayer``."""
    functional = stored(model, "_functional")
    source = functional if functional is not None else model
    inputs = stored(source, "_inputs")
    shapes = []
    if type(inputs) is list:
        for tensor in inputs[:_MAX_LIST_ITEMS]:
            shape = _dims(stored(tensor, "_shape"))
            if shape is not None:
                shapes.append(shape)
    if not shapes:
        layers = stored(model, "_layers")
        if type(layers) is list and layers:
            shape = _dims(stored(layers[0], "_batch_shape"))
            if shape is not None:
                shapes.append(shape)
    return shapes


def _describe_module(module: Any) -> str:
    name = _class_name(module)
    variables = tracked_variables(module, "module", trainable=True)
    if variables is None:
        return f"a tf.Module {name}"
    count = len(variables)
    held = (
        "no trainable tf.Variable"
        if count == 0
        else ("1 trainable tf.Variable" if count == 1 else f"{count} trainable tf.Variables")
    )
    return f"a tf.Module {name} holding {held}"


def _describe_dataset(dataset: Any) -> str:
    spec = library_attribute(dataset, "element_spec")
    parts = spec if type(spec) is tuple else (spec,)
    shown = []
    for part in parts[:_MAX_LIST_ITEMS]:
        shape, dtype = _dims(library_attribute(part, "shape")), _dtype(part)
        if shape is None:
            return "a tf.data.Dataset"
        shown.append(" ".join(p for p in (show_shape(shape), dtype) if p))
    if not shown:
        return "a tf.data.Dataset"
    return f"a tf.data.Dataset of elements {', '.join(shown)}"
