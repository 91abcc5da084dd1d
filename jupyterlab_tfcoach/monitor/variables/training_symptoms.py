"""Silent custom-loop bugs, found by their symptom at the ``tape.gradient`` call.

The hook on ``GradientTape.gradient`` (``tape_gradients.py``) hands every eager call to
``TrainingSymptoms.observe`` with the call site (the caller's code and line). Per call
site and cell, the evidence is gathered in the first three calls only, so a long
training loop pays a dict lookup and a counter per step after that:

1. first call: the trainable variables among the sources, as weak references, and the
   number of elements of the target;
2. second call (the site is a loop): the same variable objects again? Then a copy of
   each one's value is kept (bytes; variables over ``MAX_ELEMENTS`` elements are left
   out, at most ``MAX_TOTAL_ELEMENTS`` per cell), and whether every gradient of this call
   is exactly 0. New variable objects instead: which names, and which attributes of
   which tf.Module/Keras object (in the namespace or a calling function's locals), hold
   them;
3. third call, only after new objects at the second: the same search again.

A scalar target's value is also kept at calls 1, 2, 4, 8, ... (one read of one number,
log2(n) reads for n steps), for the divergence of a loss summed over the batch
(``loss_reduction``).

After the cell (``notes``), these symptoms are told, each once per call site:

- nothing trained: the site ran at least twice, and none of its variables changed
  (not told when the second call's sources are tensors and no variable: a functional
  update such as MAML's ``fast = [w - lr * g for ...]`` fed back to the tape, where the
  variables are not meant to change and ``assign`` would break the differentiable step);
  the cause is named from the user's code (``training_causes``, then a probability
  loss given raw scores, ``probability_losses``); with no cause, the symptom itself and
  what to check, when the code gives the gradients to an update;
- a target with more than one element while the variables did change: the gradients
  are those of the sum of its elements;
- some variables changed, and others that were all zeros never did, a matrix among
  them (``zero_start``, the same test as ``fit``'s): start the matrices at random values;
- some variables changed, and an object holding them keeps a parameter as a plain
  tensor (``constant_parameters``);
- variables recreated at every step: the same attribute of the same object, or the
  same name, held new variables at the second and third calls.
- training diverges: the sampled loss went non-finite or more than doubled, and the code
  sums it over the batch (``loss_reduction``).

Only eager calls are looked at (inside a ``tf.function`` the values are symbolic).
Nothing is held but weak references, ids, shapes, bytes of variable values and the
sampled loss values (floats).
"""

from __future__ import annotations

import math
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from jupyterlab_tfcoach.monitor.report import Note, note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers, library_attribute
from jupyterlab_tfcoach.monitor.traces.definitions import loop_told_recreating, told_recreating
from jupyterlab_tfcoach.monitor.training import loss_sign, maximised_targets, run_outcomes
from jupyterlab_tfcoach.monitor.variables import (
    constant_parameters,
    loss_reduction,
    probability_losses,
    zero_start,
)
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
MAX_NAMESPACE = 20_000

NOTHING_TRAINED_SECTIONS = {
    "loop_rebind": "rebinding-variables",
    "helper_rebind": "rebinding-variables",
    "new_name": "rebinding-variables",
    "unused": "stopped-learning",
    "discarded": "stopped-learning",
}
SCORES_SECTION = probability_losses.SECTION
NO_CAUSE_SECTION = "stopped-learning"
RECREATED_SECTION = "variables"


@dataclass
class _Watched:
    ref: weakref.ReferenceType[Any]
    before: bytes | None = None
    started_zero: bool = False  # ``before`` all zeros


@dataclass
class _Outcome:
    """One watched variable after the cell (``zero_start.WeightOutcome``)."""

    variable: Any
    changed: bool
    started_zero: bool
    shape: tuple[int, ...]


