"""Silent custom-loop bugs, found by their symptom at the ``tape.gradient`` call.

The hook on ``GradientTape.gradient`` (``tape_gradients.py``) hands every eager call to
``TrainingSymptoms.observe`` with the call site (the caller's code and line). Per call
site and cell, the evidence is gathered in the first three calls only, so a long
training loop pays a dict lookup and a counter per step after that:

1. first call: the trainable variables among the sources, as weak references, and the
   number of elements of the target;
2. second call (the site is a loop): the same variable objects again? Then a copy of
   each one's value is kept (bytes; variables over ``MAX_ELEMENTS`` elements are left
   out, at most ``MAX_TOTAL_ELEMENTS`` per cell). New variable objects instead: which
   attributes of which tf.Module/Keras object (in the namespace or a calling
   function's locals) hold them;
3. third call, only after new objects at the second: the same search again.

After the cell (``notes``), three symptoms are told, each once per call site:

- nothing trained: the site ran at least twice, and none of its variables changed;
  the cause is named from the user's code (``training_causes``);
- a target with more than one element while the variables did change: the gradients
  are those of the sum of its elements;
- variables recreated at every step: the same attribute of the same object held new
  variables at the second and third calls.

Only eager calls are looked at (inside a ``tf.function`` the values are symbolic).
Nothing is held but weak references, ids, shapes and bytes of variable values.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from jupyterlab_tfcoach.monitor.report import Note, note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers, library_attribute
from jupyterlab_tfcoach.monitor.variables import training_causes as causes
from jupyterlab_tfcoach.monitor.variables.kinds import (
    HOLDER_KINDS,
    KERAS_LAYER,
    KERAS_MODEL,
    VARIABLE_KINDS,
)

CONTEXT_MODULE = "tensorflow.python.eager.context"
MAX_SITES = 20
MAX_ELEMENTS = 1_000_000
MAX_TOTAL_ELEMENTS = 4_000_000
MAX_SOURCES = 2000
MAX_HOLDER_CANDIDATES = 2000
MAX_LAYERS = 200
MAX_FRAMES = 8
MAX_NAMED = 4

NOTHING_TRAINED_SECTIONS = {
    "loop_rebind": "rebinding-variables",
    "helper_rebind": "rebinding-variables",
    "new_name": "rebinding-variables",
    "unused": "stopped-learning",
    "discarded": "stopped-learning",
}


@dataclass
class _Watched:
    ref: weakref.ReferenceType[Any]
    before: bytes | None = None


@dataclass
class _Holding:
    """An attribute that held one of a call's new variables."""

    holder: weakref.ReferenceType[Any]
    label: str  # how the user reaches the holder: "mlp"
    class_name: str
    attribute: str


@dataclass
class _Site:
    filename: str
    line: int
    function: str
    first_line: int
    calls: int = 1
    variables: dict[int, _Watched] = field(default_factory=dict)
    target_shape: tuple[int, ...] | None = None
    copied: bool = False
    fresh: list[list[_Holding]] = field(default_factory=list)


def _executing_eagerly() -> bool:
    context = sys.modules.get(CONTEXT_MODULE)
    check = getattr(context, "executing_eagerly", None) if context is not None else None
    if check is None:
        return False
    try:
        return bool(check())
    except Exception:
        return False


def _shape_of(value: Any) -> tuple[int, ...] | None:
    shape = library_attribute(value, "shape")
    if shape is None:
        return None
    try:
        dims = tuple(shape)
    except Exception:
        return None
    out: list[int] = []
    for dim in dims:
        size = dim if type(dim) is int else getattr(dim, "value", None)
        if type(size) is not int:
            return None
        out.append(size)
    return tuple(out)


def _elements(shape: tuple[int, ...]) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


def _value_bytes(variable: Any) -> bytes | None:
    """A copy of a variable's value, read through the library's own ``numpy``."""
    read = library_attribute(variable, "numpy")
    if read is None:
        return None
    try:
        value = read()
        return bytes(value.tobytes())
    except Exception:
        return None


