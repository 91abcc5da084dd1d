"""What is certain about a traced function or a Keras class from its definition alone,
told in the cell that defines it.

Judges (and learners) look for the explanation in the cell that holds the mistake, and
many mistakes sit in a cell that only defines something: a ``tf.function``, a Keras
layer's ``call``, a model's ``train_step``. The later cell that traces or fits may be far
away, may fail for another reason first, or may show nothing at all. What the definition
already decides:

* In a ``tf.function`` and in the methods Keras traces for fit/evaluate/predict (``call``,
  ``train_step``, ``test_step``, ``predict_step`` of a Keras ``Layer``/``Model``
  subclass): NumPy or Python ``random`` draws (one number frozen into the graph), ``print``
  (once per trace), counters and appends on outer names or on ``self`` (once per trace).
  Read with ``body_scan.code_facts`` (the bytecode of the user's own function, cached per
  code object) and told with ``body_advice.side_effect_text``; the registry is told the
  effect was explained, so the later trace does not repeat it.
* In a Keras ``Layer``/``Model`` subclass: a random tensor drawn once in ``__init__`` or
  ``build``, stored on ``self`` and used in ``call`` with ``+``, ``-`` or ``*`` (the same
  "noise" for every call and every sample; a projection used in ``matmul`` stays quiet),
  and, with Keras 3, a ``tf.Variable`` stored on ``self`` in ``__init__``/``build``
  (Keras 3 tracks only ``add_weight``: fit never trains it; the fit symptom in
  ``training/untracked_variables.py`` then only points back here).

Trigger: a completed cell whose source holds ``def `` or ``class `` (one substring test
otherwise), after TensorFlow was imported. Only names the cell binds at its top level are
read, and only when their code object was compiled from this cell. Nothing is called or
traced; values are read by exact type, never through ``repr`` or a property.
"""

from __future__ import annotations

import ast
import sys
import types
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.datasets import function_tree, random_fix
from jupyterlab_tfcoach.monitor.syntax import dotted_name, parsed_source
from jupyterlab_tfcoach.monitor.traces import body_scan as fx
from jupyterlab_tfcoach.monitor.traces.body_advice import (
    effect_source,
    function_globals,
    side_effect_text,
)
from jupyterlab_tfcoach.monitor.traces.identity import USER, library_roots, origin_of
from jupyterlab_tfcoach.monitor.training import user_code

SIDE_EFFECTS_SECTION = "side-effects"
# Python in a Keras layer's call (fit traces it) is taught with the layer's build/call split;
# in a custom train_step, with the step itself.
KERAS_CALL_SECTION = "keras-weights-in-build"
KERAS_STEP_SECTION = "custom-train-step"
PARAMETERS_SECTION = "parameters-are-variables"
RANDOM_STATE_SECTION = "frozen-python-values"
RECREATED_SECTION = "variables"
# The methods Keras runs inside the graph it traces for fit, evaluate and predict.
TRACED_METHODS = ("call", "train_step", "test_step", "predict_step")
KERAS_STEPS = frozenset({"train_step", "test_step", "predict_step"})
# The effects told at definition: certain from the code alone.
_TOLD_ACTIONS = frozenset({fx.RANDOM, fx.PRINT, fx.COUNTER, fx.MUTATION, fx.SUBSCRIPT})
_CALL_ACTIONS = frozenset({fx.RANDOM, fx.PRINT})
# What a helper called by name from a traced function is told for.
HELPER_ACTIONS = _CALL_ACTIONS
# Calls on the random modules that draw nothing (seeding, state).
_NOT_DRAWS = frozenset({"seed", "default_rng", "RandomState", "get_state", "set_state"})
_NOT_DRAWS |= frozenset({"getstate", "setstate", "Generator", "SeedSequence"})
_RANDOM_DRAWS = frozenset(
    {"normal", "uniform", "truncated_normal", "randn", "rand", "standard_normal", "bernoulli"}
)
_SHAPE_FREE = frozenset({"randn", "rand"})
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult)
MAX_NOTES = 4

