"""Silent bugs in the methods of the user's own Keras 3 classes, told when fit/evaluate/
predict ran them.

``fit``, ``evaluate`` and ``predict`` run a model's ``call`` (and its ``train_step``,
``test_step``, ``predict_step``) inside a compiled function unless the model was compiled
with ``run_eagerly=True``. What the user wrote in those methods is read here with ``ast``
(``user_code.method_source``: never run), for the model's class and the class of every
layer it holds that the user defined (a class of no TensorFlow/Keras package), and
four mistakes that raise nothing are named:

- Python state changed in a ``call`` (of the model or a layer): ``self.n_calls += 1``,
  ``self.seen.append(...)``, ``global count; count += 1``. The statement runs while
  Keras traces the function (two or three times), not once per batch. (The same in a
  ``train_step``/``test_step``/``predict_step`` is told by the traces' side-effect
  reasons, ``traces/body_advice.py``, which scan those methods when Keras traces them.)
  Told only when the attribute or global holds a Python number or list (its type, read from the
  instance's ``__dict__`` or the function's globals), so a Keras weight updated with
  ``assign_add`` stays silent; and only when the model was not compiled to run eagerly.
- Randomness in a custom ``call`` that ignores ``training``: ``tf.nn.dropout``, or
  ``tf.random.*``/``keras.random.*`` noise in a statement that reads ``call``'s input
  itself (``x + keras.random.normal(tf.shape(x))``), applied with no ``training``
  parameter, or outside any ``if``/conditional expression that reads it (and after no
  ``if not training: return ...``), or under ``if training is not None:`` (true for
  ``training=False`` as well: that test is named, ``if training:`` printed). ``predict``
  and ``evaluate`` are then random too.
  Told when ``predict``/``evaluate`` ran the model, or ``fit`` validated it. A sample
  drawn from values unpacked from the input (a VAE's sampling layer: random in predict
  on purpose) is not told, nor a Keras layer called inside (``self.drop(x)`` gets
  Keras's training flag from the outer call).
- ``training=True`` written in a custom ``test_step``/``predict_step``: validation and
  predictions run Dropout/BatchNormalization in training mode. Told only when the model
  has such a layer (what training mode does is said for the layers it has).
- Metrics held in module globals that a custom ``train_step`` updates
  (``loss_tracker.update_state(loss)`` with ``loss_tracker = keras.metrics.Mean(...)``
  at module level): fit resets only the model's metrics at each epoch, so History shows
  running averages over every epoch. Told when fit ran two epochs or more and the
  global is a Keras metric that neither Keras's stored metrics nor the user's own
  ``metrics`` property (its source) lists.

Cost: the per-class reading (``ClassReading``) is cached by class and the code objects of
its methods, so a class is parsed once; after each cell in which fit/evaluate/predict
ran, the monitor walks the model's layers (at most ``MAX_LAYERS``) to find the user's
classes. Nothing is read per step. Nothing here imports TensorFlow, runs a user property,
or raises: every failure leaves an entry out.
"""

from __future__ import annotations

import ast
import linecache
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import FunctionType, ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    keras_layers,
    keras_tracked_metrics,
    stored,
)
from jupyterlab_tfcoach.monitor.syntax import dotted_name, self_attribute_name
from jupyterlab_tfcoach.monitor.training import user_code

SIDE_EFFECTS_SECTION = "side-effects"
TRAINING_FLAG_SECTION = "training-argument"
TRAIN_STEP_SECTION = "custom-train-step"
MAX_LAYERS = 500
MAX_CLASSES = 20
MAX_CACHED = 128
# The methods Keras runs inside its compiled functions, and which of fit/evaluate/predict
# runs each (``test_step`` in fit only with validation data).
COMPILED_METHODS = {
    "call": ("fit", "evaluate", "predict"),
    "train_step": ("fit",),
    "test_step": ("evaluate", "validation"),
    "predict_step": ("predict",),
}
LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})
RANDOM_FUNCTIONS = frozenset({"dropout", "alpha_dropout"})
NOT_RANDOM = frozenset({"set_seed", "set_random_seed", "SeedGenerator", "Generator"})
NUMPY_NAMES = frozenset({"np", "numpy", "onp"})  # NumPy runs once, at trace time