@dataclass
class _Holding:
    """An attribute that held one of a call's new variables, or a plain name
    (``holder`` None: a name of the namespace or of a calling function's locals)."""

    holder: weakref.ReferenceType[Any] | None
    label: str  # how the user reaches the holder: "mlp"; the name itself for a name
    class_name: str
    attribute: str

    def key(self) -> tuple[Any, ...] | None:
        if self.holder is None:
            return ("name", self.label)
        holder = self.holder()
        return None if holder is None else (id(holder), self.attribute)


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
    # Every gradient of the second call exactly zero (None: not read).
    zero_gradients: bool | None = None
    # The second call's sources held none of the first call's variables, and no
    # variable: tensors rebound by a functional update, not a loop that trains nothing.
    functional: bool = False
    # A scalar target's value at calls 1, 2, 4, 8, ... (``loss_reduction``).
    losses: list[tuple[int, float]] = field(default_factory=list)


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


def _all_zero_gradients(result: Any) -> bool | None:
    """Whether every gradient in ``result`` (a tensor, or a list/tuple of them) is all
    zeros; None when one is None, sparse, too big or unreadable."""
    gradients = list(result) if type(result) in (list, tuple) else [result]
    if not gradients or len(gradients) > MAX_SOURCES:
        return None
    for gradient in gradients:
        shape = _shape_of(gradient) if gradient is not None else None
        if shape is None or _elements(shape) > MAX_ELEMENTS:
            return None
        value = _value_bytes(gradient)
        if value is None:
            return None
        if any(value):
            return False
    return True


