"""Error families of a Keras object's life: made, built, saved, loaded (see
``family_record.py`` for a family's shape). Two mistakes of the first months that Keras 3
reports in words of its own (and more of the same kind below):

- a model or layer asked for its weights or parameter count before it has any: a
  ``keras.Sequential`` without ``keras.Input`` is built (its weights made) only when it
  first sees data, so ``count_params()`` or ``layer.kernel`` before that raise;
- ``keras.models.load_model`` of a file holding a class the user wrote, in a process
  where Keras does not know that class by name (not registered, not passed as
  ``custom_objects``): the fix passes it, in the user's own call;
- ``load_weights`` into a new model of a class the user wrote, never called: its layers
  have no weights yet; the fix calls it once on zeros of the input shape a built model of
  the same class recorded;
- ``save`` of a model or layer of a user class whose ``__init__`` takes arguments, with
  no ``get_config``: the fix is the method, written from the arguments ``__init__`` keeps
  as attributes (when their values are plain numbers and strings);
- one optimizer object given to several models ("Unknown variable"): named with the
  model it was built for (another model in the namespace owning those variables) or the
  loop or function that compiles a new model with it each time round; the fix is the
  compile call given a new optimizer, made as the learner made the shared one
  (``explain_shared_optimizer``, called by ``keras.py``).

Read from the message and the failing line (``ast``), and the namespace's classes by
their names (``type``'s own slots): no user code runs.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import os
import re
import textwrap
import types
import zipfile
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    instance_attribute,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_keras import layers_item
from jupyterlab_tfcoach.monitor.errors.families_keras_api import class_in_namespace
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

# ------------------------------------------------------------------ not built yet
_NOT_BUILT_CALL = re.compile(
    r"You tried to call `(?P<method>\w+)` on layer '(?P<layer>[^']*)', but the layer "
    r"isn't built"
)
_NOT_BUILT_ATTRIBUTE = re.compile(r"You must build the layer before accessing `(?P<attribute>\w+)`")


def _receiver(line: FailingLine) -> str | None:
    """``model`` for ``model.count_params()`` / ``model.layers[0].kernel`` on the line."""
    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if isinstance(node, ast.Attribute):
                owner = node.value
                while isinstance(owner, (ast.Attribute, ast.Subscript, ast.Call)):
                    owner = owner.func if isinstance(owner, ast.Call) else owner.value
                if isinstance(owner, ast.Name):
                    return owner.id
    return None


def _read_not_built(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding:
    asked = (
        f"`{error.group('method')}()`"
        if error.matched(_NOT_BUILT_CALL)
        else f"`{error.group('attribute')}`"
    )
    holder = _receiver(line)
    named = f"`{holder}`" if holder else "this model"
    rule = (
        f"{asked} needs the weights, and {named} has none yet: a layer makes its weights "
        "when it first learns the shape of its input, and a `keras.Sequential` without "
        "`keras.Input` learns it only when it first sees data. Give the model its input "
        "shape where it is made, `keras.Input(shape=(features,))` as the first entry of "
        f"the Sequential list (or call {named} on a batch, or `fit` it, before asking)"
    )
    return Finding(rule + ".", None)


NOT_BUILT = ErrorFamily(
    "a model or layer asked for its weights before it was built",
    messages=(Message(_NOT_BUILT_CALL), Message(_NOT_BUILT_ATTRIBUTE)),
    read=_read_not_built,
    section="keras-model-api",
)


# ------------------------------------------------------------------ load_model of a user class
_UNKNOWN_CLASS = re.compile(r"Could not locate (?:class|function) '(?P<name>\w+)'")
_LOADERS = ("load_model", "load")


def _loader_call(line: FailingLine) -> ast.Call | None:
    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in _LOADERS:
                    return node
    return None


_CONFIG_CLASS = re.compile(r'"class_name": ?"(?P<name>\w+)"')
_MAX_CLASSES = 50


_MAX_CONFIG_BYTES = 5_000_000


def _saved_class_names(line: FailingLine, context: ErrorContext) -> list[str]:
    """The ``class_name`` entries of the ``config.json`` inside the ``.keras`` file the
    loader was given (a zip archive Keras wrote), in order; [] when it cannot be read.
    Keras's message quotes that config cut short, so the file is read instead."""
    call = _loader_call(line)
    if call is None or not call.args:
        return []
    written = call.args[0]
    if isinstance(written, ast.Constant):
        found, path = True, written.value  # a path written out in the call
    else:
        found, path = value_of(written, line.frame, context)
    if not found or not isinstance(path, (str, os.PathLike)):
        return []
    try:
        if not str(path).endswith(".keras") or not zipfile.is_zipfile(path):
            return []
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("config.json")
            if info.file_size > _MAX_CONFIG_BYTES:
                return []
            text = archive.read(info).decode("utf-8", "replace")
    except Exception:
        return []
    return [match.group("name") for match in itertools.islice(_CONFIG_CLASS.finditer(text), 5000)]


def _other_user_classes(names: list[str], first: str, context: ErrorContext) -> list[str]:
    """The other classes of the learner's own (Keras layers in the namespace) among the
    class names the saved file holds, in the order it names them."""
    found: list[str] = []
    for each in names:
        if each == first or each in found or len(found) >= _MAX_CLASSES:
            continue
        if class_in_namespace(each, context, ("layer",)):
            found.append(each)
    return found