# Classes whose raw tf.Variable was told at definition: (the class, weakly) -> attribute ->
# the cell that told it. The fit symptom then only points back to that cell.
_told_raw_variables: weakref.WeakKeyDictionary[type, dict[str, int | None]] = (
    weakref.WeakKeyDictionary()
)


# Classes whose ``__call__``/``call`` creates variables on every call, told at definition
# (the class, weakly) -> that cell; the training loop's symptom then points back to it.
_told_recreating: weakref.WeakKeyDictionary[type, int | None] = weakref.WeakKeyDictionary()


# Classes whose recreated variables a training loop's symptom already told in full.
_recreated_by_loop: weakref.WeakSet[type] = weakref.WeakSet()


def loop_told_recreating(cls: type) -> None:
    """The training loop of this cell told it in full: the definition does not repeat it."""
    try:
        _recreated_by_loop.add(cls)
    except TypeError:
        pass


def told_recreating(cls: type) -> tuple[bool, int | None]:
    """Whether ``cls``'s variables made on every call were told where it is defined."""
    try:
        if cls in _told_recreating:
            return True, _told_recreating[cls]
    except TypeError:
        pass
    return False, None


def told_raw_variable(cls: type, attribute: str) -> tuple[bool, int | None]:
    """Whether the raw ``tf.Variable`` ``self.<attribute>`` of ``cls`` was told where the
    class was defined, and that cell's number."""
    try:
        told = _told_raw_variables.get(cls)
    except TypeError:
        return False, None
    if told is None or attribute not in told:
        return False, None
    return True, told[attribute]


def remember_raw_variable(cls: type, attribute: str, cell: int | None) -> None:
    """Record that the raw ``tf.Variable`` ``self.<attribute>`` of ``cls`` was told in
    ``cell`` (the first telling stays)."""
    try:
        _told_raw_variables.setdefault(cls, {}).setdefault(attribute, cell)
    except TypeError:
        pass


def _module_name(value: Any) -> str:
    return str(getattr(value, "__name__", "")) if type(value) is types.ModuleType else ""


def _is_keras_class(value: Any) -> bool:
    if not isinstance(value, type):
        return False
    try:
        return any(
            k.__name__ in ("Layer", "Model") and str(k.__module__).startswith("keras")
            for k in value.__mro__
        )
    except Exception:
        return False


def _is_module_or_layer(value: type) -> bool:
    """A subclass of ``tf.Module`` or of a Keras ``Layer`` (types only, no user code)."""
    try:
        return any(
            (k.__name__ == "Module" and str(k.__module__).startswith("tensorflow"))
            or (k.__name__ == "Layer" and str(k.__module__).startswith("keras"))
            for k in value.__mro__
        )
    except Exception:
        return False