def _sample_loss(site: _Site, target: Any) -> None:
    """Keep a scalar float target's value (one read of one number)."""
    read = library_attribute(target, "numpy")
    if read is None:
        return
    try:
        value = read()
        if getattr(value, "shape", None) != () or value.dtype.kind != "f":
            return
        site.losses.append((site.calls, float(value)))
    except Exception:
        return


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
        # The last cell's loops, for their outcome (``training/run_outcomes.py``).
        self.finished: list[run_outcomes.LoopRun] = []

    def begin_cell(self) -> None:
        self._sites = {}
        self._copied_elements = 0
        self.finished = []

    # ------------------------------------------------------------ per step
    def observe(
        self, target: Any, flat_sources: list[Any], frame: FrameType | None, result: Any = None
    ) -> None:
        if frame is None:
            return
        code = frame.f_code
        key = (code.co_filename, frame.f_lineno, code.co_firstlineno)
        site = self._sites.get(key)
        if site is not None:
            site.calls += 1
            if site.calls & (site.calls - 1) == 0 and site.losses:
                _sample_loss(site, target)
            if site.calls == 2 or (site.calls == 3 and site.fresh):
                self._again(site, flat_sources, frame)
                if site.calls == 2 and site.copied:
                    site.zero_gradients = _all_zero_gradients(result)
            return
        if len(self._sites) >= MAX_SITES or not _executing_eagerly():
            return
        site = _Site(code.co_filename, frame.f_lineno, code.co_name, code.co_firstlineno)
        self._sites[key] = site
        site.target_shape = _shape_of(target)
        if site.target_shape == ():
            _sample_loss(site, target)
        for source in flat_sources[:MAX_SOURCES]:
            if self._trainable_variable(source):
                site.variables[id(source)] = _Watched(weakref.ref(source))

    def _trainable_variable(self, value: Any) -> bool:
        return (
            self.kind_of(value) in VARIABLE_KINDS
            and library_attribute(value, "trainable", True) is not False
        )

    def _again(self, site: _Site, flat_sources: list[Any], frame: FrameType) -> None:
        if site.calls == 2 and site.variables and not self._any_watched(site, flat_sources):
            # The sources are tensors now, not the variables of the first call: a
            # functional update (``fast = [w - lr * g for ...]``, MAML's inner loop) fed
            # back to the tape. The variables are not meant to change here.
            site.functional = True
            return
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
            watched.started_zero = watched.before is not None and not any(watched.before)
            self._copied_elements += size
        site.copied = True

    def _any_watched(self, site: _Site, flat_sources: list[Any]) -> bool:
        """Whether a source is one of the site's watched variables, or any variable."""
        for source in flat_sources[:MAX_SOURCES]:
            watched = site.variables.get(id(source))
            if watched is not None and watched.ref() is source:
                return True
            if self.kind_of(source) in VARIABLE_KINDS:
                return True
        return False

    def _holders_of(self, variable_ids: set[int], frame: FrameType | None) -> list[_Holding]:
        """Names, and attributes of tf.Module/Keras objects, that hold these variables:
        names of the namespace or of the locals of the functions between the call and the
        cell, and objects found there."""
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
        found: list[_Holding] = []
        named: set[str] = set()
        for scope in scopes:
            for name, value in list(scope.items())[:MAX_HOLDER_CANDIDATES]:
                if type(name) is not str or name.startswith("_") or id(value) in seen:
                    continue
                if id(value) in variable_ids and name not in named:
                    named.add(name)
                    found.append(_Holding(None, name, "", name))
                    continue
                kind = self.kind_of(value)
                if kind in HOLDER_KINDS:
                    seen.add(id(value))
                    candidates.append((name, value))
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
        self.finished = []
        for site in sites.values():
            if site.calls < 2:
                continue
            maximised = self._maximised_note(site, cell_source, where)
            if maximised is not None:
                # The fall is the optimizer doing its job on the wrong sign: not a
                # divergence for the loop's outcome to blame on the learning rate.
                found.append(maximised)
                continue
            if len(site.losses) >= 2 and len(self.finished) < MAX_SITES:
                # Whether the variables changed matters only to a loss that stayed level,
                # and the line is named only for a loop with a symptom: both cost.
                changed = (
                    run_outcomes.level(site.losses, site.calls)
                    and site.copied
                    and not site.fresh
                    and any(outcome.changed for outcome in _outcomes(site))
                )
                run = run_outcomes.LoopRun("", site.calls, list(site.losses), changed)
                if run_outcomes.loop_symptom(run) is not None:
                    # Weights that never moved cannot have diverged or stalled: the
                    # losses differ because the data did (one function evaluating many
                    # tasks, or several models in turn).
                    run.held = (
                        site.copied
                        and not site.fresh
                        and not any(outcome.changed for outcome in _outcomes(site))
                    )
                if run_outcomes.loop_symptom(run) is not None:
                    run.at = where(site.filename, site.line)[0]
                    self.finished.append(run)
            recreated = _recreated(site)
            if recreated:
                told = self._recreated_note(site, recreated, cell_source, where)
                if told is not None:
                    found.append(told)
                continue
            diverging = self._summed_loss_divergence_note(site, cell_source, where)
            if diverging is None:
                diverging = self._unsigned_loss_note(site, cell_source, where)
            if diverging is not None:
                found.append(diverging)
                continue
            if site.fresh or not site.copied:
                continue
            outcomes = _outcomes(site)
            if not outcomes:
                continue
            if any(outcome.changed for outcome in outcomes):
                shaped = self._summed_loss_note(site, cell_source, where)
                if shaped is not None:
                    found.append(shaped)
                found.extend(self._partly_trained_notes(site, outcomes, where, name_of))
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
        namespace = self.namespace()
        cause = causes.nothing_trained_cause(scope, call, namespace)
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
        if cause is None:
            scores = probability_losses.scores_given_to_probability_loss(
                scope, namespace, cell_source
            )
            if scores is not None:
                return note(head + _scores_given_to_probability_loss(scores, site), SCORES_SECTION)
            if not causes.applies_gradients(scope, call):
                return None  # gradients kept for later, or for code we cannot read
            return note(head + _no_cause_named(site, call), NO_CAUSE_SECTION)
        if cause.kind == "functional":
            return None  # new tensors used as weights on purpose: nothing to fix
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

    def _summed_loss_divergence_note(
        self, site: _Site, cell_source: str, where: Callable[[str, int], tuple[str, bool]]
    ) -> Note | None:
        how = loss_reduction.diverged(site.losses)
        if how is None:
            return None
        at, scope, call = self._scope(site, cell_source, where)
        if scope is None or call is None:
            return None
        namespace = self.namespace()
        summed = loss_reduction.summed_loss(scope, call, namespace)
        if summed is None:
            return None
        rate = causes.learning_rate_name(namespace)
        text = loss_reduction.summed_loss_note_text(call, at, how, summed, rate)
        return note(text, loss_reduction.SECTION)

    def _maximised_note(
        self, site: _Site, cell_source: str, where: Callable[[str, int], tuple[str, bool]]
    ) -> Note | None:
        """A quantity to maximise (a likelihood, a score) that fell as the optimizer,
        given its gradient unchanged, minimised it."""
        how = maximised_targets.fell(site.losses)
        if how is None:
            return None
        at, scope, call = self._scope(site, cell_source, where)
        if scope is None or call is None:
            return None
        found = maximised_targets.maximised_target(
            scope.source, scope.tree, call.target, call.statement, call.results, self.namespace()
        )
        if found is None:
            return None
        return note(maximised_targets.note_text(found, at, how), maximised_targets.SECTION)

    def _unsigned_loss_note(
        self, site: _Site, cell_source: str, where: Callable[[str, int], tuple[str, bool]]
    ) -> Note | None:
        """A loss falling below zero, from a log-likelihood written without its minus."""
        how = loss_sign.falling_below_zero(site.losses, "step")
        if how is None:
            return None
        at, scope, call = self._scope(site, cell_source, where)
        if scope is None or call is None or not call.target.isidentifier():
            return None
        unsigned = loss_sign.assigned_unsigned(
            scope.source, scope.tree, call.target, call.line, scope.line_offset, self.namespace()
        )
        head = (
            f"The loss {how} (`{call.target}` given to `{call.tape}.gradient`, {at}): each "
            "step made it more negative."
        )
        if unsigned is not None:
            again = "start the variables afresh and run the loop again"
            return note(head + loss_sign.cause_text(unsigned, again), loss_sign.SECTION)
        if math.isfinite(site.losses[-1][1]):
            return None  # a negative loss alone may be meant (a density's log-likelihood)
        return note(
            head + " A loss to minimise must be smaller for better predictions: check its "
            "sign (a cross-entropy or negative log-likelihood is `-mean(log p)`).",
            loss_sign.SECTION,
        )

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
    ) -> Note | None:
        at, scope, call = self._scope(site, cell_source, where)
        tape = f"`{call.tape}.gradient`" if call is not None else "`tape.gradient`"
        first = recreated[0]
        if first.holder is None:
            return self._recreated_names_note(site, recreated, scope, tape, at)
        attributes = sorted({h.attribute for h in recreated})
        holder = first.holder()
        if holder is not None and told_recreating(type(holder))[0]:
            # Told where the class is defined, with its fix: one entry per cause.
            return None
        if holder is not None:
            loop_told_recreating(type(holder))
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
            RECREATED_SECTION,
        )

    def _recreated_names_note(
        self,
        site: _Site,
        recreated: list[_Holding],
        scope: causes.Scope | None,
        tape: str,
        at: str,
    ) -> Note:
        names = [h.label for h in recreated if h.holder is None][:MAX_NAMED]
        created = causes.loop_created(scope, names, site.line) if scope is not None else None
        if created is not None:
            # In the order the user wrote them, not the namespace's.
            order = {s.split("=", 1)[0].strip(): i for i, s in enumerate(created.statements)}
            names.sort(key=lambda name: order.get(name, len(order)))
        listed = " and ".join(f"`{n}`" for n in names)
        head = (
            f"Variables recreated at every step: at each {tape} call ({at}) {listed} "
            f"{'is a new variable object' if len(names) == 1 else 'are new variable objects'}"
        )
        if created is None:
            return note(
                f"{head}, so every step starts again from their initial values and each "
                f"update is thrown away: the loss does not improve. Create the variables "
                f"once, before the training loop, and only update them inside it.",
                RECREATED_SECTION,
            )
        statements = ", ".join(f"`{s}`" for s in created.statements)
        return note(
            f"{head}: {statements} "
            f"{'runs' if len(created.statements) == 1 else 'run'} inside "
            f"`{created.loop}`, so every step starts again from the initial values and "
            f"each update is thrown away: the loss does not improve. Create the variables "
            f"once, before the loop: move {statements} above `{created.loop}`.",
            RECREATED_SECTION,
        )

    def _partly_trained_notes(
        self,
        site: _Site,
        outcomes: list[_Outcome],
        where: Callable[[str, int], tuple[str, bool]],
        name_of: Callable[[Any], str | None],
    ) -> list[Note]:
        """Some variables trained: those that started all zeros and never moved, and
        plain-tensor parameters of the objects holding the ones that trained."""
        found: list[Note] = []
        try:
            stuck = zero_start.stuck_at_zero(outcomes)
            if stuck:
                found.append(self._zero_started_note(site, stuck, outcomes, where, name_of))
        except Exception:
            pass
        try:
            found.extend(self._constant_parameter_notes(site, where))
        except Exception:
            pass
        return found

    def _zero_started_note(
        self,
        site: _Site,
        stuck: list[_Outcome],
        outcomes: list[_Outcome],
        where: Callable[[str, int], tuple[str, bool]],
        name_of: Callable[[Any], str | None],
    ) -> Note:
        at, _ = where(site.filename, site.line)
        stuck_names = [name_of(o.variable) for o in stuck]
        trained = [n for o in outcomes if o.changed and (n := name_of(o.variable))]
        listed = ", ".join(f"`{n}`" for n in stuck_names[:MAX_NAMED] if n) or (
            f"{len(stuck)} variables"
        )
        others = ", ".join(f"`{n}`" for n in trained[:MAX_NAMED]) or "the others"
        fixes = [
            _random_start(name, o)
            for o, name in zip(stuck, stuck_names, strict=True)
            if name and len(o.shape) >= 2
        ]
        fix = (
            f"start the weight matrices at small random values: `{'; '.join(fixes)}`."
            if fixes
            else "start the weight matrices at small random values (tf.random.normal)."
        )
        return note(
            f"Weights stuck at zero: {listed} started all zeros and never changed over "
            f"{site.calls} steps ({at}) while {others} trained: "
            f"{zero_start.zero_symmetry('weight matrix')}. Zeros are fine for biases; "
            f"{fix}",
            zero_start.SECTION,
        )

    def _constant_parameter_notes(
        self,
        site: _Site,
        where: Callable[[str, int], tuple[str, bool]],
    ) -> list[Note]:
        # The objects holding the variables given to tape.gradient (some of them trained).
        given = set(site.variables)
        try:
            bound = {id(value) for value in list(self.namespace().values())[:MAX_NAMESPACE]}
        except Exception:
            return []
        if given <= bound:
            return []  # every variable is a name of the notebook's own: no object to read
        owners: dict[int, tuple[str, Any]] = {}
        for holding in self._holders_of(given, None):
            holder = holding.holder() if holding.holder is not None else None
            if holder is not None and id(holder) not in owners:
                owners[id(holder)] = (holding.label, holder)
        if not owners:
            return []
        at, _ = where(site.filename, site.line)
        notes: list[Note] = []
        for found in constant_parameters.constant_parameters(list(owners.values()), self.kind_of)[
            :MAX_NAMED
        ]:
            notes.append(
                note(
                    f"A parameter that never learns: `self.{found.attribute}` of "
                    f"`{found.class_name}` is a plain tensor, not a variable: "
                    f"`{found.statement}` (in `{found.class_name}.{found.method}`) stores a "
                    f"constant, so it is not in {_trainable_variables_of(found.holder)} and "
                    f"kept its initial value over {site.calls} steps "
                    f"({at}) while the variables of `{found.holder}` trained. Make it a "
                    f"variable: `{found.fix}`.",
                    constant_parameters.SECTION,
                )
            )
        return notes