def _read_unknown_class(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    name = error.group("name")
    if class_in_namespace(name, context, ("layer",)):
        what, where = "class", f"`class {name}`"
    elif type(context.namespace.get(name)) is types.FunctionType:
        # A loss or metric function compiled into the model: saved by its name only.
        what, where = "function", f"`def {name}`"
    else:
        return None
    # Keras stops at the first class it cannot find; the config it quotes names every
    # class the file needs, so the fix registers all of the learner's own, not one.
    names = [name, *_other_user_classes(_saved_class_names(line, context), name, context)]
    if len(names) > 1:
        listed = ", ".join(f"`{each}`" for each in names)
        what, where = "classes", "each `class` statement"
        rule = (
            f"the saved file names the classes {listed}, and Keras rebuilds a model from "
            "such names: only classes it knows by name can be rebuilt, and it stops at the "
            "first it does not know. Register every one of them by putting "
            f"`@keras.saving.register_keras_serializable()` on {where} (then run those "
            "cells again, before loading), or pass them all to the loader"
        )
    else:
        rule = (
            f"the saved file names the {what} `{name}`, and Keras rebuilds a model from such "
            f"names: only {'classes' if what == 'class' else 'functions'} it knows by name "
            "can be rebuilt. Register it by "
            f"putting `@keras.saving.register_keras_serializable()` on {where} (then run "
            f"that cell again, before loading), or pass it to the loader"
        )
    call = _loader_call(line)
    if call is None or any(item.arg == "custom_objects" for item in call.keywords):
        return Finding(rule + ".", None)
    written = segment_of(line, call)
    if not written.endswith(")") or "\n" in written:
        return Finding(rule + ".", None)
    opened = written[:-1].rstrip()
    separator = "" if opened.endswith("(") else ", "
    entries = ", ".join(f'"{each}": {each}' for each in names)
    replacement = f"{opened.rstrip(',')}{separator}custom_objects={{{entries}}})"
    statement = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, statement, call, replacement)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


UNKNOWN_CLASS = ErrorFamily(
    "loading a saved model whose class Keras does not know by name",
    messages=(Message(_UNKNOWN_CLASS),),
    read=_read_unknown_class,
    section="keras-saving",
)


# ------------------------------------------------------------------ a config its class refuses
# Keras wraps the error of rebuilding a user's class from its saved config (``cls(**config)``)
# in its own TypeErrors; the cause is the innermost one, read from the exception chain.
_NOT_DESERIALIZED = re.compile(
    r"could not be deserialized properly|Error when deserializing class '(?P<name>\w+)'"
)
_INIT_KEYWORD = re.compile(
    r"(?P<cls>\w+)\.__init__\(\) got an unexpected keyword argument '(?P<keyword>\w+)'"
)
_INIT_MISSING = re.compile(
    r"(?P<cls>\w+)\.__init__\(\) missing \d+ required positional arguments?: (?P<names>.+)$"
)
# What a Keras layer's own get_config writes, which its ``__init__`` passes to Keras's.
_BASE_KEYWORDS = ("name", "trainable", "dtype")
_MAX_CHAIN = 20


def innermost_cause(exception: BaseException) -> BaseException:
    """The first error of a chain of wrapping ones (``raise ... from e``, or raised while
    handling ``e``): Keras's loaders wrap the learner's class's own error twice."""
    seen = exception
    for _ in range(_MAX_CHAIN):
        inner = seen.__cause__ or seen.__context__
        if inner is None:
            break
        seen = inner
    return seen


def _user_class_named(name: str, context: ErrorContext) -> type | None:
    value = context.namespace.get(name)
    if not isinstance(value, type) or not class_in_namespace(name, context, ("layer",)):
        return None
    return value


def _init_parameters(cls: type) -> list[str] | None:
    """``self, factor`` of the class's own ``__init__`` (its code object: no user code)."""
    init = type.__dict__["__dict__"].__get__(cls).get("__init__")
    if type(init) is not types.FunctionType:
        return None
    code_object = init.__code__
    if code_object.co_flags & 0x0C or init.__defaults__ or code_object.co_kwonlyargcount:
        return None  # *args/**kwargs or defaults: not the plain def this fix rewrites
    return list(code_object.co_varnames[: code_object.co_argcount])