@dataclass(frozen=True)
class ModelRun:
    """A model fit/evaluate/predict ran (weakly), and which of them (``fit`` with
    ``validated`` when fit also ran ``test_step`` on validation data)."""

    model: weakref.ReferenceType[Any]
    method: str
    validated: bool = False
    epochs: int | None = None


# ---------------------------------------------------------------- reading
@dataclass
class StateWrite:
    """A statement that changes Python state in a compiled method."""

    method: str
    line: int  # in the cell (file) the method was defined in
    statement: str
    name: str  # the attribute (``n_calls``) or the global's name
    on_self: bool
    kind: str  # "number" (``+=``/``= self.x + ...``) or "list" (``.append(...)``)
    increment: str | None = None  # ``1`` in ``self.n_calls += 1``


@dataclass
class RandomCall:
    line: int
    statement: str
    callee: str  # ``tf.nn.dropout``
    guarded_fix: str | None  # the statement, applied only when training (valid Python)
    # ``if training is not None:`` around it (as written), a test true in predict too.
    none_test: str | None = None
    none_test_line: int | None = None


@dataclass
class ClassReading:
    """What the methods of one user class do, read from their source once."""

    writes: list[StateWrite] = field(default_factory=list)
    random_calls: list[RandomCall] = field(default_factory=list)
    call_header: str | None = None  # ``def call(self, inputs):``
    call_has_training: bool = False
    forced: dict[str, list[user_code.ForcedTraining]] = field(default_factory=dict)
    global_metrics: list[str] = field(default_factory=list)  # names train_step updates
    metrics_property_names: set[str] = field(default_factory=set)
    init_values: dict[str, str] = field(default_factory=dict)  # ``n_calls`` -> ``0``


_readings: dict[int, tuple[weakref.ReferenceType[type], tuple[Any, ...], ClassReading]] = {}


def own_function(cls: type, name: str) -> Any | None:
    """``cls.<name>`` when a class of the user's defines it (never Keras's own)."""
    try:
        for klass in cls.__mro__:
            attributes = klass.__dict__
            if name in attributes:
                return None if is_library_class(klass) else attributes[name]
    except Exception:
        return None
    return None


def self_attribute(instance: Any, callee: str) -> Any | None:
    """What ``self.a.b``, as written in a method, names on ``instance``, read from the
    instances' ``__dict__`` (None for a name not on ``self``, or not stored)."""
    if not callee.startswith("self."):
        return None
    found = instance
    for part in callee.split(".")[1:]:
        attributes = instance_dict(found)
        if attributes is None or part not in attributes:
            return None
        found = attributes[part]
    return found


def _function_of(value: Any) -> Any | None:
    """The function behind a method, a property's getter or a static/class method."""
    kind = type(value)
    if kind is property:
        return value.fget
    if kind in (staticmethod, classmethod):
        return value.__func__
    return value if kind is FunctionType else None


def reading_of(cls: type) -> ClassReading:
    """The class's reading, from the cache while its methods' code objects stay the same."""
    names = (*COMPILED_METHODS, "__init__", "build", "metrics")
    functions = {name: _function_of(own_function(cls, name)) for name in names}
    codes = tuple(getattr(f, "__code__", None) for f in functions.values())
    cached = _readings.get(id(cls))
    if cached is not None and cached[0]() is cls and cached[1] == codes:
        return cached[2]
    reading = ClassReading()
    try:
        _read(reading, functions)
    except Exception:
        reading = ClassReading()
    if len(_readings) > MAX_CACHED:
        _readings.clear()
    _readings[id(cls)] = (weakref.ref(cls), codes, reading)
    return reading


def _read(reading: ClassReading, functions: dict[str, Any]) -> None:
    for name in COMPILED_METHODS:
        function = functions.get(name)
        method = user_code.method_source(function) if function is not None else None
        if method is None:
            continue
        definition = _definition(method.tree)
        if definition is None:
            continue
        if name == "call":
            # The step methods' Python effects are told by the traces (``body_advice``
            # reads the user's train_step/test_step/predict_step when Keras traces them);
            # a layer's ``call`` is read here only.
            reading.writes.extend(_state_writes(method, definition, name))
            _read_call(reading, method, definition)
        elif name in ("test_step", "predict_step"):
            forced = user_code.forced_training_calls(function)
            if forced:
                reading.forced[name] = forced
        if name == "train_step":
            reading.global_metrics = _global_metric_names(definition)
    for name in ("__init__", "build"):
        function = functions.get(name)
        method = user_code.method_source(function) if function is not None else None
        if method is not None:
            for attribute, value in _self_assignments(method).items():
                reading.init_values.setdefault(attribute, value)
    prop = functions.get("metrics")
    method = user_code.method_source(prop) if prop is not None else None
    if method is not None:
        reading.metrics_property_names = {
            node.id for node in ast.walk(method.tree) if isinstance(node, ast.Name)
        }