def _is_tf_function(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "Function" and str(cls.__module__).startswith("tensorflow.")


def _keras_major() -> int:
    keras = sys.modules.get("keras")
    version = getattr(keras, "__version__", "") if keras is not None else ""
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return 0


def _from_cell(function: Any, filename: str | None) -> bool:
    code = getattr(function, "__code__", None)
    return (
        type(function) is types.FunctionType
        and code is not None
        and (filename is None or code.co_filename == filename)
    )


class DefinitionChecker:
    """Reads what a cell defines; ``told`` marks the trace registry's effects as told."""

    def __init__(self, mark_told: Any = None, already_told: Any = None) -> None:
        # (body_key, label) -> None: the registry records the effect as explained now.
        self.mark_told = mark_told
        # (body_key, label) -> bool: the registry told it already (a trace this cell).
        self.already_told = already_told

    def notes(
        self,
        source: str,
        namespace: Mapping[str, Any],
        cell_file: str | None,
        execution_count: int | None,
    ) -> list[Note]:
        if "def " not in source and "class " not in source:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        found: list[Note] = []
        seen: set[int] = set()
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                cls = namespace.get(node.name)
                if _is_keras_class(cls):
                    found.extend(
                        self._class_notes(cls, node, source, namespace, cell_file, execution_count)
                    )
                if isinstance(cls, type) and _is_module_or_layer(cls):
                    found.extend(_recreated_notes(cls, node, source, execution_count))
                if isinstance(cls, type):
                    # Methods decorated with tf.function (a tf.Module's training step).
                    for value in list(vars(cls).values())[:200]:
                        if _is_tf_function(value) and id(value) not in seen:
                            seen.add(id(value))
                            found.extend(self._function_notes(value, cell_file))
            else:
                for name in _bound_names(node):
                    value = namespace.get(name)
                    if _is_tf_function(value) and id(value) not in seen:
                        seen.add(id(value))
                        found.extend(self._function_notes(value, cell_file))
            if len(found) >= MAX_NOTES:
                break
        return found[:MAX_NOTES]

    # ------------------------------------------------------------ side effects
    def _effect_notes(
        self,
        target: types.FunctionType,
        keras_step: bool,
        owner: str,
        method_of: str | None,
        self_attributes: dict[str, str],
    ) -> list[Note]:
        facts = fx.code_facts(target.__code__)
        notes = self._helper_notes(target, owner)
        if not facts.effects:
            return notes
        # Python state a ``call`` changes is told after fit by ``training/model_source.py``,
        # with the instance's values; its randomness and prints are told here.
        actions = _CALL_ACTIONS if method_of is not None and not keras_step else _TOLD_ACTIONS
        scope = fx.Scope(target, None)
        effects = [e for e in fx.live_effects(facts, scope) if e.action in actions and draws(e)]
        # No instance exists yet: an effect on ``self`` counts when the class's __init__ or
        # build gives the attribute a number (a counter) or a list/dict (appended to).
        for effect in facts.effects:
            if effect.scope != fx.SELF or facts.self_name is None or effect.action not in actions:
                continue
            kind = self_attributes.get(effect.name)
            if (effect.action == fx.COUNTER and kind == "number") or (
                effect.action in (fx.MUTATION, fx.SUBSCRIPT) and kind == "container"
            ):
                effects.append(effect)
        code = target.__code__
        body_key = (code.co_filename, code.co_firstlineno, str(target.__qualname__))
        for effect in dict.fromkeys(effects):
            key = (body_key, effect.label)
            if self.already_told is not None and self.already_told(key):
                continue
            text = side_effect_text(effect, owner, facts, keras_step, scope, None, None)
            if effect.action == fx.RANDOM:
                text += _rewritten_line(target, effect)
            if method_of is not None:
                text = (
                    f"fit, evaluate and predict run `{owner}` as a graph that TensorFlow "
                    f"traces once (Keras compiles it): {text}"
                )
            if self.mark_told is not None:
                self.mark_told(key)
            section = SIDE_EFFECTS_SECTION
            if method_of is not None:
                section = KERAS_STEP_SECTION if keras_step else KERAS_CALL_SECTION
            notes.append(reports.note(text, section))
        return notes

    def _helper_notes(self, target: types.FunctionType, owner: str) -> list[Note]:
        """Draws and prints in the learner's own functions that ``target`` calls by name:
        they run inside the trace too (a function passed to ``tf.numpy_function`` or
        ``tf.py_function`` is not called by name, and runs at every call)."""
        notes: list[Note] = []
        for helper, chain in helper_chains(target):
            facts = fx.code_facts(helper.__code__)
            if not facts.effects:
                continue
            scope = fx.Scope(helper, None)
            code = helper.__code__
            body_key = (code.co_filename, code.co_firstlineno, str(helper.__qualname__))
            for effect in fx.live_effects(facts, scope):
                if effect.action not in _CALL_ACTIONS or not draws(effect):
                    continue
                key = (body_key, effect.label)
                if self.already_told is not None and self.already_told(key):
                    continue
                name = str(helper.__qualname__)
                text = side_effect_text(effect, name, facts, False, scope, None, None)
                if effect.action == fx.RANDOM:
                    text += _rewritten_line(helper, effect)
                via = "".join(f", which calls `{c}`" for c in chain[1:])
                text = (
                    f"`{owner}` calls `{chain[0]}`{via} while TensorFlow traces it, so "
                    f"`{name}`'s Python runs inside that trace: {text}"
                )
                if self.mark_told is not None:
                    self.mark_told(key)
                notes.append(reports.note(text, SIDE_EFFECTS_SECTION))
        return notes

    def _function_notes(self, function: Any, cell_file: str | None) -> list[Note]:
        source = effect_source(function, library_roots())
        if source is None:
            return []
        target, _, keras_step = source
        if not _from_cell(target, cell_file):
            return []
        return self._effect_notes(target, keras_step, str(target.__qualname__), None, {})

    # ------------------------------------------------------------ Keras classes
    def _class_notes(
        self,
        cls: type,
        node: ast.ClassDef,
        source: str,
        namespace: Mapping[str, Any],
        cell_file: str | None,
        execution_count: int | None,
    ) -> list[Note]:
        methods = {
            m.name: m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        setup = [methods[name] for name in ("__init__", "build") if name in methods]
        # Only a traced method that changes Python state on self needs the setup's kinds.
        attributes = (
            _setup_attribute_kinds(setup)
            if any(
                fx.SELF in {e.scope for e in fx.code_facts(f.__code__).effects}
                for name in TRACED_METHODS
                if type(f := cls.__dict__.get(name)) is types.FunctionType
            )
            else {}
        )
        notes: list[Note] = []
        for name in TRACED_METHODS:
            function = cls.__dict__.get(name)
            if name not in methods or not _from_cell(function, cell_file):
                continue
            notes.extend(
                self._effect_notes(
                    function, name in KERAS_STEPS, f"{node.name}.{name}", node.name, attributes
                )
            )
        call = methods.get("call")
        if call is not None:
            notes.extend(_frozen_draw_notes(node, setup, call, source, namespace))
        if _keras_major() >= 3:
            notes.extend(_raw_variable_notes(cls, node, setup, source, namespace, execution_count))
        return notes


# ---------------------------------------------------------------- helpers
MAX_HELPERS = 8


def draws(effect: fx.Effect) -> bool:
    """False for a call on a random module that draws nothing (``np.random.seed(0)``)."""
    return effect.action != fx.RANDOM or effect.detail.rsplit(".", 1)[-1] not in _NOT_DRAWS


def _rewritten_line(function: types.FunctionType, effect: fx.Effect) -> str:
    """`` Line 3 of this cell becomes: `z = tf.random.normal(...)`.``: the whole statement,
    so a NumPy ``.astype(...)`` after the draw goes too (a tensor has none)."""
    parsed = function_tree(function)
    if parsed is None:
        return ""
    found = random_fix(*parsed, effect, function_globals(function))
    if found is None or found[2] is None:
        return ""
    line, _, fixed, _ = found
    place = user_code.place_of(
        function, function.__code__.co_firstlineno + line - 1, function_globals(function)
    )
    return f" As a whole, {place} becomes: `{fixed}`."


def _bound_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds: a ``def``, ``name = tf.function(...)``."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def helper_chains(
    target: types.FunctionType, depth: int = 3
) -> list[tuple[types.FunctionType, tuple[str, ...]]]:
    """The learner's functions ``target`` calls, directly or through each other (up to
    ``depth`` calls deep), each with the names of the calls that reach it."""
    found: list[tuple[types.FunctionType, tuple[str, ...]]] = []
    seen = {id(target)}
    frontier: list[tuple[types.FunctionType, tuple[str, ...]]] = [(target, ())]
    for _ in range(depth):
        following: list[tuple[types.FunctionType, tuple[str, ...]]] = []
        for function, chain in frontier:
            for helper in _called_helpers(function):
                if id(helper) in seen:
                    continue
                seen.add(id(helper))
                reached = (*chain, str(helper.__qualname__))
                found.append((helper, reached))
                following.append((helper, reached))
        frontier = following[:MAX_HELPERS]
        if not frontier or len(found) >= MAX_HELPERS:
            break
    return found[:MAX_HELPERS]


def _called_helpers(target: types.FunctionType) -> list[types.FunctionType]:
    """The learner's plain functions ``target`` calls by a global name (``f(...)``)."""
    names = {name for scope, name in fx.code_facts(target.__code__).reads if scope == fx.GLOBAL}
    if not names:
        return []
    method = user_code.method_source(target)
    if method is None:
        return []
    called = {
        node.func.id
        for node in ast.walk(method.tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    roots = library_roots()
    found: list[types.FunctionType] = []
    namespace = target.__globals__
    for name in sorted(names & called):
        value = namespace.get(name) if type(namespace) is dict else None
        if (
            type(value) is types.FunctionType
            and value is not target
            and origin_of(value.__code__.co_filename, roots) == USER
        ):
            found.append(value)
    return found[:MAX_HELPERS]


def _self_target(target: ast.AST) -> str | None:
    if (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    ):
        return target.attr
    return None


def _setup_attribute_kinds(setup: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> dict[str, str]:
    """``self.<name> = 0`` -> "number"; ``self.<name> = []`` / ``{}`` -> "container"."""
    kinds: dict[str, str] = {}
    for method in setup:
        for statement in ast.walk(method):
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            name = _self_target(statement.targets[0])
            value = statement.value
            if name is None:
                continue
            if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                kinds[name] = "number"
            elif isinstance(value, ast.List | ast.Dict) or (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in ("list", "dict")
                and not value.args
            ):
                kinds[name] = "container"
    return kinds


def _random_draw(value: ast.AST, namespace: Mapping[str, Any]) -> tuple[str, str] | None:
    """(family, function) for ``keras.random.normal(...)``, ``tf.random.uniform(...)``,
    ``np.random.normal(...)``: family "keras", "tf" or "numpy", by the module the first
    name holds."""
    if not isinstance(value, ast.Call):
        return None
    name = dotted_name(value.func)
    if not name or ".random." not in f".{name}":
        return None
    parts = name.split(".")
    function = parts[-1]
    if function not in _RANDOM_DRAWS or parts[-2] != "random":
        return None
    module = _module_name(namespace.get(parts[0]))
    if module.startswith("keras") or module.startswith("tensorflow.keras"):
        return "keras", function
    if module.startswith("tensorflow"):
        return "tf", function
    if module == "numpy":
        return "numpy", function
    return None


def _assigned_in(method: ast.AST, attribute: str) -> bool:
    for statement in ast.walk(method):
        targets: list[ast.AST] = []
        if isinstance(statement, ast.Assign):
            targets = list(statement.targets)
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
            targets = [statement.target]
        if any(_self_target(t) == attribute for t in targets):
            return True
    return False


def _local_names(method: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {a.arg for a in method.args.args[1:]}
    for statement in ast.walk(method):
        if isinstance(statement, ast.Name) and isinstance(statement.ctx, ast.Store):
            names.add(statement.id)
    return names


def _first_local(node: ast.AST, local: set[str]) -> str | None:
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in local:
            return child.id
    return None


def _namespace_name(namespace: Mapping[str, Any], module: str, fallback: str) -> str:
    for name, value in list(namespace.items())[:5000]:
        if type(name) is str and not name.startswith("_") and _module_name(value) == module:
            return name
    return fallback


def _frozen_draw_notes(
    node: ast.ClassDef,
    setup: list[ast.FunctionDef | ast.AsyncFunctionDef],
    call: ast.FunctionDef | ast.AsyncFunctionDef,
    source: str,
    namespace: Mapping[str, Any],
) -> list[Note]:
    """A random tensor drawn once in ``__init__``/``build`` and used in ``call`` with an
    element-wise ``+ - *`` as if it were drawn again for every call."""
    notes: list[Note] = []
    told: set[str] = set()
    for method in setup:
        for statement in ast.walk(method):
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            attribute = _self_target(statement.targets[0])
            draw = _random_draw(statement.value, namespace)
            if attribute is None or draw is None or attribute in told:
                continue
            if _assigned_in(call, attribute):
                continue
            operand = _elementwise_partner(call, attribute)
            if operand is None:
                continue
            told.add(attribute)
            drawn = " ".join((ast.get_source_segment(source, statement) or "").split())
            shape_of = _first_local(operand, _local_names(call))
            notes.append(
                reports.note(
                    _frozen_draw_text(
                        node.name,
                        method.name,
                        attribute,
                        drawn,
                        draw,
                        statement.value,
                        shape_of,
                        source,
                        namespace,
                    ),
                    RANDOM_STATE_SECTION,
                )
            )
    return notes


def _elementwise_partner(call: ast.AST, attribute: str) -> ast.AST | None:
    """The other operand of ``... * self.<attribute>`` (``+``, ``-``) in ``call``."""
    for child in ast.walk(call):
        if isinstance(child, ast.BinOp) and isinstance(child.op, _ELEMENTWISE):
            if _self_target(child.right) == attribute:
                return child.left
            if _self_target(child.left) == attribute:
                return child.right
    return None


def _frozen_draw_text(
    cls_name: str,
    method: str,
    attribute: str,
    drawn: str,
    draw: tuple[str, str],
    value: ast.expr,
    shape_of: str | None,
    source: str,
    namespace: Mapping[str, Any],
) -> str:
    family, function = draw
    text = (
        f"`{cls_name}.{method}` draws `self.{attribute}` once (`{drawn}`), and "
        f"`{cls_name}.call` uses that same tensor on every call: every batch and every "
        f'sample gets the same "random" values, for the whole training, so nothing is '
        "random after the first draw. Nothing raises."
    )
    args = value.args if isinstance(value, ast.Call) else []
    given = value.keywords if isinstance(value, ast.Call) else []
    keywords = [ast.get_source_segment(source, a) or "" for a in args[1:]]
    keywords += [
        f"{k.arg}={ast.get_source_segment(source, k.value)}"
        for k in given
        if k.arg not in ("shape", "seed", "size", "dtype")
    ]
    if shape_of is None or function in _SHAPE_FREE or family == "numpy":
        keywords = []
    extra = "".join(f", {k}" for k in keywords)
    if family == "keras":
        ops = _namespace_name(namespace, "keras.src.ops", "") or _namespace_name(
            namespace, "keras.ops", "keras.ops"
        )
        keras = _namespace_name(namespace, "keras", "keras")
        if shape_of is None:
            return text + (
                f" Draw it inside `call` with a `{keras}.random.SeedGenerator` kept on self."
            )
        return text + (
            f" Draw it inside `call` for each batch, seeded by a generator kept on self: in "
            f"`{method}` replace that line with `self.seed_generator = "
            f"{keras}.random.SeedGenerator(1)`, and in `call` write `{attribute} = "
            f"{keras}.random.{function if function != 'bernoulli' else 'uniform'}"
            f"({ops}.shape({shape_of}){extra}, seed=self.seed_generator)` and use "
            f"`{attribute}` in place of `self.{attribute}`."
        )
    tf = _namespace_name(namespace, "tensorflow", "tf")
    tf_function = {"randn": "normal", "standard_normal": "normal", "rand": "uniform"}.get(
        function, function
    )
    if tf_function not in ("normal", "uniform", "truncated_normal"):
        tf_function = "normal"
    if shape_of is None:
        return text + f" Draw it inside `call` with `{tf}.random.{tf_function}(...)`."
    return text + (
        f" Draw it inside `call` for each batch: delete that line from `{method}`, and in "
        f"`call` write `{attribute} = {tf}.random.{tf_function}({tf}.shape({shape_of}){extra})`"
        f" and use `{attribute}` in place of `self.{attribute}`."
    )


_INITIALIZERS = {
    "normal": ("RandomNormal", ("mean", "stddev")),
    "truncated_normal": ("TruncatedNormal", ("mean", "stddev")),
    "uniform": ("RandomUniform", ("minval", "maxval")),
}


def _add_weight_text(
    attribute: str, value: ast.AST | None, source: str, keras: str, name: str | None
) -> str | None:
    """``self.<attribute> = self.add_weight(...)`` for the initial value given to
    ``tf.Variable``; None when it cannot be written without knowing the shape."""
    named = f', name="{name}"' if name else ""
    if isinstance(value, ast.Constant) and type(value.value) in (int, float):
        return (
            f"self.{attribute} = self.add_weight(shape=(), "
            f"initializer={keras}.initializers.Constant({value.value!r}){named})"
        )
    if not isinstance(value, ast.Call):
        return None
    called = dotted_name(value.func) or ""
    function = called.rsplit(".", 1)[-1]
    shape_node = value.args[0] if value.args else None
    for keyword in value.keywords:
        if keyword.arg == "shape":
            shape_node = keyword.value
    shape = ast.get_source_segment(source, shape_node) if shape_node is not None else None
    if function in ("zeros", "ones") and shape:
        return f'self.{attribute} = self.add_weight(shape={shape}, initializer="{function}"{named})'
    if function == "constant" and value.args:
        inner = value.args[0]
        if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
            return _add_weight_text(attribute, inner, source, keras, name)
        return None
    if function in _INITIALIZERS and called.split(".")[-2:-1] == ["random"] and shape:
        initializer, names = _INITIALIZERS[function]
        arguments = [
            f"{names[i]}={ast.get_source_segment(source, a)}" for i, a in enumerate(value.args[1:3])
        ]
        arguments += [
            f"{k.arg}={ast.get_source_segment(source, k.value)}"
            for k in value.keywords
            if k.arg in names
        ]
        return (
            f"self.{attribute} = self.add_weight(shape={shape}, "
            f"initializer={keras}.initializers.{initializer}({', '.join(arguments)}){named})"
        )
    return None


def _raw_variable_notes(
    cls: type,
    node: ast.ClassDef,
    setup: list[ast.FunctionDef | ast.AsyncFunctionDef],
    source: str,
    namespace: Mapping[str, Any],
    execution_count: int | None,
) -> list[Note]:
    """A ``tf.Variable`` stored on self in ``__init__``/``build`` of a Keras 3 class."""
    notes: list[Note] = []
    for method in setup:
        for statement in ast.walk(method):
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            attribute = _self_target(statement.targets[0])
            value = statement.value
            if attribute is None or not isinstance(value, ast.Call):
                continue
            called = dotted_name(value.func) or ""
            if not called.endswith(".Variable") or called.count(".") != 1:
                continue
            if not _module_name(namespace.get(called.split(".")[0])).startswith("tensorflow"):
                continue
            keywords = {k.arg: k.value for k in value.keywords}
            trainable = keywords.get("trainable")
            if isinstance(trainable, ast.Constant) and trainable.value is False:
                continue
            initial = value.args[0] if value.args else keywords.get("initial_value")
            if isinstance(initial, ast.Constant) and type(initial.value) is int:
                continue  # an integer counter: nothing to train
            name_node = keywords.get("name")
            name = (
                name_node.value
                if isinstance(name_node, ast.Constant) and type(name_node.value) is str
                else None
            )
            statement_text = " ".join((ast.get_source_segment(source, statement) or "").split())
            keras = _namespace_name(namespace, "keras", "") or "keras"
            fix = _add_weight_text(attribute, initial, source, keras, name)
            text = (
                f"`{node.name}.{method.name}` keeps `self.{attribute}` as a raw "
                f"`tf.Variable` (`{statement_text}`). Keras 3 tracks only the weights a "
                f"layer makes with `self.add_weight`: this one will not be in the model's "
                f"`trainable_weights`, so fit computes no gradient for it and never updates "
                f"it, and saving the model leaves it out. Nothing raises: the layer uses it as "
                f"a constant."
            )
            if fix is not None:
                text += f" Create it as a weight instead: `{fix}`."
            else:
                text += (
                    f" Create it with `self.add_weight(shape=..., initializer=...)` in "
                    f"`{method.name}` instead."
                )
            if told_raw_variable(cls, attribute)[0]:
                continue  # a fit in this cell told it, with what it measured
            remember_raw_variable(cls, attribute, execution_count)
            notes.append(reports.note(text, PARAMETERS_SECTION))
    return notes


# ---------------------------------------------------------------- variables made per call
_GUARDS = (ast.If, ast.Try, ast.With, ast.FunctionDef, ast.ClassDef)


def _unguarded_creations(
    method: ast.FunctionDef | ast.AsyncFunctionDef, namespace: Mapping[str, Any]
) -> list[ast.Assign]:
    """``self.<name> = tf.Variable(...)`` statements of ``method`` that no ``if`` (nor
    ``try``/``with``) encloses: they run on every call."""
    found: list[ast.Assign] = []

    def visit(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, _GUARDS):
                continue
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                value = statement.value
                called = dotted_name(value.func) if isinstance(value, ast.Call) else None
                if (
                    _self_target(statement.targets[0]) is not None
                    and called is not None
                    and called.endswith(".Variable")
                    and called.count(".") == 1
                    and _module_name(namespace.get(called.split(".")[0])).startswith("tensorflow")
                ):
                    found.append(statement)
            if isinstance(statement, ast.For | ast.While):
                visit(statement.body)

    visit(method.body)
    return found


def _recreated_notes(
    cls: type, node: ast.ClassDef, source: str, execution_count: int | None
) -> list[Note]:
    methods = {
        m.name: m
        for m in node.body
        if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name in ("__call__", "call")
    }
    namespace = _class_globals(cls)
    try:
        if cls in _recreated_by_loop:
            return []
    except TypeError:
        return []
    for name, method in methods.items():
        created = _unguarded_creations(method, namespace)
        if not created:
            continue
        attributes = [_self_target(s.targets[0]) or "" for s in created]
        first = " ".join((ast.get_source_segment(source, created[0]) or "").split())
        listed = ", ".join(f"`self.{a}`" for a in attributes[:4]) + (
            f" and {len(attributes) - 4} more" if len(attributes) > 4 else ""
        )
        guard = f"if not hasattr(self, {attributes[0]!r}):"
        text = (
            f"`{node.name}.{name}` creates {listed} with `tf.Variable` on every call "
            f"(`{first}`{' ...' if len(created) > 1 else ''}): each call replaces the "
            f"variables with new ones at their initial values, so whatever an optimizer "
            f"or `assign_sub` changed is thrown away at the next call and training never "
            f"gets anywhere. Nothing raises. Create them once: in `__init__` when their "
            f"sizes are known there, or in `{name}` on the first call only: put `{guard}` "
            f"above those statements and indent them under it."
        )
        try:
            _told_recreating[cls] = execution_count
        except TypeError:
            pass
        return [reports.note(text, RECREATED_SECTION)]
    return []


def _class_globals(cls: type) -> Mapping[str, Any]:
    """The globals of the class's own functions (the cell's namespace)."""
    for value in list(vars(cls).values())[:50]:
        if type(value) is types.FunctionType and type(value.__globals__) is dict:
            return value.__globals__
    return {}