def _stored_as(cls: type, parameter: str) -> str:
    """The attribute ``__init__`` stores a parameter in (``self.by = by`` -> ``by``), read
    from the class's source in the cells (``inspect``, no user code); else its name."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    except Exception:
        return parameter
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Name)
            and node.value.id == parameter
        ):
            target = node.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                return target.attr
    return parameter


def _read_not_deserialized(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if _loader_call(line) is None:
        return None
    cause = innermost_cause(context.exception)
    message = str(cause.args[0]) if cause.args and type(cause.args[0]) is str else ""
    keyword = _INIT_KEYWORD.search(message)
    if keyword is not None:
        cls = _user_class_named(keyword.group("cls"), context)
        parameters = _init_parameters(cls) if cls is not None else None
        if parameters is None or keyword.group("keyword") not in _BASE_KEYWORDS:
            return None
        name = keyword.group("cls")
        written = ", ".join(parameters)
        fixed = ", ".join([*parameters, "**kwargs"])
        return Finding(
            f"Keras rebuilds `{name}` from its saved config as `{name}(**config)`, and that "
            f"config holds what Keras's own `get_config` writes for every layer (`name`, "
            f"`trainable`, `dtype`) besides yours: `def __init__({written})` takes no "
            f"`{keyword.group('keyword')}`. Accept those keywords and pass them on to "
            "Keras's `__init__` (then run the class's cell, save the model again and load it).",
            f"{code(f'def __init__({fixed}):')} with {code('super().__init__(**kwargs)')}",
        )
    missing = _INIT_MISSING.search(message)
    if missing is None:
        return None
    name = missing.group("cls")
    cls = _user_class_named(name, context)
    names = re.findall(r"'(\w+)'", missing.group("names"))
    if cls is None or not names:
        return None
    entries = ", ".join(f'"{each}": self.{_stored_as(cls, each)}' for each in names)
    listed = ", ".join(f"`{each}`" for each in names)
    return Finding(
        f"Keras rebuilds `{name}` from its saved config as `{name}(**config)`, and the "
        f"config `{name}.get_config` returned has no {listed}, which `{name}.__init__` "
        "requires: `get_config` must return every argument of the constructor. Add them "
        "to what it returns (then run the class's cell, save the model again and load it).",
        code(f"return {{**super().get_config(), {entries}}}"),
    )


NOT_DESERIALIZED = ErrorFamily(
    "loading a saved model whose class cannot be rebuilt from the config it saved",
    messages=(Message(_NOT_DESERIALIZED),),
    exception_type="TypeError",
    read=_read_not_deserialized,
    section="keras-saving",
)


# ------------------------------------------------------------------ weights of another model
_WEIGHT_COUNT = re.compile(
    r"You called `set_weights\(weights\)` on layer '(?P<layer>[^']*)' with a weight list of "
    r"length (?P<given>\d+), but the layer was expecting (?P<expected>\d+) weights"
)
_WEIGHT_SHAPE = re.compile(
    r"Layer (?P<layer>\S+) weight shape \((?P<expected>[^)]*)\) is not compatible with "
    r"provided weight shape \((?P<given>[^)]*)\)"
)
# ``load_weights`` of a file another architecture wrote (Keras 3's own words).
_NOT_LOADED = re.compile(r"A total of \d+ objects could not be loaded")
_MAX_LAYERS = 500


def _layer_weight_shapes(model: object) -> list[tuple[str, list[tuple[int, ...]]]] | None:
    """(name, its weights' shapes) of each layer of a model holding weights, in order,
    read from what Keras stores (``library_attribute``: no user property runs)."""
    layers = library_attribute(model, "layers")
    if type(layers) is not list:
        return None
    found = []
    for layer in layers[:_MAX_LAYERS]:
        weights = library_attribute(layer, "weights")
        name = library_attribute(layer, "name")
        if type(weights) is not list or type(name) is not str:
            return None
        shapes = []
        for weight in weights:
            shape = library_attribute(weight, "shape")
            try:
                shapes.append(tuple(int(size) for size in shape))
            except Exception:
                return None
        if shapes:
            found.append((name, shapes))
    return found


def _weights_source(line: FailingLine, context: ErrorContext) -> tuple[ast.expr, str] | None:
    """``b.set_weights(a.get_weights())`` on the line: (``b``, ``"a"``); for
    ``b.load_weights("a.weights.h5")``, the model whose ``save_weights`` wrote that path
    in the cells."""
    from jupyterlab_tfcoach.monitor.errors.families_keras_usage import saved_by

    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and len(node.args) == 1
            ):
                continue
            argument = node.args[0]
            if (
                node.func.attr == "set_weights"
                and isinstance(argument, ast.Call)
                and isinstance(argument.func, ast.Attribute)
                and argument.func.attr == "get_weights"
            ):
                source = segment_of(line, argument.func.value)
                return (node.func.value, source) if source else None
            if node.func.attr == "load_weights":
                found, path = (
                    (True, argument.value)
                    if isinstance(argument, ast.Constant)
                    else value_of(argument, line.frame, context)
                )
                source = saved_by(path, context) if found and type(path) is str else None
                return (node.func.value, source) if source else None
    return None


def _weight_shapes_of_layer(layer: object) -> list[tuple[int, ...]] | None:
    weights = library_attribute(layer, "weights")
    if type(weights) is not list:
        return None
    shapes = []
    for weight in weights:
        try:
            shapes.append(tuple(int(size) for size in library_attribute(weight, "shape")))
        except Exception:
            return None
    return shapes


def _keras_value(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[bool, Any]:
    """``value_of``, and ``model.layers[i]`` read through Keras's own ``layers``."""
    picked = layers_item(node)
    if picked is not None:
        model_node, index = picked
        found, model = value_of(model_node, line.frame, context)
        layers = library_attribute(model, "layers") if found else None
        if type(layers) is list and -len(layers) <= index < len(layers):
            return True, layers[index]
        return False, None
    return value_of(node, line.frame, context)


def _layer_given_a_models_weights(line: FailingLine, context: ErrorContext) -> Finding | None:
    """``model_b.layers[0].set_weights(model_a.get_weights())``: one layer given the whole
    model's list (every layer's weights in order). The fix takes the weights of the
    source's layer whose weights have the target's shapes: the one at the same index of
    ``layers`` when the target is written ``x.layers[i]`` and it matches, else the only
    one that matches."""
    for node in ast.walk(line.statement) if line.statement is not None else ():
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "set_weights"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Call)
            and isinstance(node.args[0].func, ast.Attribute)
            and node.args[0].func.attr == "get_weights"
            and not node.args[0].args
        ):
            continue
        target_node, source_node = node.func.value, node.args[0].func.value
        found_target, target = _keras_value(target_node, line, context)
        found_source, source = _keras_value(source_node, line, context)
        if not (found_target and found_source):
            return None
        if library_attribute(target, "layers") is not None:
            return None  # a model: the architectures family's reading
        layers = library_attribute(source, "layers")
        wanted = _weight_shapes_of_layer(target)
        if type(layers) is not list or not wanted:
            return None
        matching = [
            index
            for index, layer in enumerate(layers[:_MAX_LAYERS])
            if _weight_shapes_of_layer(layer) == wanted
        ]
        target_name, source_name = segment_of(line, target_node), segment_of(line, source_node)
        if not matching or not target_name or not source_name:
            return None
        index = None
        if (
            isinstance(target_node, ast.Subscript)
            and isinstance(target_node.value, ast.Attribute)
            and target_node.value.attr == "layers"
            and isinstance(target_node.slice, ast.Constant)
            and target_node.slice.value in matching
        ):
            index = target_node.slice.value
        elif len(matching) == 1:
            index = matching[0]
        total = sum(len(_weight_shapes_of_layer(layer) or []) for layer in layers[:_MAX_LAYERS])
        shapes = ", ".join(str(shape) for shape in wanted)
        rule = (
            f"`{target_name}` is one layer, with {len(wanted)} weights ({shapes}), and "
            f"`{source_name}.get_weights()` is the whole model's list, {total} arrays, every "
            f"layer's weights in order: a layer's `set_weights` takes its own weights only, "
            f"from the matching layer of `{source_name}`"
        )
        if index is None:
            return Finding(rule + ".", None)
        statement = line.statement
        fixed = (
            rewrite(line.frame, statement, source_node, f"{source_name}.layers[{index}]")
            if statement is not None
            else None
        )
        return Finding(
            rule + f", `{source_name}.layers[{index}]`.",
            code(fixed) if fixed and "\n" not in fixed else None,
        )
    return None