def _definition(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _parameters(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = definition.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _text(source: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(source, node) or ""
    return " ".join(segment.split())[:200]


def _locals(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function binds itself (parameters, assignments, loops, imports), minus
    those it declares global."""
    bound = set(_parameters(definition))
    declared: set[str] = set()
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.Global):
            declared.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound - declared


def _state_writes(
    method: user_code.MethodSource, definition: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> list[StateWrite]:
    source = method.source
    declared = {
        n for node in ast.walk(definition) if isinstance(node, ast.Global) for n in node.names
    }
    local = _locals(definition)
    found: list[StateWrite] = []

    def line(node: ast.AST) -> int:
        return method.first_line + getattr(node, "lineno", 1) - 1

    for node in ast.walk(definition):
        if isinstance(node, ast.AugAssign):
            target = node.target
            attribute = self_attribute_name(target)
            increment = _text(source, node.value) if isinstance(node.op, ast.Add) else None
            if attribute is not None:
                found.append(
                    StateWrite(
                        name, line(node), _text(source, node), attribute, True, "number", increment
                    )
                )
            elif isinstance(target, ast.Name) and target.id in declared:
                found.append(
                    StateWrite(
                        name, line(node), _text(source, node), target.id, False, "number", increment
                    )
                )
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            attribute = self_attribute_name(node.targets[0])
            reads_itself = attribute is not None and any(
                self_attribute_name(inner) == attribute for inner in ast.walk(node.value)
            )
            if reads_itself and attribute is not None:
                found.append(
                    StateWrite(name, line(node), _text(source, node), attribute, True, "number")
                )
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in declared:
                found.append(
                    StateWrite(name, line(node), _text(source, node), target.id, False, "number")
                )
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in LIST_METHODS
        ):
            holder = node.func.value
            attribute = self_attribute_name(holder)
            statement = user_code.enclosing_statement(method.tree, node)
            text = _text(source, statement if statement is not None else node)
            if attribute is not None:
                found.append(StateWrite(name, line(node), text, attribute, True, "list"))
            elif isinstance(holder, ast.Name) and holder.id not in local:
                found.append(StateWrite(name, line(node), text, holder.id, False, "list"))
    found.sort(key=lambda write: write.line)
    return found


def _is_random_call(node: ast.Call) -> str | None:
    """The dotted name of a TensorFlow/Keras random op the call applies, else None."""
    dotted = dotted_name(node.func)
    if dotted is None:
        return None
    parts = dotted.split(".")
    if parts[0] in ("self", *NUMPY_NAMES) or len(parts) < 2:
        return None
    last = parts[-1]
    if last in NOT_RANDOM or last.startswith("stateless"):
        return None
    if "random" in parts[:-1] or last in RANDOM_FUNCTIONS:
        return dotted
    return None


def _reads_training(node: ast.AST) -> bool:
    return any(
        (isinstance(inner, ast.Name) and inner.id == "training")
        or (isinstance(inner, ast.Attribute) and inner.attr == "training")
        for inner in ast.walk(node)
    )


def _tests_only_none(test: ast.AST) -> bool:
    """``training is not None`` / ``training != None``: true for ``training=False`` too
    (Keras passes False in predict and evaluate), so it guards nothing."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.IsNot, ast.NotEq))
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and _reads_training(test.left)
    )


def _none_tests(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, ast.If]:
    """ids of the nodes inside an ``if training is not None:`` body -> that ``if``."""
    inside: dict[int, ast.If] = {}
    for node in ast.walk(definition):
        if isinstance(node, ast.If) and _tests_only_none(node.test):
            for statement in node.body:
                for inner in ast.walk(statement):
                    inside.setdefault(id(inner), node)
    return inside


def _guarded_nodes(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """ids of the nodes that run only depending on ``training``: inside an ``if``, a
    conditional expression or a ``tf.cond``/``keras.ops.cond`` whose test reads it, or
    after a statement ``if <training test>: return ...`` of the same block. A test that
    only compares ``training`` with None guards nothing (``_tests_only_none``)."""
    guarded: set[int] = set()

    def mark(nodes: list[ast.AST]) -> None:
        for node in nodes:
            guarded.update(id(inner) for inner in ast.walk(node))

    for node in ast.walk(definition):
        if isinstance(node, ast.If) and _tests_only_none(node.test):
            mark(node.orelse)
        elif isinstance(node, (ast.If, ast.IfExp)) and _reads_training(node.test):
            mark([node])
        if isinstance(node, ast.Call) and node.args and _reads_training(node.args[0]):
            dotted = dotted_name(node.func) or ""
            if dotted.endswith(("cond", "in_train_phase")):  # tf.cond(training, ...)
                mark([node])
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for index, statement in enumerate(body):
                if (
                    isinstance(statement, ast.If)
                    and _reads_training(statement.test)
                    and any(isinstance(s, ast.Return) for s in statement.body)
                ):
                    mark(body[index + 1 :])
    return guarded


def _read_call(
    reading: ClassReading,
    method: user_code.MethodSource,
    definition: ast.FunctionDef | ast.AsyncFunctionDef,
) -> None:
    source = method.source
    parameters = _parameters(definition)
    reading.call_has_training = "training" in parameters
    header = source.splitlines()[definition.lineno - 1].strip() if source else ""
    reading.call_header = header if header.endswith(":") else None
    guarded = _guarded_nodes(definition)
    none_tests = _none_tests(definition)
    inputs = parameters[1] if len(parameters) > 1 else None
    for node in ast.walk(definition):
        if not isinstance(node, ast.Call) or id(node) in guarded:
            continue
        callee = _is_random_call(node)
        if callee is None:
            continue
        statement = user_code.enclosing_statement(method.tree, node)
        if statement is None:
            continue
        if callee.split(".")[-1] not in RANDOM_FUNCTIONS and not any(
            isinstance(n, ast.Name) and n.id == inputs for n in ast.walk(statement)
        ):
            continue  # a sample drawn from values (a VAE's ``z_mean + ... * epsilon``)
        none_test = none_tests.get(id(node))
        reading.random_calls.append(
            RandomCall(
                method.first_line + node.lineno - 1,
                _text(source, statement),
                callee,
                _guarded_statement(source, statement, node),
                _first_line_of(source, none_test) if none_test is not None else None,
                method.first_line + none_test.lineno - 1 if none_test is not None else None,
            )
        )
    reading.random_calls.sort(key=lambda call: call.line)


def _first_line_of(source: str, node: ast.AST) -> str:
    lines = source.splitlines()
    number = getattr(node, "lineno", 0)
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def _guarded_statement(source: str, statement: ast.stmt, random: ast.Call) -> str | None:
    """The statement rewritten to apply its randomness only in training (valid Python):
    ``x = f(x)`` -> ``if training: x = f(x)``; ``return tf.nn.dropout(h, ...)`` ->
    ``return tf.nn.dropout(h, ...) if training else h``."""
    text = _text(source, statement)
    if isinstance(statement, (ast.Assign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            name = targets[0].id
            value = statement.value
            if isinstance(statement, ast.AugAssign) or any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)
            ):
                return user_code.valid_code(f"if training: {text}")
        return None
    if isinstance(statement, ast.Return) and statement.value is random and random.args:
        kept = _text(source, random.args[0])
        return user_code.valid_code(f"return {_text(source, random)} if training else {kept}")
    return None


def _global_metric_names(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Plain names train_step calls ``update_state``/``result``/``reset_state`` on that it
    does not bind itself (module globals)."""
    local = _locals(definition)
    found: list[str] = []
    for node in ast.walk(definition):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("update_state", "result")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id not in local
            and node.func.value.id not in found
        ):
            found.append(node.func.value.id)
    return found


def _self_assignments(method: user_code.MethodSource) -> dict[str, str]:
    """``self.<attribute> = <value>`` in ``__init__``/``build``: attribute -> value text."""
    found: dict[str, str] = {}
    for node in ast.walk(method.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            attribute = self_attribute_name(node.targets[0])
            if attribute is not None:
                found.setdefault(attribute, _text(method.source, node.value))
    return found


# --------------------------------------------------------------- entries
def user_classes(model: Any) -> list[tuple[type, Any]]:
    """(class, one instance) for the model and each layer whose class the user wrote."""
    found: list[tuple[type, Any]] = []
    seen: set[int] = set()
    for layer in keras_layers(model, MAX_LAYERS):
        cls = type(layer)
        if id(cls) in seen or is_library_class(cls):
            continue
        seen.add(id(cls))
        found.append((cls, layer))
        if len(found) >= MAX_CLASSES:
            break
    return found


def class_display_name(cls: type) -> str:
    name = getattr(cls, "__name__", "")
    return name if type(name) is str and name else "the model"


def _is_keras_metric(value: Any) -> bool:
    try:
        return any(k.__name__ == "Metric" and is_library_class(k) for k in type(value).__mro__)
    except Exception:
        return False


def _keras_name(namespace: Mapping[str, Any]) -> str:
    for name, spelled in (("keras", "keras"), ("tf", "tf.keras")):
        if isinstance(namespace.get(name), ModuleType):
            return spelled
    return "keras"


class ModelSourceNotes:
    """One cell's notes about the user's classes of the models that ran."""

    def __init__(self, namespace: Mapping[str, Any], cell_source: str) -> None:
        self.namespace = namespace
        self.cell_source = cell_source
        self.notes: list[Note] = []
        self._told: set[tuple[str, int, str]] = set()

    def collect(self, runs: list[ModelRun]) -> list[Note]:
        for run in runs:
            model = run.model()
            if model is None:
                continue
            try:
                self._model(model, run)
            except Exception:
                continue
        return self.notes

    def _once(self, cause: str, key: int, detail: str = "") -> bool:
        if (cause, key, detail) in self._told:
            return False
        self._told.add((cause, key, detail))
        return True

    def _model(self, model: Any, run: ModelRun) -> None:
        ran = {run.method} | ({"validation"} if run.validated else set())
        eager = stored(model, "_run_eagerly") is True
        for cls, instance in user_classes(model):
            reading = reading_of(cls)
            if not eager:
                self._state_writes(cls, instance, reading, ran)
            if ran & {"evaluate", "predict", "validation"} and reading.random_calls:
                self._random_call(cls, instance, reading, model)
            for step, runs_in in (
                ("test_step", {"evaluate", "validation"}),
                ("predict_step", {"predict"}),
            ):
                if ran & runs_in and step in reading.forced:
                    self._forced_step(cls, step, reading.forced[step], model)
            if (
                instance is model
                and "fit" in ran
                and reading.global_metrics
                and (run.epochs or 0) >= 2
            ):
                self._global_metrics(cls, model, reading)

    # ------------------------------------------------------- Python state
    def _state_writes(self, cls: type, instance: Any, reading: ClassReading, ran: set[str]) -> None:
        for write in reading.writes:
            if not ran & set(COMPILED_METHODS[write.method]):
                continue
            if write.on_self:
                value = (instance_dict(instance) or {}).get(write.name)
            else:
                function = _function_of(own_function(cls, write.method))
                value = (getattr(function, "__globals__", None) or {}).get(write.name)
            # Types only (``issubclass(type(...))``: no ``__class__`` a user could define).
            if issubclass(type(value), list):  # Keras tracks a layer's lists as TrackedList
                kind = "list"
            elif type(value) in (int, float):
                kind = "number"
            else:
                continue
            if kind != write.kind:
                continue
            if not self._once("state", id(cls), write.name):
                continue
            self.notes.append(self._state_note(cls, write, reading, type(value)))

    def _state_note(
        self, cls: type, write: StateWrite, reading: ClassReading, value_type: type
    ) -> Note:
        name = class_display_name(cls)
        keras = _keras_name(self.namespace)
        where = f"`{name}.{write.method}`"
        what = f"`self.{write.name}`" if write.on_self else f"the global `{write.name}`"
        outcome = (
            "holds only what the traces added" if write.kind == "list" else "does not count batches"
        )
        method = _function_of(own_function(cls, write.method))
        place = user_code.place_of(method, write.line, self.namespace)
        head = (
            f"{where} changes {what} with Python ({place}: `{write.statement}`), "
            f"but fit, evaluate and predict run {where} as a compiled TensorFlow function: "
            f"that Python statement runs only while Keras traces it (two or three times), "
            f"not once per batch, so {what} {outcome}."
        )
        if write.kind == "number" and write.increment is not None:
            dtype = "int64" if value_type is int else "float32"
            if write.on_self:
                initial = reading.init_values.get(write.name)
                init = (
                    f'self.{write.name} = self.add_weight(shape=(), initializer="zeros", '
                    f'trainable=False, dtype="{dtype}")'
                )
                where_init = (
                    f"in `__init__`, replace `self.{write.name} = {initial}` with `{init}`"
                    if initial is not None and user_code.valid_code(f"x = {initial}")
                    else f"in `__init__`, create it as a weight: `{init}`"
                )
                update = f"self.{write.name}.assign_add({write.increment})"
                fix = (
                    f"Keep it in a non-trainable weight, which the compiled function "
                    f"updates on every batch: {where_init}, and in `{write.method}` write "
                    f"`{update}` instead of `{write.statement}`."
                )
            else:
                fix = (
                    f"Keep it in a variable created once, outside the function: "
                    f'`{write.name} = {keras}.Variable(0, dtype="{dtype}", trainable=False)`, '
                    f"and in `{write.method}` write `{write.name}.assign_add({write.increment})` "
                    f"instead of `{write.statement}` (no global statement needed)."
                )
            return reports.note(f"{head} {fix}", SIDE_EFFECTS_SECTION)
        fix = (
            "To see a value for every batch, collect it outside the compiled function (a "
            "callback's `on_train_batch_end(self, batch, logs)` gets the logs), or compile "
            "with `run_eagerly=True` while debugging (slower: no compiled function)."
        )
        return reports.note(f"{head} {fix}", SIDE_EFFECTS_SECTION)

    # ------------------------------------------------------- randomness
    def _random_call(self, cls: type, instance: Any, reading: ClassReading, model: Any) -> None:
        if not self._once("random", id(cls)):
            return
        first = reading.random_calls[0]
        name = class_display_name(cls)
        call = own_function(cls, "call")
        if first.none_test:
            where = "the model" if instance is model else f"`{name}` layers"
            fixed = user_code.valid_code(
                first.none_test.replace("training is not None", "training").replace(
                    "training != None", "training"
                )
                + " pass"
            )
            fixed = fixed.removesuffix(" pass") if fixed else "if training:"
            text = (
                f"`{name}.call` applies `{first.callee}` under `{first.none_test}` ("
                f"{user_code.place_of(call, first.none_test_line or 0, self.namespace)}), a "
                f"test that is true whenever Keras passes the "
                f"flag: it passes `training=True` to {where} in fit and `training=False` "
                f"in predict and evaluate, so the noise is added there too ("
                f"{user_code.place_of(call, first.line, self.namespace)}: "
                f"`{first.statement}`): two predictions of the same input "
                f"differ, and evaluate scores a randomly changed model. Test the flag's "
                f"value: write `{fixed}`."
            )
            self.notes.append(reports.note(text, TRAINING_FLAG_SECTION))
            return
        if reading.call_has_training:
            how = f"`{name}.call` takes `training` but applies `{first.callee}` whatever it is"
            signature = ""
        else:
            how = f"`{name}.call` has no `training` parameter and always applies `{first.callee}`"
            header = reading.call_header or ""
            fixed = header_with_training(header)
            signature = (
                f"give `call` the flag Keras fills in: `{fixed} ...`, and "
                if fixed
                else "give `call` a `training=None` parameter (Keras fills it in), and "
            )
        calls = reading.random_calls[:3]
        if all(call.guarded_fix for call in calls):
            guards = "; ".join(f"`{call.guarded_fix}`" for call in calls)
            guard = f"apply it only in training: {guards}"
        else:
            guard = f"apply {_listed([call.callee for call in calls])} only `if training:`"
        where = "the model" if instance is model else f"`{name}` layers"
        place = user_code.place_of(call, first.line, self.namespace)
        text = (
            f"{how} ({place}: `{first.statement}`), so predict and evaluate are "
            f"random too: two predictions of the same input differ, and evaluate scores a "
            f"randomly changed model. Keras passes `training=True` to {where} in fit and "
            f"`training=False` in predict and evaluate: {signature}{guard}. For dropout, "
            f"`keras.layers.Dropout` already does this."
        )
        self.notes.append(reports.note(text, TRAINING_FLAG_SECTION))

    # ------------------------------------------------------- test/predict step
    def _forced_step(
        self, cls: type, step: str, forced: list[user_code.ForcedTraining], model: Any
    ) -> None:
        # fit_symptoms imports this module: its reader of what training mode does is
        # imported when first needed.
        from jupyterlab_tfcoach.monitor.training.fit_symptoms import training_mode_effects

        effects = training_mode_effects(model, model)
        if not effects or not self._once("forced_step", id(cls), step):
            return
        first = forced[0]
        name = class_display_name(cls)
        fixed = user_code.valid_code(first.statement.replace("training=True", "training=False"))
        ran = (
            "evaluate and the validation of fit compute their loss and metrics"
            if step == "test_step"
            else "predict computes its predictions"
        )
        fix = f"Write `{fixed}`." if fixed else "Pass `training=False` there."
        text = (
            f"`{name}.{step}` calls `{first.callee}` with `training=True` ("
            f"{user_code.place_of(own_function(cls, step), first.line, self.namespace)}: "
            f"`{first.statement}`), so {ran} with the layers in training mode: "
            f"{'; '.join(effects)}. {fix}"
        )
        self.notes.append(reports.note(text, TRAINING_FLAG_SECTION))

    # ------------------------------------------------------- global metrics
    def _global_metrics(self, cls: type, model: Any, reading: ClassReading) -> None:
        function = _function_of(own_function(cls, "train_step"))
        module_globals = getattr(function, "__globals__", None) or {}
        tracked = {id(metric) for metric in keras_tracked_metrics(model)}
        names = [
            name
            for name in reading.global_metrics
            if _is_keras_metric(module_globals.get(name))
            and id(module_globals.get(name)) not in tracked
            and name not in reading.metrics_property_names
        ]
        if not names or not self._once("global_metrics", id(cls)):
            return
        keras = _keras_name(self.namespace)
        written = _module_assignments(function, self.cell_source)
        created = []
        for name in names:
            value = written.get(name)
            if value is None:
                metric = module_globals.get(name)
                label = stored(metric, "name")
                value = f"{keras}.metrics.{type(metric).__name__}(name={str(label)!r})"
            created.append(f"self.{name} = {value}")
        listed = _listed(names)
        verb = "is a module global" if len(names) == 1 else "are module globals"
        tracked_list = ", ".join(f"self.{n}" for n in names)
        cls_name = class_display_name(cls)
        text = (
            f"{listed} {verb} that `{cls_name}.train_step` updates, not metrics of the "
            f"model: fit resets only the model's metrics at the start of every epoch, so "
            f"{listed} keep accumulating over every epoch (and every later fit), and "
            f"History shows running averages, not each epoch's value. Make them attributes "
            f"of the model: in `__init__`, {' and '.join(f'`{c}`' for c in created)}; in "
            f"train_step, `self.{names[0]}` instead of `{names[0]}`"
            f"{' (and the same for the others)' if len(names) > 1 else ''}; and list them "
            f"in a `metrics` property so fit resets them: "
            f"`def metrics(self): return [{tracked_list}]`, decorated with @property."
        )
        self.notes.append(reports.note(text, TRAIN_STEP_SECTION))


def _listed(names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    return " and ".join(f"`{name}`" for name in unique)


def header_with_training(header: str) -> str | None:
    """``def call(self, inputs):`` -> ``def call(self, inputs, training=None):``."""
    match = re.fullmatch(r"(def\s+call\s*\((.*))\)\s*(->.*)?:", header)
    if match is None:
        return None
    fixed = f"{match.group(1).rstrip().rstrip(',')}, training=None){match.group(3) or ''}:"
    return fixed if user_code.valid_code(f"{fixed} ...") else None


def _module_assignments(function: Any, cell_source: str) -> dict[str, str]:
    """``NAME = <call>`` at the top level of the cell that defined ``function`` (IPython
    keeps each cell's text in ``linecache``) and of the current cell."""
    found: dict[str, str] = {}
    code = getattr(function, "__code__", None)
    sources = [cell_source]
    if code is not None:
        try:
            sources.insert(0, "".join(linecache.getlines(code.co_filename)))
        except Exception:
            pass
    for source in sources:
        tree = user_code.parse(source)
        for node in tree.body if tree is not None else ():
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
            ):
                text = _text(source, node.value)
                if user_code.valid_code(text):
                    found.setdefault(node.targets[0].id, text)
    return found


def model_source_notes(
    runs: list[ModelRun], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    """The notes for the user's classes of the models this cell's fit/evaluate/predict ran."""
    if not runs:
        return []
    try:
        return ModelSourceNotes(namespace, cell_source).collect(runs)
    except Exception:
        return []