class TrainingSymptoms:
    """Evidence per ``tape.gradient`` call site for one cell, and the notes it gives."""

    def __init__(self, kind_of: Callable[[Any], str | None]) -> None:
        self.kind_of = kind_of
        self.namespace: Callable[[], Mapping[str, Any]] = dict
        self._sites: dict[tuple[str, int, int], _Site] = {}
        self._copied_elements = 0

    def begin_cell(self) -> None:
        self._sites = {}
        self._copied_elements = 0

    # ------------------------------------------------------------ per step
    def observe(self, target: Any, flat_sources: list[Any], frame: FrameType | None) -> None:
        if frame is None:
            return
        code = frame.f_code
        key = (code.co_filename, frame.f_lineno, code.co_firstlineno)
        site = self._sites.get(key)
        if site is not None:
            site.calls += 1
            if site.calls == 2 or (site.calls == 3 and site.fresh):
                self._again(site, flat_sources, frame)
            return
        if len(self._sites) >= MAX_SITES or not _executing_eagerly():
            return
        site = _Site(code.co_filename, frame.f_lineno, code.co_name, code.co_firstlineno)
        self._sites[key] = site
        site.target_shape = _shape_of(target)
        for source in flat_sources[:MAX_SOURCES]:
            if self._trainable_variable(source):
                site.variables[id(source)] = _Watched(weakref.ref(source))

    def _trainable_variable(self, value: Any) -> bool:
        return (
            self.kind_of(value) in VARIABLE_KINDS
            and library_attribute(value, "trainable", True) is not False
        )

    def _again(self, site: _Site, flat_sources: list[Any], frame: FrameType) -> None:
        fresh = []
        for source in flat_sources[:MAX_SOURCES]:
            watched = site.variables.get(id(source))
            if watched is None or watched.ref() is not source:
                if self._trainable_variable(source):
                    fresh.append(source)
        if fresh:
            site.fresh.append(self._holders_of({id(v) for v in fresh}, frame))
            site.variables = {id(v): _Watched(weakref.ref(v)) for v in fresh}
            return
        if site.calls != 2 or not _executing_eagerly():
            return
        for watched in site.variables.values():
            variable = watched.ref()
            shape = _shape_of(variable) if variable is not None else None
            if shape is None:
                continue
            size = _elements(shape)
            if size > MAX_ELEMENTS or self._copied_elements + size > MAX_TOTAL_ELEMENTS:
                continue
            watched.before = _value_bytes(variable)
            self._copied_elements += size
        site.copied = True

    def _holders_of(self, variable_ids: set[int], frame: FrameType) -> list[_Holding]:
        """Attributes of tf.Module/Keras objects that hold these variables: objects in the
        namespace, or in the locals of the functions between the call and the cell."""
        candidates: list[tuple[str, Any]] = []
        scopes: list[Mapping[str, Any]] = []
        current: FrameType | None = frame
        for _ in range(MAX_FRAMES):
            if current is None or current.f_code.co_name == "<module>":
                break  # the cell (or a module): its names are the namespace's
            scopes.append(current.f_locals)
            current = current.f_back
        scopes.append(self.namespace())
        seen: set[int] = set()
        for scope in scopes:
            for name, value in list(scope.items())[:MAX_HOLDER_CANDIDATES]:
                if type(name) is not str or name.startswith("_") or id(value) in seen:
                    continue
                kind = self.kind_of(value)
                if kind in HOLDER_KINDS:
                    seen.add(id(value))
                    candidates.append((name, value))
        found: list[_Holding] = []
        for name, holder in candidates:
            kind = self.kind_of(holder)
            objects = (
                keras_layers(holder, MAX_LAYERS) if kind in (KERAS_LAYER, KERAS_MODEL) else [holder]
            )
            for owner in objects:
                attributes = instance_dict(owner)
                if attributes is None:
                    continue
                for attribute, value in list(attributes.items()):
                    if type(attribute) is str and id(value) in variable_ids:
                        try:
                            reference = weakref.ref(owner)
                        except TypeError:
                            continue
                        label = name if owner is holder else f"{name}.{type(owner).__name__}"
                        found.append(_Holding(reference, label, type(owner).__name__, attribute))
        return found

    # ------------------------------------------------------------ the cell
    def notes(
        self,
        cell_source: str,
        where: Callable[[str, int], tuple[str, bool]],
        name_of: Callable[[Any], str | None],
        rebinding_reported: bool,
        gradient_notes_pending: bool,
    ) -> list[Note]:
        """What this cell's gradient calls showed. ``where(filename, line)`` says how to
        name a line and whether it is in the running cell."""
        sites, self._sites = self._sites, {}
        self._copied_elements = 0
        found: list[Note] = []
        for site in sites.values():
            if site.calls < 2:
                continue
            recreated = _recreated(site)
            if recreated:
                found.append(self._recreated_note(site, recreated, cell_source, where))
                continue
            if site.fresh or not site.copied:
                continue
            compared, changed = _compare(site)
            if not compared:
                continue
            if changed:
                shaped = self._summed_loss_note(site, cell_source, where)
                if shaped is not None:
                    found.append(shaped)
            elif not rebinding_reported and not gradient_notes_pending:
                unchanged = self._nothing_trained_note(site, cell_source, where, name_of)
                if unchanged is not None:
                    found.append(unchanged)
        return found

    def _scope(
        self, site: _Site, cell_source: str, where: Callable[[str, int], tuple[str, bool]]
    ) -> tuple[str, causes.Scope | None, causes.GradientCall | None]:
        at, in_cell = where(site.filename, site.line)
        scope = causes.parse_scope(
            cell_source, in_cell, site.filename, site.first_line, site.function
        )
        call = causes.gradient_call(scope, site.line) if scope is not None else None
        return at, scope, call

    def _nothing_trained_note(
        self,
        site: _Site,
        cell_source: str,
        where: Callable[[str, int], tuple[str, bool]],
        name_of: Callable[[Any], str | None],
    ) -> Note | None:
        at, scope, call = self._scope(site, cell_source, where)
        if scope is None or call is None:
            return None
        cause = causes.nothing_trained_cause(scope, call, self.namespace())
        if cause is None:
            return None
        named = [
            name
            for watched in site.variables.values()
            if (variable := watched.ref()) is not None and (name := name_of(variable))
        ]
        variables = (
            ", ".join(f"`{n}`" for n in named[:MAX_NAMED])
            if named
            else f"the variables in `{call.sources}`"
        )
        head = (
            f"Nothing trained: `{call.tape}.gradient` ran {site.calls} times ({at}), but "
            f"{variables} never changed, so every step computed the same loss."
        )
        gradients = ", ".join(f"`{r}`" for r in call.results)
        if cause.kind == "loop_rebind":
            loop_name, loop_iter = cause.names[0], cause.names[1]
            why = (
                f" `{cause.statement}` only rebinds the loop name `{loop_name}` to a new "
                f"tensor; the variables in `{loop_iter}` are never modified. Update each "
                f"variable in place: `{cause.fix}`."
            )
        elif cause.kind == "helper_rebind":
            parameter, argument, helper_call = cause.names[0], cause.names[1], cause.names[-1]
            why = (
                f" `{helper_call}` passes `{argument}` to `{cause.helper}`, where "
                f"`{cause.statement}` "
                f"rebinds its parameter `{parameter}` to a new tensor: the caller's "
                f"`{argument}` never changes. In `{cause.helper}`, update the variable in "
                f"place: `{cause.fix}`."
            )
        elif cause.kind == "new_name":
            new = cause.names[0]
            old = cause.names[1] if len(cause.names) > 1 else None
            untouched = f"`{old}` itself is never updated" if old else "no variable changes"
            why = (
                f" The gradients {gradients} only build new tensors: `{cause.statement}` "
                f"binds the result to `{new}`, and {untouched}. Update the variable in "
                f"place: `{cause.fix}` (or give the gradients to an optimizer's "
                f"apply_gradients)."
            )
        elif cause.kind == "discarded":
            why = (
                f" The result of `{cause.statement}` is thrown away: the gradients are never "
                f"given to an optimizer or `assign_sub`. Keep them, `{cause.fix}`, and apply "
                f"them: `{cause.names[0]}` (or `optimizer.apply_gradients(zip(grads, ...))`)."
            )
        else:
            why = (
                f" The gradients {gradients} are computed but never given to an optimizer "
                f"or `assign_sub`. Apply them after each `{call.tape}.gradient`: "
                f"`{cause.fix}` (or `optimizer.apply_gradients(zip(...))`)."
            )
        return note(head + why, NOTHING_TRAINED_SECTIONS[cause.kind])

    def _summed_loss_note(
        self, site: _Site, cell_source: str, where: Callable[[str, int], tuple[str, bool]]
    ) -> Note | None:
        shape = site.target_shape
        if shape is None or _elements(shape) < 2:
            return None
        at, scope, call = self._scope(site, cell_source, where)
        if scope is None or call is None or not causes.applies_gradients(scope, call):
            return None  # e.g. dy_dx of an element-wise function: no training step
        count = _elements(shape)
        target = call.target
        computed = (
            causes.loss_assignment(scope, target, call.line) if target.isidentifier() else None
        )
        shown = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
        if computed is not None:
            statement, fix = computed
            where_computed = f", computed by `{statement}`"
            fixed = f"`{fix}`"
        else:
            where_computed = ""
            fixed = f"`{call.tape}.gradient(tf.reduce_mean({target}), ...)`"
        return note(
            f"The loss is not a single number: `{target}` given to `{call.tape}.gradient` "
            f"({at}) has shape {shown}{where_computed}. tape.gradient of a tensor with "
            f"{count} elements differentiates their sum, so every gradient is {count} times "
            f"that of the mean loss and the steps are {count} times too large (the "
            f"variables can blow up to inf/nan without an error). Reduce it to a scalar "
            f"before taking the gradient: {fixed}.",
            "gradient-tape",
        )

    def _recreated_note(
        self,
        site: _Site,
        recreated: list[_Holding],
        cell_source: str,
        where: Callable[[str, int], tuple[str, bool]],
    ) -> Note:
        at, _, call = self._scope(site, cell_source, where)
        tape = f"`{call.tape}.gradient`" if call is not None else "`tape.gradient`"
        first = recreated[0]
        attributes = sorted({h.attribute for h in recreated})
        holder = first.holder()
        methods = causes.creating_methods(type(holder), set(attributes)) if holder else []
        method = f"`{first.class_name}.{methods[0]}`" if methods else f"`{first.class_name}`"
        listed = ", ".join(f"`self.{a}`" for a in attributes[:MAX_NAMED]) + (
            f" and {len(attributes) - MAX_NAMED} more" if len(attributes) > MAX_NAMED else ""
        )
        return note(
            f"Variables recreated at every step: at each {tape} call ({at}) "
            f"`{first.label}` holds new variable objects in {listed}, so {method} creates "
            f"them again on every call, with fresh initial values, and each update is "
            f"thrown away at the next step: the loss does not improve. Create the "
            f"variables once: in `__init__`, or in {method} only on the first call, "
            f"behind a guard (`self.built = False` in `__init__`, then `if not self.built:` "
            f"... `self.built = True`), as Keras layers do in `build()`.",
            "variables",
        )


def _recreated(site: _Site) -> list[_Holding]:
    """Attributes of one object that held new variables at both later calls."""
    if len(site.fresh) < 2:
        return []
    second = {(id(h.holder()), h.attribute) for h in site.fresh[1] if h.holder() is not None}
    return [
        h
        for h in site.fresh[0]
        if h.holder() is not None and (id(h.holder()), h.attribute) in second
    ]


def _compare(site: _Site) -> tuple[bool, bool]:
    """(whether any value could be compared, whether any changed)."""
    compared = changed = False
    for watched in site.variables.values():
        variable = watched.ref()
        if variable is None or watched.before is None:
            continue
        after = _value_bytes(variable)
        if after is None:
            continue
        compared = True
        if after != watched.before:
            changed = True
            break
    return compared, changed