def _read_other_weights(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.matched(_WEIGHT_COUNT) or error.matched(_WEIGHT_SHAPE):
        layer = _layer_given_a_models_weights(line, context)
        if layer is not None:
            return layer
    located = _weights_source(line, context)
    if located is None:
        return None
    target_node, source_name = located
    target_name = segment_of(line, target_node)
    found_target, target = value_of(target_node, line.frame, context)
    found_source, source = context.lookup(source_name, line.frame)
    loading = error.matched(_NOT_LOADED)
    if not (found_target and found_source) or not target_name or not source_name:
        return None
    mine, theirs = _layer_weight_shapes(target), _layer_weight_shapes(source)
    if not mine or not theirs:
        return None
    count_mine = sum(len(shapes) for _, shapes in mine)
    count_theirs = sum(len(shapes) for _, shapes in theirs)
    same = 0
    for (_, shapes_mine), (_, shapes_theirs) in zip(mine, theirs, strict=False):
        if shapes_mine != shapes_theirs:
            break
        same += 1
    if same == len(mine) == len(theirs):
        return None  # the same architecture: another cause
    given = (
        "the file `" + source_name + ".save_weights` wrote"
        if loading
        else (f"`{source_name}.get_weights()`")
    )
    method = "load_weights" if loading else "set_weights"
    rule = (
        f"`{target_name}.{method}` takes one array per weight of `{target_name}`, in "
        f"order, each of its weight's shape, and {given} comes from "
        f"another architecture: {count_theirs} arrays for {count_mine} weights"
    )
    if same < min(len(mine), len(theirs)):
        name_mine, shapes_mine = mine[same]
        name_theirs, shapes_theirs = theirs[same]
        listed_mine = ", ".join(str(shape) for shape in shapes_mine)
        listed_theirs = ", ".join(str(shape) for shape in shapes_theirs)
        rule += (
            f"; the first layer that differs is `{target_name}`'s '{name_mine}' "
            f"({listed_mine}) against `{source_name}`'s '{name_theirs}' ({listed_theirs})"
        )
    else:
        rule += f"; one model has {abs(len(mine) - len(theirs))} more layers with weights"
    if same == 0:
        return Finding(
            rule + ": no layer matches, so there are no weights to copy between them.", None
        )
    fix = (
        f"for mine, theirs in zip({target_name}.layers[:{same}], "
        f"{source_name}.layers[:{same}]): mine.set_weights(theirs.get_weights())"
    )
    if _layer_count_before_weights(target) != _layer_count_before_weights(source):
        return Finding(rule + ".", None)
    matching = "layer matches" if same == 1 else f"{same} layers match"
    memory = (
        f" (from `{source_name}` as it is now, which the file holds unless it trained since)"
        if loading
        else ""
    )
    return Finding(
        rule + f". Only the first {matching}: copy the weights layer by layer, for those{memory}.",
        code(fix),
    )


def _layer_count_before_weights(model: object) -> int | None:
    """How many layers without weights come first (an ``InputLayer`` in a functional
    model): the zip of ``layers`` lines the two models' layers up only when equal."""
    layers = library_attribute(model, "layers")
    if type(layers) is not list:
        return None
    for index, layer in enumerate(layers[:_MAX_LAYERS]):
        weights = library_attribute(layer, "weights")
        if type(weights) is list and weights:
            return index
    return None


OTHER_WEIGHTS = ErrorFamily(
    "weights of a model of another architecture given to set_weights",
    messages=(Message(_WEIGHT_COUNT), Message(_WEIGHT_SHAPE), Message(_NOT_LOADED)),
    exception_type="ValueError",
    read=_read_other_weights,
    section="keras-model-api",
)


# ------------------------------------------------- a config given back to __init__
# The keywords Keras's own get_config writes for a layer, a loss or a metric, which
# from_config (and a model's loading) gives back to the class's __init__.
_KERAS_CONFIG_KEYWORDS = ("name", "trainable", "dtype", "reduction", "autocast")


def _init_def_fixed(cls: type) -> tuple[str, str, str] | None:
    """(the ``def __init__(...)`` line as written, with ``**kwargs`` added, the
    ``super().__init__(...)`` call with ``**kwargs`` passed on), read from the class's
    source (``inspect``, no user code runs)."""
    try:
        init = type.__dict__["__dict__"].__get__(cls).get("__init__")
        source = textwrap.dedent(inspect.getsource(init))
        tree = ast.parse(source)
    except Exception:
        return None
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef) or function.args.kwarg is not None:
        return None
    # ``ast.arguments`` has no position: its text is rebuilt (``self, gamma=2.0``).
    arguments = ast.unparse(function.args) if function.args.args else None
    if not arguments:
        return None
    written = f"def __init__({arguments}):"
    calls = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__init__"
        and isinstance(node.func.value, ast.Call)
        and getattr(node.func.value.func, "id", None) == "super"
    ]
    if len(calls) != 1:
        return None
    inner = [ast.get_source_segment(source, a) or "" for a in calls[0].args]
    parameters = {a.arg for a in function.args.args}
    added: list[str] = []
    for keyword in calls[0].keywords:
        text = ast.get_source_segment(source, keyword) or ""
        value = ast.get_source_segment(source, keyword.value) or ""
        if keyword.arg in _KERAS_CONFIG_KEYWORDS and keyword.arg not in parameters and value:
            # ``super().__init__(name="focal")``: the config gives ``name`` back too, so
            # passing both would give it twice; it becomes a parameter with that default.
            added.append(f"{keyword.arg}={value}")
            text = f"{keyword.arg}={keyword.arg}"
        inner.append(text)
    if not all(inner) or any("\n" in part for part in [*inner, *added]):
        return None
    fixed = f"def __init__({', '.join([arguments, *added, '**kwargs'])}):"
    super_call = f"super().__init__({', '.join([*inner, '**kwargs'])})"
    return written, fixed, super_call