def _trainable_variables_of(holder: str) -> str:
    """```lin.trainable_variables``` for a name; for a layer found inside a model
    (``model.MyDense``: no attribute path to write), the model's."""
    if holder.isidentifier():
        return f"`{holder}.trainable_variables`"
    return f"the trainable variables of `{holder.split('.')[0]}`"


def _random_start(name: str, outcome: _Outcome) -> str:
    """``W1 = tf.Variable(tf.random.normal((3, 16), stddev=0.1))`` in the variable's dtype."""
    shape = "(" + ", ".join(str(s) for s in outcome.shape) + ")"
    dtype = library_attribute(outcome.variable, "dtype")
    dtype_name = dtype if type(dtype) is str else library_attribute(dtype, "name", "")
    typed = f", dtype=tf.{dtype_name}" if dtype_name in ("float16", "float64") else ""
    return f"{name} = tf.Variable(tf.random.normal({shape}, stddev=0.1{typed}))"


def _scores_given_to_probability_loss(
    found: probability_losses.ScoresGivenToProbabilityLoss, site: _Site
) -> str:
    expects = (
        f"`{found.loss}` expects probabilities (from_logits=False)"
        if found.loss_object
        else f"`{found.loss}` without from_logits=True expects probabilities"
    )
    zero = (
        ": every gradient was exactly 0 at the second step"
        if site.zero_gradients
        else ", and where it cuts, the gradient is exactly 0"
    )
    return (
        f" {expects}, but it is given `{found.prediction}`, which is not one: "
        f"{found.evidence}. The loss clips its input into [1e-7, 1 - 1e-7]{zero}. Tell the "
        f"loss it gets raw scores: `{found.fix}`; or apply `{found.activation}` to "
        f"`{found.prediction}` before the loss."
    )


