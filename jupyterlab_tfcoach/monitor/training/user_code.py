"""What the user wrote, read from source: the cell's statements and a model's methods.

The fit symptoms (``fit_symptoms.py``) are measured; their causes are named from the code:
the loop that froze every layer, the initializer argument that set weights to zeros, the
``Dense(1, activation="softmax")`` call, the ``train_step`` that never applies its
gradients or never tracks its loss, the ``training=True`` written in ``call``. Sources
are parsed with ``ast`` (never run); a method's source comes from ``inspect`` (IPython
keeps each cell's text for it), guarded, bounded, and cached by code object.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import textwrap
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import instance_dict, is_library_class

MAX_SOURCE = 100_000
MAX_CACHED = 256
ZERO_INITIALIZERS = frozenset({"zeros", "zero", "Zeros", "zeros_initializer"})
APPLY_METHODS = frozenset({"apply", "apply_gradients", "minimize"})
ASSIGN_METHODS = frozenset({"assign", "assign_sub", "assign_add"})

_parsed: dict[str, ast.Module | None] = {}
_methods: dict[tuple[str, int, str], MethodSource | None] = {}


def parse(source: str) -> ast.Module | None:
    if not source or len(source) > MAX_SOURCE:
        return None
    if source in _parsed:
        return _parsed[source]
    # The tree the symptom checks read too (``syntax.parsed_source``): a cell's source is
    # parsed once for every reader of it.
    # Imported here: syntax.py imports (through errors/) the modules that import this one.
    from jupyterlab_tfcoach.monitor import syntax

    tree = syntax.parsed_source(source)
    if len(_parsed) > MAX_CACHED:
        _parsed.clear()
    _parsed[source] = tree
    return tree


# A loss the learner wrote lives in the notebook, never in these packages.
_LOSS_LIBRARIES = frozenset({"keras", "tensorflow", "numpy", "tf_keras", "jax", "torch"})
_MAX_LOSS_SOURCE = 20_000


def loss_return(function: Any) -> tuple[str, str, ast.Return] | None:
    """(its label, its source, its one ``return``) for a loss the notebook defines: a
    function, or a ``Loss`` subclass instance (its ``call``); None for a library's loss, a
    source that cannot be read or is long, or more than one ``return`` with a value."""
    label = getattr(function, "__name__", None)
    if not isinstance(function, types.FunctionType | types.MethodType):
        cls = type(function)
        if is_library_class(cls):
            return None
        call = getattr(cls, "call", None)
        if not isinstance(call, types.FunctionType):
            return None
        label, function = f"{cls.__name__}.call", call
    module = getattr(function, "__module__", None) or ""
    if module.split(".")[0] in _LOSS_LIBRARIES or getattr(function, "__code__", None) is None:
        return None
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return None
    if len(source) > _MAX_LOSS_SOURCE:
        return None
    tree = parse(source)
    if tree is None:
        return None
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1:
        return None
    return str(label), source, returns[0]


def _text(source: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(source, node) or ""
    return " ".join(segment.split())[:160]


def _first_line(source: str, node: ast.AST) -> str:
    lines = source.splitlines()
    number = getattr(node, "lineno", 0)
    return lines[number - 1].strip()[:160] if 0 < number <= len(lines) else ""


def _is_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _is_true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


# ----------------------------------------------------------------- the cell
@dataclass
class Freezing:
    """A statement of the cell that set ``trainable = False``."""

    line: int
    # Valid Python as printed: ``for layer in body_head.layers: layer.trainable = False``
    # (a loop whose body is one simple statement), ``for layer in body_head.layers: ...``
    # (a longer body), or ``base.trainable = False``.
    statement: str
    loop_over: str | None  # ``body_head.layers`` for a loop, else None
    simple_body: bool = False  # the loop's whole body is in ``statement``


def freezing_statements(source: str) -> list[Freezing]:
    tree = parse(source)
    if tree is None:
        return []
    found: list[Freezing] = []
    in_loops: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            for inner in ast.walk(node):
                if _sets_trainable_false(inner, node.target.id):
                    found.append(_loop_freezing(source, node))
                    in_loops.update(id(n) for n in ast.walk(node))
                    break
    for node in ast.walk(tree):
        if id(node) not in in_loops and _sets_trainable_false(node, None):
            found.append(Freezing(node.lineno, _text(source, node), None))
    found.sort(key=lambda freezing: freezing.line)
    return found


def valid_code(text: str) -> str | None:
    """``text`` if it parses as Python (what a report prints as code must), else None."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return text