def _read_config_keyword(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del line  # the class is named by the message
    keyword = error.group("keyword")
    name = error.group("cls")
    cls = context.namespace.get(name)
    if keyword not in _KERAS_CONFIG_KEYWORDS or not isinstance(cls, type):
        return None
    if not any(
        str(getattr(base, "__module__", "")).startswith("keras") for base in cls.__mro__[1:]
    ):
        return None
    found = _init_def_fixed(cls)
    if found is None:
        return None
    written, fixed, super_call = found
    rule = (
        f"Keras rebuilds `{name}` from a config as `{name}(**config)`, and the config holds "
        f"what Keras's own `get_config` writes (`{keyword}` among them) besides yours: "
        f"{code(written)} takes no `{keyword}`. Accept Keras's keywords and pass them on"
    )
    return Finding(rule + ".", f"{code(fixed)} with {code(super_call)}")


CONFIG_KEYWORD = ErrorFamily(
    "a class rebuilt from its config whose __init__ refuses Keras's keywords",
    messages=(Message(_INIT_KEYWORD),),
    exception_type="TypeError",
    read=_read_config_keyword,
    section="keras-saving",
)


# ------------------------------------------------- weights loaded into an unbuilt model
_LOAD_UNBUILT = re.compile(r"You are loading weights into a model that has not yet been built")
_MAX_NAMES_READ = 2000


def _load_receiver(line: FailingLine) -> ast.expr | None:
    """``fresh`` in ``fresh.load_weights(path)`` on the failing line."""
    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "load_weights"
            ):
                return node.func.value
    return None


def _built_input_shape(model: object) -> tuple[int | None, ...] | None:
    """The input shape a built model recorded (Keras's ``_build_shapes_dict``, read from
    the instance's own dictionary: no property runs)."""
    found, shapes = instance_attribute(model, "_build_shapes_dict")
    # Keras keeps it in a TrackedDict (a dict subclass): read with dict's own get.
    if not found or not isinstance(shapes, dict):
        return None
    shape = dict.get(shapes, "input_shape")
    if type(shape) not in (tuple, list) or not shape:
        return None
    if not all(d is None or type(d) is int for d in shape):
        return None
    return tuple(shape)


