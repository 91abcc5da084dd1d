"""Which tf.functions traced during a cell, and why.

Every ``tf.function`` object, including the per-instance functions TensorFlow
builds for methods of ``tf.Module``/Keras objects (which bypass the public
``tf.function``), goes through ``Function.__init__``: a hook there feeds a
registry of weak references. A hook on ``Function.__call__`` compares the
public tracing count before and after each call, so a trace is seen the moment
it happens (with the cell line that made the call) even if the function object
dies right after, as in ``tf.function(f)`` inside a loop. After each cell a pass
over the live functions catches traces made without a call
(``get_concrete_function``).

For a new trace we read ``fn._function_cache.values()`` (trace order, never
traces; ``pretty_printed_concrete_signatures`` would) and keep only plain
strings of each trace's argument types, then diff against the closest earlier
trace of the same function object.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import sys
import threading
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import signatures as sig
from jupyterlab_tfcoach.monitor.course_links import course_link
from jupyterlab_tfcoach.monitor.locations import CellLocator, caller_frame
from jupyterlab_tfcoach.monitor.tftypes import (
    HOOK_MARK,
    POLYMORPHIC_FUNCTION_MODULE,
    functions_run_eagerly,
)

MAX_REASONS_PER_TRACE = 4
MAX_REASONS_PER_ENTRY = 20
# Reasons of one kind for one argument (a loop over Python floats, a loop that
# recreates a function) after which the rest are summed up in one line.
MAX_SIMILAR_REASONS = 3
# A cell that calls 100 functions gets 100 entries otherwise; the rest go in a note.
MAX_ENTRIES_PER_REPORT = 30
MAX_SIGNATURES_PER_FUNCTION = 256
_UNWRAP_LIMIT = 8

USER = "user"
KERAS = "keras"
TENSORFLOW = "tensorflow"


@dataclass(frozen=True)
class FunctionIdentity:
    """Who a tf.function is, from the Python function it wraps (plain data only)."""

    name: str
    defined_at: str | None
    code_key: tuple[str, int, str] | None
    is_method: bool
    origin: str  # USER | KERAS | TENSORFLOW
    # Keras' outer multi-step loop: it traces exactly when the one-step function it
    # calls does, so reporting both would say the same thing twice.
    hidden: bool = False

    @property
    def recreatable(self) -> bool:
        """A plain user function: a new tf.function object for it is a recreation.

        Methods get one function per instance by design and library functions
        (Keras builds new step functions at every compile()) are not the user's
        doing, so neither is a recreation.
        """
        return self.origin == USER and not self.is_method and self.code_key is not None


@dataclass
class FunctionState:
    """What we remember about one live tf.function object."""

    ref: weakref.ReferenceType[Any]
    # ids are reused as soon as an object dies (tf.function(f)(x) in a loop), serials are not.
    serial: int
    identity: FunctionIdentity | None = None
    read_traces: int = 0  # how many of TF's traces we have already read
    signatures: list[sig.Signature] = field(default_factory=list)
    logical_traces: int = 0  # traces, counting a variable-creating double first trace once


@dataclass
class TraceEvent:
    """One trace seen during the current cell, as plain data."""

    group: tuple[Any, ...]
    identity: FunctionIdentity
    counted: bool
    reasons: list[dict[str, Any]]
    total_after: int
    recreated_in_cell: bool = False


def _library_roots() -> dict[str, str]:
    roots: dict[str, str] = {}
    for origin, module_name in ((TENSORFLOW, "tensorflow"), (KERAS, "keras")):
        module = sys.modules.get(module_name)
        path = getattr(module, "__file__", None) if module is not None else None
        if isinstance(path, str):
            roots[origin] = os.path.dirname(path) + os.sep
    return roots


def _origin_of(filename: str, roots: dict[str, str]) -> str:
    for origin, root in roots.items():
        if filename.startswith(root):
            return origin
    if f"{os.sep}site-packages{os.sep}tensorflow{os.sep}" in filename:
        return TENSORFLOW
    return USER


_KERAS_ROLES = {
    "train_step": "train step: fit(), train_on_batch()",
    "test_step": "evaluation step: evaluate(), fit(validation_data=...), test_on_batch()",
    "predict_step": "predict step: predict(), predict_on_batch()",
}
# Keras' wrapper around one_step_on_data: never reported on its own (see ``hidden``).
_KERAS_HIDDEN = frozenset({"multi_step_on_iterator", "multi_step_on_data"})


def _keras_role(target: types.FunctionType) -> str | None:
    """Which Keras step a function built by the trainer runs, read from its closure.

    ``_make_function(step_function)`` closes over ``self.train_step`` or
    ``self.test_step``; the predict functions are named after predict. Only
    exact types are looked at, so no user attribute code runs.
    """
    code = target.__code__
    if "predict" in target.__qualname__:
        return _KERAS_ROLES["predict_step"]
    closure = target.__closure__ or ()
    for name, cell in zip(code.co_freevars, closure, strict=False):
        if name not in ("step_function", "step_func"):
            continue
        content = cell.cell_contents
        if type(content) is types.MethodType:
            content = content.__func__
        if type(content) is types.FunctionType:
            return _KERAS_ROLES.get(content.__name__)
    return None


def identify(function: Any, locator: CellLocator) -> FunctionIdentity:
    """Unwrap TF's decorators and bound-method wrappers down to the user's code."""
    roots = _library_roots()
    target = function._python_function
    is_method = False
    code: types.CodeType | None = None
    origin = TENSORFLOW
    for _ in range(_UNWRAP_LIMIT):
        # Exact type checks: isinstance would fall back to a user object's __class__.
        if type(target) is types.MethodType:
            is_method = True
            target = target.__func__
            continue
        is_function = type(target) is types.FunctionType
        code = target.__code__ if is_function else None
        if code is not None:
            origin = _origin_of(code.co_filename, roots)
            if origin == USER:
                break
        # TF's per-instance method functions and Keras' autograph wrappers keep the
        # function they wrap in __wrapped__ (or __original_wrapped__).
        inner = None
        if is_function:
            # __original_wrapped__ first: AutoGraph swaps a converted copy (in a
            # generated temp file) into __wrapped__.
            inner = target.__dict__.get("__original_wrapped__") or target.__dict__.get(
                "__wrapped__"
            )
        if inner is None:
            break
        target = inner
    if code is None:
        name = str(getattr(function, "_name", None) or "<tf.function>")
        return FunctionIdentity(name, None, None, is_method, origin)
    qualname = target.__qualname__ if type(target) is types.FunctionType else code.co_name
    name = str(qualname)
    hidden = False
    if origin == KERAS:
        # "TensorFlowTrainer._make_function.<locals>.one_step_on_data" twice (train and
        # validation) tells a learner nothing; say which Keras step it is.
        role = None
        try:
            role = _keras_role(target) if type(target) is types.FunctionType else None
        except Exception:
            role = None
        name = f"{code.co_name} (Keras {role})" if role else name
        hidden = code.co_name in _KERAS_HIDDEN
    return FunctionIdentity(
        name=name,
        defined_at=locator.describe(code.co_filename, code.co_firstlineno),
        code_key=(code.co_filename, code.co_firstlineno, str(qualname)),
        is_method=is_method,
        origin=origin,
        hidden=hidden,
    )


def _reason(kind: str, argument: str | None, before: Any, after: Any, text: str) -> dict[str, Any]:
    return {"kind": kind, "argument": argument, "before": before, "after": after, "text": text}


def _at(call_site: str | None) -> str:
    return f" (call at {call_site})" if call_site else ""


_SHAPE_FIX = (
    "Fix: give the tf.function an input_signature with None in the dimension that varies "
    "(e.g. tf.TensorSpec(shape=[None, ...])), or use tf.function(reduce_retracing=True)."
)


def _dimensions(shape: str | None) -> list[str] | None:
    """``"(32, 4)"`` -> ``["32", "4"]``; None for an unknown rank."""
    if shape is None or not shape.startswith("("):
        return None
    return [part.strip() for part in shape.strip("(),").split(",") if part.strip()]


def _is_smaller_batch(before: str | None, after: str | None) -> bool:
    """Only the first dimension changed, and it got smaller: a last partial batch."""
    old, new = _dimensions(before), _dimensions(after)
    if not old or not new or len(old) != len(new) or old[1:] != new[1:]:
        return False
    return old[0].isdigit() and new[0].isdigit() and int(new[0]) < int(old[0])


def _is_flag(value: str | None) -> bool:
    """A bool, None or string Python argument: usually a mode switch with few values."""
    return value is not None and (value in ("True", "False", "None") or value[:1] in ("'", '"'))


def _difference_reason(
    difference: sig.Difference,
    call_site: str | None,
    shape_retraces: int,
    first_shape_in_trace: bool = True,
) -> dict[str, Any]:
    argument, before, after = difference.argument, difference.before, difference.after
    where = _at(call_site)
    if difference.kind == "shape":
        if after is not None and "None" in after and (before is None or "None" not in before):
            text = (
                f"Retraced{where}: TensorFlow relaxed the shape of `{argument}` from {before} "
                f"to {after} (reduce_retracing=True), so other sizes in that dimension "
                "reuse this trace."
            )
        elif not first_shape_in_trace:
            # Same trace, same cause, same fix: said once (a batch (x, y) changes both).
            text = (
                f"Retraced{where}: the shape of `{argument}` changed from {before} to {after} "
                "too (same trace, same fix)."
            )
        else:
            repeat = (
                f" This function has now retraced {shape_retraces} times on shape changes."
                if shape_retraces > 1
                else ""
            )
            batch = (
                " A smaller first dimension is typically the last, partial batch of a "
                "dataset: .batch(n, drop_remainder=True) drops it, or keep it and use None "
                "for the batch dimension."
                if _is_smaller_batch(before, after)
                else ""
            )
            text = (
                f"Retraced{where}: the shape of `{argument}` changed from {before} to {after}; "
                f"every new shape traces again.{repeat}{batch} {_SHAPE_FIX}"
            )
    elif difference.kind == "dtype":
        text = (
            f"Retraced{where}: the dtype of `{argument}` changed from {before} to {after}; "
            "every new dtype traces again. Cast inputs to one dtype (tf.cast) before the call."
        )
    elif difference.kind == "python_value" and _is_flag(before) and _is_flag(after):
        text = (
            f"Retraced{where}: the Python value of `{argument}` changed from {before} to "
            f"{after}. Each distinct Python value gets its own trace (and reuses it when the "
            "value comes back): fine for a switch with a few values such as training=True/"
            "False; only a value that keeps changing needs to become a tensor."
        )
    elif difference.kind == "python_value":
        text = (
            f"Retraced{where}: the Python value of `{argument}` changed from {before} to {after}. "
            "A Python argument is part of the trace key, so each new value traces again; "
            f"pass a tensor instead (e.g. tf.constant({after}))."
        )
    elif difference.kind == "kind":
        text = (
            f"Retraced{where}: `{argument}` changed from a {before} to a {after}. A Python value "
            "and a tensor trace separately; pass the same kind every time (preferably a tensor)."
        )
    elif before is None and after is None:
        text = (
            f"Retraced{where}: the structure of `{argument}` changed. Nested Python lists, "
            "tuples and dicts are part of the trace key (their length and every Python value "
            "in them); pass a tensor instead."
        )
    else:
        text = f"Retraced{where}: `{argument}` changed from {before} to {after}."
    return _reason(difference.kind, argument, before, after, text)


def _keras_reason(differences: list[sig.Difference], call_site: str | None) -> dict[str, Any]:
    """One reason for a retrace of a step function Keras built (not the user's tf.function).

    The generic advice (give it an input_signature) cannot be followed for a
    function Keras owns, and a batch (x, y, sample_weight) changes several
    arguments at once: one line says what changed and what the user controls.
    """
    where = _at(call_site)
    first = differences[0]
    changed = ", ".join(
        (
            f"`{d.argument}` {d.before} -> {d.after}"
            if d.before or d.after
            else f"`{d.argument}` structure"
        )
        for d in differences[:MAX_REASONS_PER_TRACE]
    )
    relaxed = all(
        d.kind == "shape"
        and d.after is not None
        and "None" in d.after
        and "None" not in (d.before or "")
        for d in differences
    )
    if relaxed:
        text = (
            f"Retraced{where}: Keras builds its step functions with reduce_retracing=True, so "
            f"a batch of another size (typically the last, smaller batch) relaxed the shape "
            f"({changed}); later batches of any size reuse this trace. Expected; nothing to fix."
        )
    else:
        text = (
            f"Retraced{where}: the batch given to this step function Keras built changed "
            f"({changed}). Keras retraces it when the batch shape or structure changes, e.g. "
            "train_on_batch()/test_on_batch()/predict_on_batch() with a new batch size or with "
            "and without sample weights. Once is harmless; if it happens on every call, keep "
            "the batch size and arguments the same (or use fit()/evaluate()/predict())."
        )
    return _reason(first.kind, first.argument, first.before, first.after, text)


class TraceRegistry:
    """The hooks on TensorFlow's Function and the per-cell trace bookkeeping."""

    def __init__(self, locator: CellLocator) -> None:
        self._locator = locator
        self._lock = threading.RLock()
        self._states: dict[int, FunctionState] = {}
        self._serials = itertools.count(1)
        self._events: list[TraceEvent] = []
        self._calls_in_cell = 0
        self._cell: int | None = None
        self._code_key_totals: dict[tuple[str, int, str], int] = {}
        self._code_key_last_trace_cell: dict[tuple[str, int, str], tuple[int | None, int]] = {}
        self._shape_retraces: dict[tuple[Any, ...], int] = {}
        self._function_class: type | None = None
        self._patched: list[tuple[type, str, Any]] = []
        self._cache_unreadable = False
        self._eager_reported = False
        self.installed = False

    # ----------------------------------------------------------------- hooks
    def install(self, report_existing_traces: bool) -> list[str]:
        """Hook Function and register the functions that already exist.

        ``report_existing_traces``: TF was imported during the current cell, so
        traces of functions made before the hook belong to this cell's report.
        Returns notes for anything that could not be hooked.
        """
        module = sys.modules.get(POLYMORPHIC_FUNCTION_MODULE)
        function_class = getattr(module, "Function", None) if module is not None else None
        if not isinstance(function_class, type):
            return [
                "tfcoach cannot find TensorFlow's Function class in this TensorFlow version: "
                "trace reports are off."
            ]
        self._function_class = function_class
        registry = self
        original_init = function_class.__dict__.get("__init__")
        original_call = function_class.__dict__.get("__call__")
        if original_init is None or original_call is None:
            return ["tfcoach cannot hook tf.function in this TensorFlow version: traces are off."]
        original_init = getattr(original_init, HOOK_MARK, original_init)
        original_call = getattr(original_call, HOOK_MARK, original_call)

        @functools.wraps(original_init)
        def init_hook(function: Any, *args: Any, **kwargs: Any) -> None:
            __tracebackhide__ = True  # hidden in IPython tracebacks
            original_init(function, *args, **kwargs)
            try:
                registry._register(function, read_existing=False)
            except Exception:
                pass

        @functools.wraps(original_call)
        def call_hook(function: Any, *args: Any, **kwargs: Any) -> Any:
            # IPython leaves frames with this local out of the user's tracebacks.
            __tracebackhide__ = True
            try:
                before = function.experimental_get_tracing_count()
            except Exception:
                before = None
            try:
                return original_call(function, *args, **kwargs)
            finally:
                if before is not None:
                    try:
                        registry._after_call(function, before)
                    except Exception:
                        pass

        setattr(init_hook, HOOK_MARK, original_init)
        setattr(call_hook, HOOK_MARK, original_call)
        function_class.__init__ = init_hook  # type: ignore[misc]
        function_class.__call__ = call_hook  # type: ignore[method-assign]
        self._patched = [
            (function_class, "__init__", original_init),
            (function_class, "__call__", original_call),
        ]
        self.installed = True
        self._seed(function_class, read_existing=not report_existing_traces)
        return []

    def uninstall(self) -> None:
        for owner, name, original in self._patched:
            current = owner.__dict__.get(name)
            if getattr(current, HOOK_MARK, None) is original:
                setattr(owner, name, original)
        self._patched = []
        self.installed = False
        with self._lock:
            self._states.clear()
            self._events.clear()

    def _seed(self, function_class: type, read_existing: bool) -> None:
        # One full heap walk (~0.3 s with TF loaded) finds functions created
        # before the hook; never repeated, per-cell cost stays in the WeakSet.
        for obj in gc.get_objects():
            try:
                if issubclass(type(obj), function_class):
                    self._register(obj, read_existing=read_existing)
            except Exception:
                continue

    def _register(self, function: Any, read_existing: bool) -> FunctionState:
        key = id(function)
        with self._lock:
            state = self._states.get(key)
            if state is not None and state.ref() is function:
                return state

            def forget(ref: weakref.ReferenceType[Any], key: int = key) -> None:
                found = self._states.get(key)
                if found is not None and found.ref is ref:
                    del self._states[key]

            state = FunctionState(
                ref=weakref.ref(function, forget),
                serial=next(self._serials),
            )
            self._states[key] = state
            if read_existing:
                # Earlier traces are history: keep their signatures to diff against.
                self._read_new_traces(function, state, call_site=None, record=False)
            return state

    def _after_call(self, function: Any, before: int) -> None:
        self._calls_in_cell += 1
        if function.experimental_get_tracing_count() == before:
            return
        call_site = self._locator.call_site(caller_frame(2))
        with self._lock:
            state = self._states.get(id(function))
            if state is None or state.ref() is not function:
                state = self._register(function, read_existing=False)
            self._read_new_traces(function, state, call_site=call_site, record=True)

    # ------------------------------------------------------------- per cell
    def begin_cell(self, cell: int | None) -> None:
        with self._lock:
            self._cell = cell
            self._events = []
            self._calls_in_cell = 0

    def collect(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The ``traces`` entries and notes of the cell that just ran."""
        notes: list[str] = []
        with self._lock:
            for state in list(self._states.values()):
                function = state.ref()
                if function is None:
                    continue
                try:
                    if function.experimental_get_tracing_count() != state.read_traces:
                        self._read_new_traces(function, state, call_site=None, record=True)
                except Exception:
                    continue
            events, self._events = self._events, []
            calls = self._calls_in_cell
        if self._cache_unreadable:
            notes.append(
                "tfcoach cannot read tf.function trace signatures in this TensorFlow version: "
                "retraces are reported without their reason."
            )
            self._cache_unreadable = False
        eager = functions_run_eagerly()
        if eager and (calls or not self._eager_reported):
            notes.append(
                "tf.config.run_functions_eagerly(True) is on: tf.function bodies run as plain "
                "Python, so nothing traces and no graph is built. Call "
                "tf.config.run_functions_eagerly(False) to get graphs (and trace reports) back."
            )
        self._eager_reported = eager
        entries, entry_notes = self._entries(events)
        notes.extend(entry_notes)
        notes.extend(self._recreation_notes(events))
        return entries, notes

    def live_function_count(self) -> int:
        with self._lock:
            return sum(1 for state in self._states.values() if state.ref() is not None)

    # ------------------------------------------------------------ internals
    def _read_new_traces(
        self, function: Any, state: FunctionState, call_site: str | None, record: bool
    ) -> None:
        count = function.experimental_get_tracing_count()
        if count < state.read_traces:  # the cache was cleared: start over
            state.read_traces = 0
            state.signatures = []
        if count == state.read_traces:
            return
        if state.identity is None:
            state.identity = identify(function, self._locator)
        new_signatures: list[sig.Signature | None]
        try:
            concrete_functions = list(function._function_cache.values())
            new_signatures = [
                sig.signature_of(concrete) for concrete in concrete_functions[state.read_traces :]
            ]
            del concrete_functions
        except Exception:
            self._cache_unreadable = True
            new_signatures = [None] * (count - state.read_traces)
        first_new = state.read_traces
        for offset, signature in enumerate(new_signatures):
            index = first_new + offset
            event = self._classify(state, state.identity, index, first_new, signature, call_site)
            if signature is not None:
                state.signatures.append(signature)
                if len(state.signatures) > MAX_SIGNATURES_PER_FUNCTION:
                    # Keep the first trace (double-trace check) and the recent ones.
                    del state.signatures[1]
            if (
                record
                and event is not None
                and state.identity.origin != TENSORFLOW
                and not state.identity.hidden
            ):
                self._events.append(event)
        state.read_traces = count

    def _classify(
        self,
        state: FunctionState,
        identity: FunctionIdentity,
        index: int,
        first_new: int,
        signature: sig.Signature | None,
        call_site: str | None,
    ) -> TraceEvent | None:
        function_id = state.serial
        group: tuple[Any, ...] = (
            ("code", identity.code_key) if identity.recreatable else ("function", function_id)
        )
        reasons: list[dict[str, Any]]
        counted = True
        recreated_in_cell = False
        shape_count = 0
        name = identity.name
        if index == 0:
            reasons, recreated_in_cell = self._first_trace_reasons(identity, function_id, call_site)
            if identity.recreatable and identity.code_key is not None and not recreated_in_cell:
                # A new object made by another cell run (the defining cell ran again) starts
                # from scratch: its total must not add the dead object's traces. Objects
                # recreated within one cell (a loop) keep adding up.
                self._code_key_totals[identity.code_key] = 0
                self._shape_retraces.pop(group, None)
        elif (
            index == 1
            and first_new == 0
            and signature is not None
            and state.signatures
            and state.signatures[0] == signature
        ):
            # A function that creates variables traces twice on its first call
            # (the entries differ only in call context): one trace for the user.
            counted = False
            reasons = []
        elif signature is None:
            reasons = [
                _reason("other", None, None, None, f"Retraced{_at(call_site)} (reason unknown).")
            ]
        else:
            found = sig.closest_differences(state.signatures, signature)
            if not found:
                reasons = [
                    _reason(
                        "other",
                        None,
                        None,
                        None,
                        f"Retraced{_at(call_site)} with the same argument types: the call "
                        "context changed (e.g. called from inside another tf.function or under "
                        "a different device or graph).",
                    )
                ]
            else:
                if any(d.kind == "shape" for d in found):
                    shape_count = self._shape_retraces.get(group, 0) + 1
                    self._shape_retraces[group] = shape_count
                if identity.origin == KERAS:
                    reasons = [_keras_reason(found, call_site)]
                else:
                    first_shape = next((d for d in found if d.kind == "shape"), None)
                    reasons = [
                        _difference_reason(
                            difference, call_site, shape_count, difference is first_shape
                        )
                        for difference in found[:MAX_REASONS_PER_TRACE]
                    ]
                if identity.origin != KERAS and len(found) > MAX_REASONS_PER_TRACE:
                    reasons.append(
                        _reason(
                            "other",
                            None,
                            None,
                            None,
                            f"{len(found) - MAX_REASONS_PER_TRACE} more arguments of {name} "
                            "changed too.",
                        )
                    )
        if counted:
            state.logical_traces += 1
            if identity.recreatable and identity.code_key is not None:
                total = self._code_key_totals.get(identity.code_key, 0) + 1
                self._code_key_totals[identity.code_key] = total
            else:
                total = state.logical_traces
        else:
            total = (
                self._code_key_totals.get(identity.code_key, 0)
                if identity.recreatable and identity.code_key is not None
                else state.logical_traces
            )
            if self._events and self._events[-1].group == group:
                self._events[-1].reasons[0]["text"] += (
                    " TensorFlow traced it twice on this first call because it creates "
                    "variables; that is expected and not a retrace."
                )
        return TraceEvent(
            group=group,
            identity=identity,
            counted=counted,
            reasons=reasons,
            total_after=total,
            recreated_in_cell=recreated_in_cell,
        )

    def _first_trace_reasons(
        self, identity: FunctionIdentity, function_id: int, call_site: str | None
    ) -> tuple[list[dict[str, Any]], bool]:
        where = _at(call_site)
        if identity.origin == KERAS:
            text = (
                f"First trace{where} of a step function Keras builds for fit()/evaluate()/"
                "predict() (a new one after every compile()); not a retrace."
            )
            return [_reason("first_trace", None, None, None, text)], False
        key = identity.code_key
        previous = self._code_key_last_trace_cell.get(key) if identity.recreatable and key else None
        if key is not None and identity.recreatable:
            self._code_key_last_trace_cell[key] = (self._cell, function_id)
        if previous is None or previous[1] == function_id:
            return [_reason("first_trace", None, None, None, f"First trace{where}.")], False
        if previous[0] == self._cell:
            text = (
                f"Recreated{where}: a new tf.function object was made for {identity.name} in this "
                "cell (tf.function(...) inside a loop or a function that is called repeatedly), "
                "and every new object traces from scratch. Create the tf.function once, outside "
                "the loop, and reuse it."
            )
            return [_reason("other", None, None, None, text)], True
        text = (
            f"First trace{where} of a new tf.function object for {identity.name} (recreated: "
            "the earlier object was replaced, e.g. its cell ran again), so it traced from scratch."
        )
        return [_reason("first_trace", None, None, None, text)], False

    def _entries(self, events: list[TraceEvent]) -> tuple[list[dict[str, Any]], list[str]]:
        entries: dict[tuple[Any, ...], dict[str, Any]] = {}
        for event in events:
            entry = entries.get(event.group)
            if entry is None:
                entry = {
                    "function": event.identity.name,
                    "defined_at": event.identity.defined_at,
                    "new_traces": 0,
                    "total_traces": 0,
                    "reasons": [],
                    "course": None,
                }
                entries[event.group] = entry
            if event.counted:
                entry["new_traces"] += 1
            entry["total_traces"] = max(entry["total_traces"], event.total_after)
            entry["reasons"].extend(event.reasons)
        for entry in entries.values():
            retraced = any(reason["kind"] != "first_trace" for reason in entry["reasons"])
            entry["course"] = course_link("retracing" if retraced else "tracing")
            entry["reasons"] = _condense(entry["reasons"])[:MAX_REASONS_PER_ENTRY]
        listed = [entry for entry in entries.values() if entry["new_traces"] or entry["reasons"]]
        notes: list[str] = []
        if len(listed) > MAX_ENTRIES_PER_REPORT:
            rest = listed[MAX_ENTRIES_PER_REPORT:]
            names = ", ".join(entry["function"] for entry in rest[:10])
            more = f" and {len(rest) - 10} more" if len(rest) > 10 else ""
            notes.append(
                f"{len(rest)} more tf.functions traced in this cell and are not listed "
                f"({sum(entry['new_traces'] for entry in rest)} traces): {names}{more}."
            )
            listed = listed[:MAX_ENTRIES_PER_REPORT]
        return listed, notes

    def _recreation_notes(self, events: list[TraceEvent]) -> list[str]:
        counts: dict[str, int] = {}
        for event in events:
            if event.recreated_in_cell:
                counts[event.identity.name] = counts.get(event.identity.name, 0) + 1
        return [
            f"{name} was recreated {count} time{'s' if count > 1 else ''} in this cell: each "
            "tf.function(...) call makes a new function object that traces again. These are "
            "recreations, not retraces; create the tf.function once and reuse it."
            for name, count in counts.items()
        ]


def _similar_key(reason: dict[str, Any]) -> tuple[Any, ...]:
    # "Recreated ..." and "Retraced ... (reason unknown)" are both kind "other" with
    # no argument: the first word keeps them apart.
    text = str(reason.get("text") or "")
    return (reason["kind"], reason["argument"], text.split(" ", 1)[0])


def _condense(reasons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the first few reasons of each kind and argument; sum up the rest in one line.

    A loop over 50 Python floats retraces 50 times for the same reason: the
    first ones show the pattern, 47 more copies of the same advice are noise.
    """
    counts: dict[tuple[Any, ...], int] = {}
    omitted: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    kept: list[dict[str, Any]] = []
    for reason in reasons:
        key = _similar_key(reason)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= MAX_SIMILAR_REASONS:
            kept.append(reason)
        else:
            omitted.setdefault(key, []).append(reason)
    for key, rest in omitted.items():
        kind, argument, first_word = key
        last = rest[-1]
        if first_word == "Recreated":
            what = "recreations of the same function, as above"
        elif argument is not None and last["after"] is not None:
            what = (
                f"retraces for the same reason: `{argument}` changed again (last: {last['after']})"
            )
        else:
            what = "retraces for the same reason, as above"
        kept.append(
            _reason(
                kind,
                argument,
                rest[0]["before"],
                last["after"],
                f"... and {len(rest)} more {what}.",
            )
        )
    return kept