def _loop_freezing(source: str, loop: ast.For) -> Freezing:
    over = _text(source, loop.iter)
    header = f"for {_text(source, loop.target)} in {over}:"
    body = loop.body[0]
    if len(loop.body) == 1 and not isinstance(body, _COMPOUND):
        one_line = valid_code(f"{header} {_text(source, body)}")
        if one_line is not None:
            return Freezing(loop.lineno, one_line, over, simple_body=True)
    return Freezing(loop.lineno, f"{header} ...", over)


_COMPOUND = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.If,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
)


def _sets_trainable_false(node: ast.AST, on_name: str | None) -> bool:
    if not isinstance(node, ast.Assign) or not _is_false(node.value):
        return False
    for target in node.targets:
        if isinstance(target, ast.Attribute) and target.attr == "trainable":
            if on_name is None or (
                isinstance(target.value, ast.Name) and target.value.id == on_name
            ):
                return True
    return False


@dataclass
class Argument:
    """A keyword argument the user wrote: ``kernel_init="zeros"`` in ``MyDense(16, ...)``."""

    line: int
    keyword: str
    text: str  # the keyword and its value as written
    call: str  # the called name, e.g. ``MyDense``


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_zero_initializer(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in ZERO_INITIALIZERS
    if isinstance(node, ast.Call):
        return _called_name(node) in ZERO_INITIALIZERS
    return False


def zero_initializer_arguments(source: str) -> list[Argument]:
    """Keyword arguments set to a zeros initializer (``"zeros"``, ``Zeros()``)."""
    tree = parse(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg and "init" in keyword.arg and _is_zero_initializer(keyword.value):
                    found.append(
                        Argument(
                            node.lineno,
                            keyword.arg,
                            _text(source, keyword),
                            _called_name(node),
                        )
                    )
    # The layer's construction (``Affine(8, w_init="zeros")``) names the cause better than
    # an ``add_weight`` inside a class defined in the same cell (often a bias).
    found.sort(key=lambda argument: (argument.call == "add_weight", argument.line))
    return found


def softmax_one_unit_calls(source: str) -> list[tuple[str, int]]:
    """Calls written with one unit and ``activation="softmax"``: ``Dense(1, activation=...)``,
    with their line."""
    tree = parse(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        activation = keywords.get("activation")
        if not (isinstance(activation, ast.Constant) and activation.value == "softmax"):
            continue
        units = keywords.get("units", node.args[0] if node.args else None)
        if isinstance(units, ast.Constant) and units.value == 1:
            found.append((_text(source, node), node.lineno))
    return found


# ---------------------------------------------------------------- places
MAX_CELLS_SEARCHED = 200
MAX_HISTORY_CELLS = 50  # earlier cells read for what the learner wrote


def cell_sources(namespace: Any, cell_source: str) -> tuple[list[str], list[int | None]]:
    """This cell's source, then earlier cells' (IPython's ``In`` list), latest first, and
    the execution count of each (None for this cell: ``In`` ends with it)."""
    sources: list[str] = [cell_source]
    counts: list[int | None] = [None]
    history = namespace.get("In") if hasattr(namespace, "get") else None
    if type(history) is list:
        last = len(history) - 1
        for index in range(last, max(0, last - MAX_HISTORY_CELLS), -1):
            text = history[index]
            if type(text) is not str or (index == last and text.strip() == cell_source.strip()):
                continue
            sources.append(text)
            counts.append(index)
    return sources, counts


def cell_place(count: int | None, line: int) -> str:
    """Where a line is, as the learner finds it: ``cell In[5], line 3`` (the ``In [5]:``
    Jupyter shows beside the cell), ``line 3 of this cell``."""
    return f"line {line} of this cell" if count is None else f"cell In[{count}], line {line}"


def place_of(function: Any, line: int, namespace: Any) -> str:
    """Where a line of ``function`` is, as the learner finds it: ``line 7`` in the running
    cell (or a file), ``cell In[3], line 7`` for a function defined in an earlier cell
    (its cell's text, kept by IPython in ``linecache``, found in the history ``In``: the
    ``In [3]:`` Jupyter shows beside the cell). Read only when a note names the line."""
    plain = f"line {line}"
    code = getattr(function, "__code__", None)
    history = namespace.get("In") if hasattr(namespace, "get") else None
    if code is None or type(history) is not list or not history:
        return plain
    try:
        text = "".join(linecache.getlines(code.co_filename)).strip()
    except Exception:
        return plain
    if not text:
        return plain
    last = len(history) - 1
    for index in range(last, max(0, last - MAX_CELLS_SEARCHED), -1):
        cell = history[index]
        if type(cell) is str and cell.strip() == text:
            return plain if index == last else f"cell In[{index}], line {line}"
    return plain


# ---------------------------------------------------------------- methods
@dataclass
class MethodSource:
    """A method's source, dedented, and where its first line is in its file."""

    source: str
    tree: ast.Module
    first_line: int


def method_source(function: Any) -> MethodSource | None:
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    key = (code.co_filename, code.co_firstlineno, code.co_name)
    if key in _methods:
        return _methods[key]
    found = None
    try:
        source = textwrap.dedent(inspect.getsource(function))
        tree = parse(source)
        if tree is not None:
            found = MethodSource(source, tree, code.co_firstlineno)
    except Exception:
        found = None
    if len(_methods) > MAX_CACHED:
        _methods.clear()
    _methods[key] = found
    return found


def keyword_parameters(method: MethodSource) -> list[str]:
    """The parameters of the method's ``def`` a caller can pass by keyword (as Keras
    passes ``training``): positional-only ones left out."""
    for node in method.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            return [a.arg for a in (*arguments.args, *arguments.kwonlyargs)]
    return []


@dataclass
class TrainStep:
    """What a custom ``train_step`` does, read from its source."""

    gradient_line: str | None = None  # ``grads = tape.gradient(loss, self.trainable_variables)``
    gradients_name: str | None = None  # ``grads``
    variables_text: str | None = None  # ``self.trainable_variables``
    applies: bool = False
    assigns: bool = False  # updates variables itself (``v.assign_sub(...)``)
    loss_name: str | None = None  # the name the loss is bound to (``loss``)
    uses_compute_loss: bool = False
    uses_compute_metrics: bool = False
    returned_keys: list[str] = field(default_factory=list)  # ``{"mae": ...}``
    returned_metrics: list[str] = field(default_factory=list)  # ``self.mae_metric``
    returned_names: set[str] = field(default_factory=set)  # plain names in returned values
    updates_loss: bool = False  # some ``update_state(<loss name>)``
    # The metrics updated with the loss (``self.total_tracker``): returning one of them
    # logs the loss under its key.
    loss_trackers: set[str] = field(default_factory=set)
    target_names: tuple[str, str] | None = None  # (``y_batch``, ``y_pred``) as passed on
    data_names: list[str] = field(default_factory=list)  # ``x_batch, y_batch = data``
    prediction_name: str | None = None  # ``y_pred = self(x_batch, training=True)``

    def targets(self) -> tuple[str, str] | None:
        """The names train_step gives the targets and the predictions, as it wrote them."""
        if self.target_names is not None:
            return self.target_names
        if len(self.data_names) >= 2 and self.prediction_name is not None:
            return (self.data_names[1], self.prediction_name)
        return None


def train_step_of(function: Any) -> TrainStep | None:
    method = method_source(function)
    if method is None:
        return None
    step = TrainStep()
    source = method.source
    for node in ast.walk(method.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in APPLY_METHODS:
                step.applies = True
            elif name in ASSIGN_METHODS:
                step.assigns = True
            elif name == "compute_loss":
                step.uses_compute_loss = True
                keywords = {k.arg: k.value for k in node.keywords if k.arg}
                _keep_targets(step, keywords.get("y"), keywords.get("y_pred"))
            elif name == "compute_metrics":
                step.uses_compute_metrics = True
                if len(node.args) >= 3:
                    _keep_targets(step, node.args[1], node.args[2])
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            _keep_data_and_prediction(step, method.tree, target, value)
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "gradient"
                and step.gradient_line is None
            ):
                step.gradient_line = _text(source, node)
                if isinstance(target, ast.Name):
                    step.gradients_name = target.id
                if len(value.args) >= 2:
                    step.variables_text = _text(source, value.args[1])
                if value.args and isinstance(value.args[0], ast.Name):
                    # What the tape differentiates is the loss, whatever its name.
                    step.loss_name = value.args[0].id
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=False):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    step.returned_keys.append(key.value)
                step.returned_names.update(
                    inner.id for inner in ast.walk(value) if isinstance(inner, ast.Name)
                )
                for inner in ast.walk(value):
                    if (
                        isinstance(inner, ast.Attribute)
                        and isinstance(inner.value, ast.Name)
                        and inner.value.id == "self"
                    ):
                        step.returned_metrics.append(f"self.{inner.attr}")
                        break
    if step.loss_name is not None:
        for node in ast.walk(method.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "update_state"
                and any(isinstance(a, ast.Name) and a.id == step.loss_name for a in node.args)
            ):
                step.updates_loss = True
                tracker = node.func.value
                if isinstance(tracker, ast.Attribute) and isinstance(tracker.value, ast.Name):
                    step.loss_trackers.add(f"{tracker.value.id}.{tracker.attr}")
    return step


def _keep_data_and_prediction(
    step: TrainStep, tree: ast.Module, target: ast.AST, value: ast.AST
) -> None:
    """``x, y = data`` (data: train_step's batch parameter) and ``y_pred = self(x, ...)``."""
    if (
        not step.data_names
        and isinstance(target, ast.Tuple)
        and isinstance(value, ast.Name)
        and value.id in _batch_parameters(tree)
        and all(isinstance(e, ast.Name) for e in target.elts)
    ):
        step.data_names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    if (
        step.prediction_name is None
        and isinstance(target, ast.Name)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "self"
    ):
        step.prediction_name = target.id


def _batch_parameters(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [a.arg for a in node.args.args[1:2]]
    return []


def _keep_targets(step: TrainStep, y: ast.AST | None, y_pred: ast.AST | None) -> None:
    if step.target_names is None and isinstance(y, ast.Name) and isinstance(y_pred, ast.Name):
        step.target_names = (y.id, y_pred.id)


@dataclass
class ForcedTraining:
    """A call in a method that passes a literal ``training=True`` (or ``=False``)."""

    line: int  # in the file (the cell) the method was defined in
    statement: str
    callee: str  # ``self.dropout``


def forced_training_calls(function: Any, flag: bool = True) -> list[ForcedTraining]:
    """The calls in ``function`` that pass ``training=<flag>`` as a literal."""
    method = method_source(function)
    if method is None:
        return []
    literal = _is_true if flag else _is_false
    found = []
    for node in ast.walk(method.tree):
        if isinstance(node, ast.Call) and any(
            k.arg == "training" and literal(k.value) for k in node.keywords
        ):
            statement = enclosing_statement(method.tree, node)
            written = valid_code(_text(method.source, statement)) if statement else None
            found.append(
                ForcedTraining(
                    method.first_line + node.lineno - 1,
                    written or _text(method.source, node),
                    _text(method.source, node.func),
                )
            )
    found.sort(key=lambda forced: forced.line)
    return found


def enclosing_statement(tree: ast.Module, inner: ast.AST) -> ast.stmt | None:
    """The innermost simple statement containing ``inner`` (what the user wrote on the
    line, whole, even when it spans several lines)."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND):
            if any(child is inner for child in ast.walk(node)):
                found = node
    return found


# ---------------------------------------------------------------- called functions
MAX_CALLED_FUNCTIONS = 8


def notebook_function(value: Any) -> types.FunctionType | None:
    """The Python function of a notebook function or ``tf.function`` (read from the
    ``Function``'s ``__dict__``, no attribute hook); None for anything else, or a function
    not defined in the notebook (its ``__module__`` is not ``__main__``)."""
    function: Any = value
    if type(value) is not types.FunctionType:
        attributes = instance_dict(value) if "Function" in type(value).__name__ else None
        function = attributes.get("_python_function") if attributes is not None else None
    if type(function) is not types.FunctionType or function.__module__ != "__main__":
        return None
    return function


@functools.lru_cache(maxsize=MAX_CACHED)
def called_names(source: str) -> frozenset[str]:
    """The plain names a cell calls anywhere in it (``train_step`` of ``train_step(...)``),
    read once per source."""
    from jupyterlab_tfcoach.monitor import syntax  # see parse

    tree = parse(source)
    if tree is None:
        return frozenset()
    return frozenset(
        n.func.id
        for n in syntax.walk_nodes(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    )


def called_function_sources(
    source: str, namespace: Mapping[str, Any], marker: str
) -> list[tuple[str, str]]:
    """(name, source) of the notebook's own functions the cell calls by name whose source
    holds ``marker``: a check that reads a step written in a function defined in an earlier
    cell tells it in the cell that runs it. Names in sorted order, a bounded number read."""
    found: list[tuple[str, str]] = []
    for name in sorted(called_names(source))[: 4 * MAX_CALLED_FUNCTIONS]:
        function = notebook_function(namespace.get(name))
        method = method_source(function) if function is not None else None
        if method is not None and marker in method.source:
            found.append((name, method.source))
    return found