def _read_load_unbuilt(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error
    receiver = _load_receiver(line)
    if receiver is None:
        return None
    found, model = context.resolve(receiver, line.frame)
    name = segment_of(line, receiver)
    if not found or not name:
        return None
    cls = type(model)
    rule = (
        f"`{name}` has no weights yet, so the file's weights have nowhere to go: a model "
        f"of a class you wrote (`{cls.__name__}`) makes its layers' weights the first time "
        "it is called on data, and a new one has not been. Call it once on a batch of the "
        "input's shape before loading (its outputs are thrown away; the loaded weights "
        "replace the ones that call made)"
    )
    # The input shape from another model of the same class the notebook built (the one
    # whose weights were saved, usually).
    shape = None
    for other_name, other in itertools.islice(context.namespace.items(), _MAX_NAMES_READ):
        if type(other) is cls and other is not model and not str(other_name).startswith("_"):
            shape = _built_input_shape(other)
            if shape is not None:
                break
    if shape is None or None in shape[1:] or len(shape) < 2:
        return Finding(rule + ".", None)
    np = context.module_alias("numpy", "np")
    batch = "(" + ", ".join(str(d) for d in (1, *shape[1:])) + ")"
    first_call = code(f"{name}({np}.zeros({batch}))")
    loading = code(line.call_source or "load_weights")
    return Finding(rule + ".", f"before {loading}, call {first_call}")


LOAD_UNBUILT = ErrorFamily(
    "weights loaded into a model of a user class that was never called",
    messages=(Message(_LOAD_UNBUILT),),
    exception_type="ValueError",
    read=_read_load_unbuilt,
    section="keras-saving",
)


# ------------------------------------------------- a class saved without get_config
_NO_CONFIG = re.compile(
    r"Object (?P<cls>\w+) was created by passing\s+non-serializable argument values in\s+"
    r"`__init__\(\)`"
)
# A learning-rate schedule of the learner's class, saved with the model's optimizer.
_SCHEDULE_CONFIG = re.compile(
    r"Learning rate schedule '(?P<cls>\w+)' must override `get_config\(\)`"
)
# Values a config may hold as they are (JSON's kinds).
_PLAIN = (int, float, str, bool, type(None))


def _instance_of(cls: object, context: ErrorContext) -> object:
    """The first value of class ``cls`` (exactly) among the namespace's first names, or
    None: the instance whose stored attributes fill a ``get_config``."""
    return next(
        (
            value
            for value in itertools.islice(context.namespace.values(), _MAX_NAMES_READ)
            if type(value) is cls
        ),
        None,
    )


def _stored_arguments(cls: type) -> list[tuple[str, str]] | None:
    """(parameter, attribute) for each ``__init__`` parameter kept as ``self.attribute =
    parameter``, read from the class's source (``inspect``, no user code runs); None when
    one is not kept (its value cannot be given back) or the source cannot be read."""
    try:
        init = type.__dict__["__dict__"].__get__(cls).get("__init__")
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except Exception:
        return None
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef):
        return None
    parameters = [a.arg for a in (*function.args.args[1:], *function.args.kwonlyargs)]
    kept: dict[str, str] = {}
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == "self"
            and isinstance(node.value, ast.Name)
            and node.value.id in parameters
        ):
            kept.setdefault(node.value.id, node.targets[0].attr)
    if not parameters or any(parameter not in kept for parameter in parameters):
        return None
    return [(parameter, kept[parameter]) for parameter in parameters]


def _plain(value: object) -> bool:
    if type(value) in (list, tuple):
        return len(value) <= 64 and all(type(item) in _PLAIN for item in value)  # type: ignore[arg-type]
    return type(value) in _PLAIN


def _weights_instead(line: FailingLine) -> str | None:
    """``net.save("run.keras")`` -> ``net.save_weights("run.weights.h5")``: a weights-only
    save needs no config (the class rebuilds the model), and Keras 3 wants that suffix."""
    call, statement = line.call, line.statement
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "save"
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and type(call.args[0].value) is str
        and statement is not None
    ):
        return None
    path: str = call.args[0].value
    owner = line.frame.segment(call.func.value)
    written = line.frame.segment(call.args[0]) or ""
    if not owner or not path.endswith(".keras") or written[:1] not in ("'", '"'):
        return None
    quote = written[0]
    renamed = path[: -len(".keras")] + ".weights.h5"
    if quote in renamed or "\\" in renamed:
        return None
    fixed = rewrite(line.frame, statement, call, f"{owner}.save_weights({quote}{renamed}{quote})")
    return fixed if fixed and "\n" not in fixed else None


def _loads_later(line: FailingLine) -> bool:
    """Whether a statement after the failing one in its cell loads a saved model
    (``keras.models.load_model(...)``, ``keras.saving.load_model(...)``)."""
    tree = line.frame.tree()
    statement = line.statement
    if tree is None or statement is None:
        return False
    end = statement.end_lineno or statement.lineno
    return any(
        isinstance(node, ast.Call)
        and node.lineno > end
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "load_model"
        for node in ast.walk(tree)
    )


