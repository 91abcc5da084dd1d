"""What TensorFlow and Keras store on an object, read without running the user's code.

A learner's ``tf.Module`` or Keras layer may define its own ``trainable_variables``,
``trainable``, ``variables`` or ``weights`` property: one that logs, counts, prints or
raises. The monitor reads objects after every cell, so it must never trigger such a
property. TensorFlow's and Keras's own properties are no way around it either: Keras's
``Layer.trainable_variables`` reads ``self.trainable`` and every sublayer's
``variables``, so a user override anywhere in a model would run. So what the monitor
needs of a holder is rebuilt here from the state the libraries store in instance
``__dict__``s (measured on Keras 3.15 and TensorFlow 2.21):

- a Keras 3 layer keeps its flag behind ``trainable`` in ``_trainable``, the variables it
  tracked on assignment in ``_trainable_variables`` and ``_non_trainable_variables``, its
  ``SeedGenerator``s in ``_seed_generators``, its sublayers in ``_layers``, and plain
  ``name`` and ``train_function`` attributes. ``keras_layers``, ``keras_variables`` and
  ``keras_trainable_variables`` follow ``Layer._flatten_layers``, ``Layer.variables``/
  ``weights`` and ``Layer.trainable_variables`` over those;
- a ``tf.Module``'s variables are found, as ``tf.Module._flatten`` finds them, by walking
  ``vars(module)`` (less ``_TF_MODULE_IGNORED_PROPERTIES``), the lists, tuples and dicts in
  it (TensorFlow wraps them in ``ListWrapper``, ``_TupleWrapper``, ``_DictWrapper``) and its
  submodules: ``module_variables``.

Variables and other objects of the libraries' own classes are read with
``library_attribute``: the name is resolved on the class as Python would resolve it,
without running anything (``inspect.getattr_static``-style), and a descriptor is only
evaluated when the class that defines it belongs to TensorFlow or Keras; a user's
property, method or descriptor is never called (the caller gets ``default``), a value
stored in the instance or the class is returned as it is. Each resolution is cached per
class (weakly), so a read costs a dict lookup and the descriptor's own work.

A private name missing in another version makes a reading "unknown" (``None``), never
an error: the monitor then reports less.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

# Packages whose classes' descriptors may be evaluated (their code is not the user's).
LIBRARY_PACKAGES = frozenset({"tensorflow", "keras", "tf_keras"})
_TRUSTED_PACKAGES = LIBRARY_PACKAGES | {"builtins"}
MAX_NESTING = 100  # lists in lists: deeper than this is not walked
_MAX_CACHED = 10_000

_MISSING: Any = object()
_type_dict = type.__dict__["__dict__"].__get__  # a class's own namespace, never a metaclass hook
# A class's MRO, read from ``type``'s own slot (never a metaclass's ``mro`` or ``__getattr__``).
mro_of_class = type.__dict__["__mro__"].__get__
_object_getattribute = object.__getattribute__
# A class's module: its namespace's ``__module__``, "builtins" for C types like ``object``.
module_of_class = type.__dict__["__module__"].__get__

Reader = Callable[[Any], Any]
# id(class) -> (weak reference to the class, what to do); never keeps a user class alive.
_readers: dict[tuple[int, str], tuple[weakref.ReferenceType[type], Reader]] = {}
_containers: dict[int, tuple[weakref.ReferenceType[type], str]] = {}


def _package_of(cls: type) -> str | None:
    try:
        module = module_of_class(cls)
    except Exception:
        return None
    return module.partition(".")[0] if type(module) is str else None


def is_library_class(cls: type) -> bool:
    """``cls`` is defined by TensorFlow or Keras (by its module's top-level package)."""
    return _package_of(cls) in LIBRARY_PACKAGES


def _trusted(cls: type) -> bool:
    return _package_of(cls) in _TRUSTED_PACKAGES


def class_namespace_lookup(cls: type, name: str) -> tuple[Any, type | None]:
    """(value, defining class) of ``name`` on ``cls``'s MRO, read from class namespaces."""
    for klass in mro_of_class(cls):
        namespace = _type_dict(klass)
        if name in namespace:
            return namespace[name], klass
    return _MISSING, None


def class_attribute(cls: type, name: str) -> Any:
    """``name`` as found on ``cls`` or its bases, undecorated (a property stays a
    property); None when absent. Runs no descriptor and no metaclass hook."""
    try:
        found, _owner = class_namespace_lookup(cls, name)
    except Exception:
        return None
    return None if found is _MISSING else found


def instance_dict(obj: Any) -> dict[str, Any] | None:
    """``obj.__dict__`` without the object's attribute hooks (None if it has none).

    The one way the monitor reads what an object stores: ``stored`` and the readers here,
    the attribute hook, the rebinding and learning reports, the traced body's ``self``
    and the error explanations' names all go through it."""
    try:
        attributes = _object_getattribute(obj, "__dict__")
    except Exception:
        return None
    return attributes if type(attributes) is dict else None


def stored(obj: Any, name: str, default: Any = None) -> Any:
    """What the instance itself stores under ``name`` (its ``__dict__``), else ``default``."""
    attributes = instance_dict(obj)
    if attributes is None:
        return default
    return attributes.get(name, default)


def _stored_reader(name: str) -> Reader:
    def read(obj: Any) -> Any:
        attributes = instance_dict(obj)
        return _MISSING if attributes is None else attributes.get(name, _MISSING)

    return read


def _stored_or_class_value_reader(name: str, class_value: Any) -> Reader:
    def read(obj: Any) -> Any:
        attributes = instance_dict(obj)
        if attributes is not None and name in attributes:
            return attributes[name]
        return class_value

    return read


def _reader(cls: type, name: str) -> Reader:
    """How to read ``name`` on instances of ``cls`` following Python's lookup order
    (data descriptor, instance ``__dict__``, other class attribute) while only ever
    running TensorFlow's, Keras's or Python's own descriptors."""
    found, owner = class_namespace_lookup(cls, name)
    _getattribute, access_owner = class_namespace_lookup(cls, "__getattribute__")
    # A user's __getattribute__ would run inside the library's descriptor (``self._x``).
    may_run = access_owner is not None and _trusted(access_owner)
    if found is _MISSING:
        return _stored_reader(name)  # a user's __getattr__ is never asked
    descriptor_type = type(found)
    getter, _ = class_namespace_lookup(descriptor_type, "__get__")
    if getter is _MISSING:
        return _stored_or_class_value_reader(name, found)
    is_data = (
        class_namespace_lookup(descriptor_type, "__set__")[0] is not _MISSING
        or class_namespace_lookup(descriptor_type, "__delete__")[0] is not _MISSING
    )
    runs = may_run and owner is not None and _trusted(owner)
    if is_data:
        if not runs:
            return lambda obj: _MISSING  # a user's property: not evaluated, not shadowed
        if descriptor_type is property and found.fget is not None:
            return found.fget  # what property.__get__ calls, one call less per read
        return lambda obj: getter(found, obj, cls)
    stored_only = _stored_reader(name)
    if not runs:
        # A user's method or cached_property: only a value it already stored is read.
        return stored_only

    def read(obj: Any) -> Any:
        value = stored_only(obj)
        return getter(found, obj, cls) if value is _MISSING else value

    return read


def _cached_reader(cls: type, name: str) -> Reader:
    key = (id(cls), name)
    cached = _readers.get(key)
    if cached is not None and cached[0]() is cls:
        return cached[1]
    reader = _reader(cls, name)
    if len(_readers) > _MAX_CACHED:
        _readers.clear()
    _readers[key] = (weakref.ref(cls), reader)
    return reader


def library_attribute(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.<name>`` if reading it runs only TensorFlow's or Keras's code (or none),
    else ``default``; ``default`` too when it is absent or its descriptor raises."""
    try:
        value = _cached_reader(type(obj), name)(obj)
    except Exception:
        return default
    return default if value is _MISSING else value


def _trainable_only(variables: list[Any]) -> list[Any]:
    """The variables whose ``trainable`` (read as ``library_attribute`` reads it) is True."""
    readers: dict[type, Reader] = {}  # a model's variables share one or two classes
    kept = []
    for variable in variables:
        cls = type(variable)
        reader = readers.get(cls)
        if reader is None:
            try:
                reader = readers[cls] = _cached_reader(cls, "trainable")
            except Exception:
                continue
        try:
            if reader(variable) is True:
                kept.append(variable)
        except Exception:
            continue
    return kept


# ------------------------------------------------------------------- containers
def _container_kind(cls: type) -> str:
    """How to list what an instance of ``cls`` contains, without running user code."""
    if cls is list or cls is tuple:
        return "sequence"
    if cls is dict:
        return "mapping"
    library = is_library_class(cls)
    if issubclass(cls, (list, tuple)):
        # TensorFlow's ListWrapper keeps its items in a storage of its own (the list
        # base is empty): its own iteration is right. A user's subclass: the base's C code.
        return "sequence" if library else ("list_base" if issubclass(cls, list) else "tuple_base")
    if issubclass(cls, dict):
        return "mapping" if library else "dict_base"
    if library and class_namespace_lookup(cls, "__wrapped__")[0] is not _MISSING:
        return "proxy"  # TensorFlow's _TupleWrapper/_DictWrapper around a tuple or dict
    return "leaf"


def _kind_of_container(cls: type) -> str:
    cached = _containers.get(id(cls))
    if cached is not None and cached[0]() is cls:
        return cached[1]
    try:
        kind = _container_kind(cls)
    except Exception:
        kind = "leaf"
    try:
        if len(_containers) > _MAX_CACHED:
            _containers.clear()
        _containers[id(cls)] = (weakref.ref(cls), kind)
    except TypeError:
        pass
    return kind


def _mapping_values(mapping: Any, keys: list[Any], get: Callable[[Any, Any], Any]) -> list[Any]:
    # TensorFlow's nest flattens a dict in key order; keys other than strings keep their
    # order (comparing them could run a user's __lt__).
    if all(type(key) is str for key in keys):
        keys = sorted(keys)
    return [get(mapping, key) for key in keys]


def contained_values(value: Any, sequences_only: bool = False) -> list[Any] | None:
    """The items of a list or tuple, the values of a dict, also as TensorFlow and Keras
    wrap them on their objects; None when ``value`` is no such container (or, with
    ``sequences_only``, is a dict). A user's container methods are never called."""
    try:
        kind = _kind_of_container(type(value))
        if kind == "leaf":
            return None
        if kind == "sequence":
            return list(value)
        if kind == "list_base":
            return list(list.__iter__(value))
        if kind == "tuple_base":
            return list(tuple.__iter__(value))
        if kind == "proxy":
            wrapped = object.__getattribute__(value, "__wrapped__")
            if type(wrapped) not in (list, tuple, dict):
                return None
            return contained_values(wrapped, sequences_only)
        if sequences_only:
            return None
        if kind == "mapping":
            return _mapping_values(value, list(value.keys()), type(value).__getitem__)
        if kind == "dict_base":
            return _mapping_values(value, list(dict.keys(value)), dict.__getitem__)
    except Exception:
        return None
    return None


# ------------------------------------------------------------------------ Keras
# What a Keras 3 layer stores (``Layer._initialize_tracker`` and the ``trainable`` setter).
KERAS_TRAINABLE_FLAG = "_trainable"
KERAS_TRAINABLE_VARIABLES = "_trainable_variables"
KERAS_NON_TRAINABLE_VARIABLES = "_non_trainable_variables"
KERAS_SEED_GENERATORS = "_seed_generators"
KERAS_SUBLAYERS = "_layers"


# These run for every layer of every model after every cell: each reads the layer's
# ``__dict__`` once and takes Keras's plain lists as they are.
def _sequence(value: Any) -> list[Any] | tuple[Any, ...]:
    if type(value) is list:
        return value
    if value is None:
        return ()
    return contained_values(value, sequences_only=True) or ()


def keras_trainable_flag(layer: Any) -> bool | None:
    """The flag Keras's ``trainable`` property returns (``_trainable``); None if unknown."""
    attributes = instance_dict(layer)
    return trainable_flag_in(attributes) if attributes is not None else None


def trainable_flag_in(attributes: dict[str, Any]) -> bool | None:
    """``keras_trainable_flag`` from a ``__dict__`` already read."""
    flag = attributes.get(KERAS_TRAINABLE_FLAG)
    return flag if type(flag) is bool else None


def keras_sublayers(layer: Any) -> list[Any] | tuple[Any, ...]:
    attributes = instance_dict(layer)
    return _sequence(attributes.get(KERAS_SUBLAYERS)) if attributes is not None else ()


def keras_layers(root: Any, limit: int) -> list[Any]:
    """``root._flatten_layers(include_self=True, recursive=True)``: the layer and every
    sublayer, in Keras's order, at most ``limit``."""
    layers = [root]
    seen = {id(root)}
    pending = list(keras_sublayers(root))
    pending.reverse()  # a stack: the next layer to visit is at its end
    while pending and len(layers) < limit:
        layer = pending.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        layers.append(layer)
        attributes = instance_dict(layer)
        if attributes is None:
            continue
        sublayers = attributes.get(KERAS_SUBLAYERS)
        # Keras puts a sublayer's own sublayers first, last one first (deque.extendleft).
        if type(sublayers) is list:
            pending.extend(sublayers)
        elif sublayers is not None:
            pending.extend(_sequence(sublayers))
    return layers


def keras_variables(root: Any, with_seed_state: bool, limit: int) -> list[Any]:
    """Keras's ``root.variables`` (``with_seed_state``) or ``root.weights``: the layer's
    own variables, then each sublayer's, depth first, without repeats. At most
    ``limit + 1`` are listed (more than ``limit`` means: too many to use)."""
    found: list[Any] = []
    append = found.append
    seen: set[int] = set()
    visited: set[int] = set()
    pending = [root]
    while pending and len(found) <= limit and len(visited) <= limit:
        layer = pending.pop()
        if id(layer) in visited:
            continue
        visited.add(id(layer))
        attributes = instance_dict(layer)
        if attributes is None:
            continue
        own = (
            _sequence(attributes.get(KERAS_TRAINABLE_VARIABLES)),
            _sequence(attributes.get(KERAS_NON_TRAINABLE_VARIABLES)),
        )
        for variables in own:
            for variable in variables:
                if id(variable) not in seen:
                    seen.add(id(variable))
                    append(variable)
        if with_seed_state:
            for generator in _sequence(attributes.get(KERAS_SEED_GENERATORS)):
                state = library_attribute(generator, "state")
                if state is not None and id(state) not in seen:
                    seen.add(id(state))
                    append(state)
        children = list(_sequence(attributes.get(KERAS_SUBLAYERS)))
        children.reverse()
        pending.extend(children)
    return found[: limit + 1]


def keras_trainable_variables(root: Any, limit: int) -> list[Any] | None:
    """Keras's ``root.trainable_variables``; None when unknown or over ``limit``."""
    flag = keras_trainable_flag(root)
    if flag is None:
        return None
    if not flag:
        return []
    variables = keras_variables(root, with_seed_state=True, limit=limit)
    if len(variables) > limit:
        return None
    return _trainable_only(variables)


# -------------------------------------------------------------------- tf.Module
def module_variables(
    module: Any,
    is_variable: Callable[[Any], bool],
    is_module: Callable[[Any], bool],
    limit: int,
    trainable_only: bool = True,
) -> list[Any] | None:
    """``module.trainable_variables`` (or ``variables``) as ``tf.Module._flatten`` finds
    them: each module's attributes in name order, the leaves of their lists, tuples and
    dicts, then its submodules, without repeats. None when more than ``limit`` values
    would have to be looked at."""
    found: list[Any] = []
    seen = {id(module)}
    budget = [limit]

    def leaves(value: Any, depth: int, into: list[Any]) -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if is_variable(value) or is_module(value) or depth > MAX_NESTING:
            into.append(value)
            return True
        items = contained_values(value)
        if items is None:
            into.append(value)
            return True
        return all(leaves(item, depth + 1, into) for item in items)

    pending = [module]
    while pending:
        current = pending.pop()
        attributes = instance_dict(current)
        if attributes is None:
            continue
        ignored = library_attribute(current, "_TF_MODULE_IGNORED_PROPERTIES", ())
        if type(ignored) not in (frozenset, set, tuple, list):
            ignored = ()
        submodules: list[Any] = []
        for name in sorted(key for key in list(attributes) if type(key) is str):
            if name in ignored:
                continue
            values: list[Any] = []
            if not leaves(attributes.get(name), 0, values):
                return None
            for leaf in values:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
                if is_variable(leaf):
                    found.append(leaf)
                elif is_module(leaf):
                    submodules.append(leaf)
        submodules.reverse()  # visited in attribute order, each before the next
        pending.extend(submodules)
    return _trainable_only(found) if trainable_only else found


def keras_tracked_metrics(model: Any) -> list[Any]:
    """The metrics Keras tracks for the model, as it stores them (``Trainer.metrics``
    without running a user's ``metrics`` property): the loss tracker, the compiled
    metrics, the user's own metric attributes."""
    attributes = instance_dict(model) or {}
    found: list[Any] = []
    tracker = attributes.get("_loss_tracker")
    if tracker is not None:
        found.append(tracker)
    compiled = attributes.get("_compile_metrics")
    if compiled is not None:
        for name in ("_flat_metrics", "_flat_weighted_metrics"):
            found.extend(m for m in contained_values(stored(compiled, name)) or () if m is not None)
    found.extend(contained_values(attributes.get("_metrics"), sequences_only=True) or ())
    return found[:100]