def _no_cause_named(site: _Site, call: causes.GradientCall) -> str:
    """What was seen, and what to check, when the code shows no cause."""
    grads = call.results[0] if len(call.results) == 1 else f"[{', '.join(call.results)}]"
    check = f"[float(tf.reduce_max(tf.abs(g))) for g in {grads}]"
    if site.zero_gradients:
        return (
            " Every gradient was exactly 0 at the second step, so the update had nothing "
            "to apply: the loss is flat in these variables where they start. Look for what "
            "cuts the gradient between the variables and the loss: a clip (a probability "
            "loss given raw scores), a rounding or an integer cast, or ReLUs fed weights "
            f"that are all zero. Print the gradients' sizes to see them: `{check}`."
        )
    return (
        " The gradients were given to an update, but it changed nothing: check that the "
        "learning rate is not 0, that the gradients are not all 0 "
        f"(`{check}`), and that the update gets the variables given to tape.gradient."
    )


def _recreated(site: _Site) -> list[_Holding]:
    """Attributes of one object, or names, that held new variables at both later calls."""
    if len(site.fresh) < 2:
        return []
    second = {key for h in site.fresh[1] if (key := h.key()) is not None}
    return [h for h in site.fresh[0] if (key := h.key()) is not None and key in second]


def _outcomes(site: _Site) -> list[_Outcome]:
    """The watched variables whose values could be compared: every one that started all
    zeros (few), and the others only up to the first that changed (one change is enough
    to know that training ran: a big model is not read in full after every cell)."""
    found: list[_Outcome] = []
    any_changed = False
    ordered = sorted(site.variables.values(), key=lambda watched: not watched.started_zero)
    for watched in ordered:
        if any_changed and not watched.started_zero:
            break
        variable = watched.ref()
        if variable is None or watched.before is None:
            continue
        after = _value_bytes(variable)
        shape = _shape_of(variable)
        if after is None or shape is None:
            continue
        changed = after != watched.before
        any_changed = any_changed or changed
        found.append(_Outcome(variable, changed, watched.started_zero, shape))
    return found