def _read_no_config(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    name = error.group("cls")
    cls = context.namespace.get(name)
    if error.matched(_SCHEDULE_CONFIG):
        return _schedule_without_config(name, cls, line, context)
    if not isinstance(cls, type) or not class_in_namespace(name, context, ("layer",)):
        return None
    rule = (
        f"Keras saves a `{name}` as its class name and a config, the arguments that rebuild "
        f"it (`{name}(**config)`), and for a model or layer of a class you wrote whose "
        f"`__init__` takes arguments it cannot find them by itself: `{name}` must say "
        "them in a `get_config` method (then load the file with the class known to Keras: "
        "`custom_objects` or `@keras.saving.register_keras_serializable()`)"
    )
    weights = _weights_instead(line)
    if weights is not None and isinstance(line.call, ast.Call):
        # ``save_weights`` refuses a model that was never built (a model whose own
        # ``train_step`` drives sub-models never builds itself): no weights-only fix then.
        owner = line.call.func.value if isinstance(line.call.func, ast.Attribute) else None
        found, model = value_of(owner, line.frame, context) if owner is not None else (False, None)
        if not found or library_attribute(model, "built") is not True:
            weights = None
    if weights is not None:
        rule += (
            f". Or keep the class as it is and save the weights alone, "
            f"{code(weights)}, then rebuild `{name}(...)` with the same arguments, call it "
            "once on a batch and `load_weights` the file"
        )
    stored = _stored_arguments(cls)
    instance = _instance_of(cls, context)
    # With no get_config to print, the weights-only save is the fix that runs, unless the
    # cell goes on to load the saved file: that line needs the rebuilt model too, which
    # one line cannot say (the route stays in the rule, not printed as the fix).
    if weights is not None and _loads_later(line):
        weights_fix = None
    else:
        weights_fix = code(weights) if weights is not None else None
    otherwise = Finding(rule + ".", weights_fix)
    if stored is None or instance is None:
        return otherwise
    for _, attribute in stored:
        found, value = instance_attribute(instance, attribute)
        if not found or not _plain(value):
            return otherwise
    entries = ", ".join(f'"{parameter}": self.{attribute}' for parameter, attribute in stored)
    method = f"def get_config(self): return {{{entries}}}"
    return Finding(rule + ".", f"add to `class {name}` the method {code(method)}")


def _schedule_in_optimizer(line: FailingLine, context: ErrorContext, cls: type) -> object:
    """The schedule instance of class ``cls`` the saved model's optimizer holds (a schedule
    written inline, ``Adam(StepDecay(...))``, has no name in the namespace)."""
    call = line.call
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    found, model = value_of(call.func.value, line.frame, context)
    optimizer = library_attribute(model, "optimizer") if found else None
    if optimizer is None:
        return None
    held, schedule = instance_attribute(optimizer, "_learning_rate")
    return schedule if held and type(schedule) is cls else None


def _schedule_without_config(
    name: str, cls: object, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """A ``LearningRateSchedule`` subclass without ``get_config``, met when the model (and
    with it its optimizer) is saved: its constructor arguments, read from ``__init__``,
    make the method."""
    if not isinstance(cls, type) or not class_in_namespace(name, context, ("schedule",)):
        return None
    rule = (
        f"Saving a model saves its optimizer too, and the optimizer's learning-rate schedule "
        f"as its class name and a config, the arguments that rebuild it (`{name}(**config)`). "
        f"`{name}` derives from `LearningRateSchedule`, whose `get_config` only raises: a "
        f"schedule you write must return its constructor arguments from its own "
        f'`get_config` (then load the file with `custom_objects={{"{name}": {name}}}`)'
    )
    stored = _stored_arguments(cls)
    instance = _instance_of(cls, context)
    if instance is None:
        instance = _schedule_in_optimizer(line, context, cls)
    if stored is None or instance is None:
        return Finding(rule + ".", None)
    for _, attribute in stored:
        found, value = instance_attribute(instance, attribute)
        if not found or not _plain(value):
            return Finding(rule + ".", None)
    entries = ", ".join(f'"{parameter}": self.{attribute}' for parameter, attribute in stored)
    method = f"def get_config(self): return {{{entries}}}"
    return Finding(rule + ".", f"add to `class {name}` the method {code(method)}")


NO_CONFIG = ErrorFamily(
    "a model, layer or learning-rate schedule of a user class saved without get_config",
    messages=(Message(_NO_CONFIG), Message(_SCHEDULE_CONFIG)),
    exception_type="NotImplementedError",
    read=_read_no_config,
    section="keras-saving",
)


# ------------------------------------------------------------------ one optimizer, two models
_MAX_OPTIMIZER_VARIABLES = 5000
_MAX_MODELS_SEARCHED = 200
_TRAINING_CALLS = ("fit", "train_on_batch")
_STEP_CALLS = ("apply_gradients", "apply", "minimize")
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp)
_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def is_optimizer(value: Any) -> bool:
    from jupyterlab_tfcoach.monitor.errors.context import class_mro
    from jupyterlab_tfcoach.monitor.tftypes import loaded_class

    base = loaded_class("keras.src.optimizers.base_optimizer", "BaseOptimizer")
    return base is not None and base in class_mro(value)


def _model_variable_ids(model: Any) -> set[int] | None:
    from jupyterlab_tfcoach.monitor.stored_state import keras_trainable_variables

    variables = keras_trainable_variables(model, _MAX_OPTIMIZER_VARIABLES)
    return {id(variable) for variable in variables} if variables else None


def _trained_here(line: FailingLine, context: ErrorContext) -> tuple[Any, Any, str] | None:
    """(optimizer, model, model's name) of the failing line: ``model.fit(...)`` with the
    optimizer model.compile stored, or ``opt.apply_gradients(zip(g, model.trainable_...))``."""
    from jupyterlab_tfcoach.monitor.errors.context import value_kind

    for part in line.frame.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            receiver = node.func.value
            found, owner = value_of(receiver, line.frame, context)
            shown = line.frame.segment(receiver)
            if not found or not shown:
                continue
            if node.func.attr in _TRAINING_CALLS and value_kind(owner) == "model":
                has, optimizer = instance_attribute(owner, "optimizer")
                if has and is_optimizer(optimizer):
                    return optimizer, owner, shown
            if node.func.attr in _STEP_CALLS and is_optimizer(owner):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Attribute) and inner.attr in (
                        "trainable_variables",
                        "trainable_weights",
                    ):
                        has, model = value_of(inner.value, line.frame, context)
                        named = line.frame.segment(inner.value)
                        if has and value_kind(model) in ("model", "layer") and named:
                            return owner, model, named
    return None


