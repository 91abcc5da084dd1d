"""Trace signatures as plain data, and why a new trace differs from an earlier one.

A ``tf.function`` keeps one ConcreteFunction per trace; its ``function_type``
lists each parameter with a type constraint: a ``TensorSpec(shape, dtype)``, a
``Literal[value]`` for a Python value, or a container (``Tuple``/``List``/
``Dict``) of those. We flatten that into ``{argument path: Leaf}`` holding only
strings, so nothing keeps a ConcreteFunction (and its captured variables) alive.
Type constraints are recognised by class name and attributes, not by importing
TensorFlow classes: a TF version that renames them yields ``other`` leaves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 160
MAX_DEPTH = 6
MAX_LEAVES = 64

TENSOR = "tensor"
PYTHON = "python"
OBJECT = "object"  # a Python object traced by identity (TF's ``Weakref`` constraint)
OTHER = "other"

_PLAIN_VALUE_TYPES = (bool, int, float, str, bytes, type(None))


@dataclass(frozen=True)
class Leaf:
    """One argument (or a component of a nested argument) in one trace."""

    kind: str  # TENSOR | PYTHON | OBJECT | OTHER
    dtype: str = ""
    shape: str = ""
    value: str = ""  # OBJECT: the object's class name ("" once it is gone)
    # OBJECT: which object (TF's hash of the weak reference); compared, never shown.
    identity: str = ""

    def describe(self) -> str:
        if self.kind == TENSOR:
            return f"tensor {self.dtype} {self.shape}"
        if self.kind == PYTHON:
            return f"Python value {self.value}"
        if self.kind == OBJECT:
            return f"a `{self.value}` object" if self.value else "a Python object"
        return self.value


Signature = dict[str, Leaf]


@dataclass(frozen=True)
class Difference:
    """One argument that differs between two traces."""

    kind: str  # a report reason kind: shape | dtype | python_value | kind | other
    argument: str
    before: str | None
    after: str | None


# Memory addresses (`<weakref at 0x7f...; to 'Sequential' at 0x7f...>`) mean nothing
# to a learner: the last line of defence removes any that a repr let through.
_ADDRESS = re.compile(r"\s*\bat 0x[0-9a-fA-F]{6,}|\b0x[0-9a-fA-F]{6,}")


def _clip(text: str) -> str:
    text = _ADDRESS.sub("", text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def plain_value(value: Any) -> str:
    """``repr`` for plain Python values only; other objects are named by type."""
    if type(value) in _PLAIN_VALUE_TYPES:
        return _clip(repr(value))
    return f"<{type(value).__name__}>"


def _shape_text(shape: Any) -> str:
    if shape.rank is None:
        return "<unknown rank>"
    return str(tuple(shape.as_list()))


def _components(constraint: Any) -> tuple[Any, ...]:
    """A ``Tuple``'s components, or a ``List``'s (which keeps them in a ``Tuple``)."""
    components = getattr(constraint, "components", None)
    if components is None:
        # TF 2.21's List stores a Tuple in ``components_tuple`` instead.
        components = getattr(getattr(constraint, "components_tuple", None), "components", None)
    if components is None:
        raise TypeError("no components")
    return tuple(components)


def _flatten(path: str, constraint: Any, out: Signature, depth: int) -> None:
    if len(out) >= MAX_LEAVES:
        return
    try:
        _flatten_one(path, constraint, out, depth)
    except Exception:
        # One constraint of an unknown layout must not hide the reasons of the
        # others (nor make the whole trace "unreadable"): it becomes one text leaf.
        try:
            text = _clip(str(constraint))
        except Exception:
            text = f"<{type(constraint).__name__}>"
        out[path] = Leaf(OTHER, value=text)


def _flatten_one(path: str, constraint: Any, out: Signature, depth: int) -> None:
    name = type(constraint).__name__
    if constraint is None:
        out[path] = Leaf(OTHER, value="unconstrained")
    elif name == "TensorSpec":
        out[path] = Leaf(
            TENSOR, dtype=str(constraint.dtype.name), shape=_shape_text(constraint.shape)
        )
    elif name == "Literal":
        out[path] = Leaf(PYTHON, value=plain_value(constraint.value))
    elif name == "VariableSpec":
        out[path] = Leaf(
            OTHER,
            value=f"a tf.Variable {constraint.dtype.name} of shape {_shape_text(constraint.shape)}",
        )
    elif name == "Weakref":
        # TF traces objects (models, optimizers, custom classes) by identity.
        referent = constraint._ref()
        out[path] = Leaf(
            OBJECT,
            value="" if referent is None else _clip(type(referent).__name__),
            identity=str(constraint._ref_hash),
        )
    elif name in ("Tuple", "List") and depth < MAX_DEPTH:
        components = _components(constraint)
        for index, component in enumerate(components):
            _flatten(f"{path}[{index}]", component, out, depth + 1)
        if not components:
            out[path] = Leaf(OTHER, value=f"empty {name.lower()}")
    elif name == "Dict" and depth < MAX_DEPTH:
        for key, component in constraint.mapping.items():
            _flatten(f"{path}[{plain_value(key)}]", component, out, depth + 1)
        if not constraint.mapping:
            out[path] = Leaf(OTHER, value="empty dict")
    elif name in ("NamedTuple", "Attrs") and depth < MAX_DEPTH:
        # namedtuples and attrs classes: one leaf per field, named like attribute access.
        names = tuple(constraint.attribute_names)
        values = _components(constraint.attributes)
        for field_name, component in zip(names, values, strict=True):
            _flatten(f"{path}.{field_name}", component, out, depth + 1)
        if not names:
            out[path] = Leaf(OTHER, value=_clip(str(constraint)))
    else:
        out[path] = Leaf(OTHER, value=_clip(str(constraint)))


def signature_of(concrete_function: Any) -> Signature:
    """The argument leaves of one trace (reads ``function_type``: no tracing)."""
    leaves: Signature = {}
    parameters = concrete_function.function_type.parameters
    for name, parameter in parameters.items():
        _flatten(str(name), parameter.type_constraint, leaves, 0)
    return leaves


def _top_argument(path: str) -> str:
    return path.split("[", 1)[0].split(".", 1)[0]


def differences(before: Signature, after: Signature) -> list[Difference]:
    """What changed from ``before`` to ``after``, one entry per argument leaf.

    Leaves present on one side only mean a nested argument changed structure
    (e.g. a Python list got longer); those become one ``other`` per argument.
    """
    found: list[Difference] = []
    restructured: list[str] = []
    for path in list(after) + [p for p in before if p not in after]:
        old = before.get(path)
        new = after.get(path)
        if old == new:
            continue
        if old is None or new is None:
            top = _top_argument(path)
            if top not in restructured:
                restructured.append(top)
            continue
        if old.kind == TENSOR and new.kind == TENSOR:
            if old.dtype != new.dtype:
                found.append(Difference("dtype", path, old.dtype, new.dtype))
            else:
                found.append(Difference("shape", path, old.shape, new.shape))
        elif old.kind == PYTHON and new.kind == PYTHON:
            found.append(Difference("python_value", path, old.value, new.value))
        elif {old.kind, new.kind} == {TENSOR, PYTHON}:
            found.append(Difference("kind", path, old.describe(), new.describe()))
        elif old.kind == OBJECT and new.kind == OBJECT:
            # A temporary object may be gone (no class name) by the time we read.
            same_class = old.value == new.value or not (old.value and new.value)
            name = Leaf(OBJECT, value=new.value or old.value).describe()
            found.append(
                Difference(
                    "other",
                    path,
                    name if same_class else old.describe(),
                    f"a different {name[2:]} (objects are traced by identity: "
                    "each new one traces again)"
                    if same_class
                    else new.describe(),
                )
            )
        else:
            found.append(Difference("other", path, old.describe(), new.describe()))
    for top in restructured:
        found.append(Difference("other", top, None, None))
    return found


def closest_differences(earlier: list[Signature], new: Signature) -> list[Difference] | None:
    """Differences to the most similar earlier trace; None when there is none.

    Ties go to the most recent trace: ``(2,) -> (3,) -> (4,)`` reads as two steps.
    """
    best: list[Difference] | None = None
    for signature in reversed(earlier):
        found = differences(signature, new)
        if best is None or len(found) < len(best):
            best = found
            if not best:
                break
    return best
