"""Whether a ``Dataset.map`` draws random numbers for each element (an augmentation).

tf.data traces a map function once, when ``map`` is called, and keeps the concrete
function in the ``_MapDataset``'s ``_map_func`` (a ``StructuredFunctionWrapper``, its
``_function``). Its graph's operation types tell randomness without running anything:
stateful random ops (``tf.random.*``, ``tf.image.random_*``: ``RandomUniform``,
``RandomStandardNormal``...; a ``tf.random.Generator``: ``RngReadAndSkip``), or stateless
ones whose seed comes from a state the graph updates (Keras 3's random layers, such as
``RandomFlip``, draw with ``StatelessRandom*`` ops seeded by a ``SeedGenerator`` variable
they assign to). A stateless op with a constant seed draws the same numbers every time:
not random. Measured on TensorFlow 2.21: ~0.03 ms per map function read (its graph's
operation list), done only for maps a check asks about, and cached by wrapper.

``is_augmenting_map`` leaves out a map whose only draw is ``RandomShuffle``: it permutes
or subsamples an element's rows without altering a value (a point cloud sampled to a fixed
size is sampled in evaluation too), so it is no augmentation to take out of a test
pipeline; unless the permuted rows are blended with the rows as they came (``blends``:
mixup's ``lam * x + (1 - lam) * tf.gather(x, idx)``, CutMix's pasted patches): an
arithmetic op of the graph reading one input computed from the shuffle and another
computed from the function's inputs, element by element, without it. Read from the ops'
inputs, at most ``MAX_OPERATIONS`` of them, once per map function (cached).

Only the map function's own graph is read (functions it calls through a nested
``tf.function`` are not). Nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute

MAX_OPERATIONS = 20_000
MAX_CACHED = 256
_STATEFUL_PREFIXES = ("Random", "Stateful", "RngRead", "Multinomial", "TruncatedNormal")
_STATELESS_PREFIX = "StatelessRandom"
_STATE_UPDATES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})

# A random permutation of an element's rows (``tf.random.shuffle``, often followed by a
# slice: a random subset of a point cloud or a set of tokens) picks values without altering
# any: a sampling that evaluation pipelines use too, not an augmentation.
_SELECTIONS = frozenset({"RandomShuffle"})

_PYTHON_CALLS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})

_T = TypeVar("_T")

_known: dict[int, tuple[weakref.ReferenceType[Any], frozenset[str]]] = {}
_blending: dict[int, tuple[weakref.ReferenceType[Any], bool]] = {}
# Element-wise ops that combine two values: a blend when one side went through a shuffle.
_COMBINING = frozenset({"AddV2", "Add", "Sub", "Mul", "SelectV2", "Select"})
# Ops that keep an input's values row for row: the rows as they came, scaled or cast
# (a mean, a shape or a range of them is not those rows: a subsample centred by the
# whole element's mean blends nothing).
_ELEMENT_WISE = _COMBINING | {"Identity", "Cast", "RealDiv", "Neg", "Maximum", "Minimum"}


def _draws(operation_types: set[str]) -> bool:
    if any(t.startswith(_STATEFUL_PREFIXES) for t in operation_types):
        return True
    stateless = any(t.startswith(_STATELESS_PREFIX) for t in operation_types)
    return stateless and bool(operation_types & _STATE_UPDATES)


def map_operations(link: Any) -> frozenset[str] | None:
    """The operation types of the function a map link (``_MapDataset``) traced; None
    for another link or when they cannot be read."""
    return _read_map_graph(link, _known, lambda ops: frozenset(str(op.type) for op in ops))


def _read_map_graph(
    link: Any, cache: dict[int, tuple[weakref.ReferenceType[Any], _T]], read: Callable[[Any], _T]
) -> _T | None:
    """``read`` of the operations of the graph a map link's function traced, kept per
    function (weakly) in ``cache``; None for another link or when they cannot be read."""
    wrapper = (instance_dict(link) or {}).get("_map_func")
    if wrapper is None:
        return None
    known = cache.get(id(wrapper))
    if known is not None and known[0]() is wrapper:
        return known[1]
    function = (instance_dict(wrapper) or {}).get("_function")
    graph = library_attribute(function, "graph") if function is not None else None
    operations = library_attribute(graph, "get_operations") if graph is not None else None
    if operations is None:
        return None
    value = read(operations()[:MAX_OPERATIONS])
    if len(cache) >= MAX_CACHED:
        cache.clear()
    try:
        cache[id(wrapper)] = (weakref.ref(wrapper), value)
    except TypeError:
        pass
    return value


def is_random_map(link: Any) -> bool:
    """Whether ``link`` (a dataset of the chain) is a map whose function draws random
    numbers at each element."""
    types = map_operations(link)
    return types is not None and _draws(set(types))


def is_augmenting_map(link: Any) -> bool:
    """Whether ``link`` is a map whose random draws alter an element's values (noise, flips,
    crops, rotations, rows blended with other rows): a random map whose only draw is a
    permutation of the element's rows (a random subsample) is not one."""
    types = map_operations(link)
    if types is None:
        return False
    if _draws(set(types) - _SELECTIONS):
        return True
    return bool(types & _SELECTIONS) and blends(link)


def blends(link: Any) -> bool:
    """Whether a map's function blends rows it permuted at random with the rows as they
    came (mixup, CutMix): an op of ``_COMBINING`` with one input downstream of a
    ``RandomShuffle`` and another computed from a function input without it."""
    return bool(_read_map_graph(link, _blending, _blended))


def _blended(operations: list[Any]) -> bool:
    # A graph lists its ops in creation order: an op's inputs come before it.
    shuffled: set[str] = set()
    from_inputs: set[str] = set()  # computed from a function input, not through a shuffle
    for op in operations:
        kind = str(op.type)
        name = str(op.name)
        sources = [str(t.op.name) for t in op.inputs]
        if kind in _SELECTIONS or any(s in shuffled for s in sources):
            if kind in _COMBINING and any(s in from_inputs and s not in shuffled for s in sources):
                return True
            shuffled.add(name)
        elif kind == "Placeholder" or (
            kind in _ELEMENT_WISE and any(s in from_inputs for s in sources)
        ):
            from_inputs.add(name)
    return False


def runs_python(link: Any) -> bool:
    """Whether a map link's function calls back into Python (``tf.py_function``,
    ``tf.numpy_function``): reading an element would run the user's code."""
    types = map_operations(link)
    return types is None or bool(types & _PYTHON_CALLS)