def _enclosing(tree: ast.AST, target: ast.AST) -> list[ast.AST]:
    """The loops and function bodies around ``target`` in ``tree``, outermost first."""
    path: list[ast.AST] = []

    def visit(node: ast.AST, around: list[ast.AST]) -> bool:
        if node is target:
            path.extend(around)
            return True
        inner = [*around, node] if isinstance(node, _LOOPS + _BODIES) else around
        return any(visit(child, inner) for child in ast.iter_child_nodes(node))

    visit(tree, [])
    return path


def _compile_with(
    optimizer_name: str, context: ErrorContext
) -> tuple[Any, ast.Call, ast.Name] | None:
    """The newest ``<model>.compile(optimizer=<optimizer_name>, ...)`` in the cells (any
    depth): its cell, the call and the optimizer's name node in it."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells

    for cell, node in nodes_in_cells(context):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
        ):
            continue
        given = [k.value for k in node.keywords if k.arg == "optimizer"] + node.args[:1]
        for value in given:
            if isinstance(value, ast.Name) and value.id == optimizer_name:
                return cell, node, value
    return None


def explain_shared_optimizer(parsed: Any, context: ErrorContext) -> tuple[str, str] | None:
    """One Keras 3 optimizer object given to a second model: it was built for the first
    model's variables and refuses the second's ("Unknown variable"). Told when another
    model in the namespace owns the variables the optimizer was built for, or when the
    cells give the optimizer, made once, to ``compile`` inside a loop or a function (a
    new model each time round)."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
    from jupyterlab_tfcoach.monitor.errors.context import value_kind
    from jupyterlab_tfcoach.monitor.errors.failing_line import read_failing_line
    from jupyterlab_tfcoach.monitor.names import name_bound_to

    line = read_failing_line(context)
    trained = _trained_here(line, context) if line is not None else None
    if line is None or trained is None:
        return None
    optimizer, model, model_name = trained
    from jupyterlab_tfcoach.monitor.stored_state import contained_values

    has, stored_list = instance_attribute(optimizer, "_trainable_variables")
    # TensorFlow's tracking keeps the list as a ``ListWrapper``.
    built_for = contained_values(stored_list, sequences_only=True) if has else None
    if not built_for:
        return None
    if len(built_for) > _MAX_OPTIMIZER_VARIABLES:
        return None
    known = {id(variable) for variable in built_for}
    own = _model_variable_ids(model)
    if own is None or own & known:
        return None  # some of the model's own variables are the optimizer's: another cause
    optimizer_name = name_bound_to(id(optimizer), context.namespace)
    if optimizer_name is None:
        return None
    first: str | None = None
    for count, (name, value) in enumerate(list(context.namespace.items())):
        if count > _MAX_MODELS_SEARCHED * 50:
            break
        if value is model or type(name) is not str or name.startswith("_"):
            continue
        if value_kind(value) == "model":
            ids = _model_variable_ids(value)
            if ids and ids <= known:
                first = name
                break
    compiled = _compile_with(optimizer_name, context)
    repeated = False
    if compiled is not None:
        cell, call, _ = compiled
        tree = cell.tree()
        around = _enclosing(tree, call) if tree is not None else []
        made_once = next(iter(assignments_in_cells(optimizer_name, context)), None) is not None
        # A new model each time round: the model's name is assigned in the same loop or
        # function body (a model compiled again in a loop is one model, another cause).
        root = model_name.split(".", 1)[0].split("[", 1)[0]
        repeated = (
            bool(around)
            and made_once
            and any(
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == root for t in node.targets)
                for node in ast.walk(around[-1])
            )
        )
    if first is None and not repeated:
        return None
    kind = type(optimizer).__name__
    trained_first = (
        f"`{first}`" if first is not None else "a model made earlier that no name holds now"
    )
    rule = (
        f"`{optimizer_name}` (one {kind} optimizer) is shared by several models. A Keras 3 "
        f"optimizer is built for the variables of the first model it trains, here "
        f"{trained_first}, and refuses any other model's; `{model_name}` is another model "
        f"with variables of its own"
    )
    if compiled is not None and repeated:
        written = compiled[0].segment(compiled[1]) or ""
        short = written if "\n" not in written and len(written) <= 120 else None
        rule += (
            f", given the same `{optimizer_name}` by "
            + (code(short) if short else f"`.compile(optimizer={optimizer_name}, ...)`")
            + " each time round"
        )
    rule += ". Give each model an optimizer of its own, made where the model is compiled"
    made = next(iter(assignments_in_cells(optimizer_name, context)), None)
    maker = made[0].segment(made[1].value) if made is not None else None
    if maker and "\n" not in maker and isinstance(made[1].value, ast.Call):  # type: ignore[index]
        fix = f"`optimizer={maker}`"
        if compiled is not None:
            cell, call, name_node = compiled
            fixed = rewrite(cell_frame(cell), call, name_node, maker)
            if fixed and "\n" not in fixed:
                fix = code(fixed)
        return (
            f"{rule} (a new `{maker}` for each model). Fix: {fix}.",
            "keras-model-api",
        )
    return (f"{rule}: a new optimizer object per model, not one made once.", "keras-model-api")
