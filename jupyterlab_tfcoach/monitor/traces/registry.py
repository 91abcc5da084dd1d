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

A user's function traced again while another tf.function traces (``augment(x)`` called
in a ``train_step``) is not told as a retrace: its graph is inlined into the caller's, made
once per trace of the caller whatever the shapes, so an ``input_signature`` on it would
change nothing (the caller's retraces are told). Its signature is kept as history.
"""

from __future__ import annotations

import gc
import itertools
import linecache
import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.hooks import MethodHooks, original_method
from jupyterlab_tfcoach.monitor.locations import CellLocator, caller_frame
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import (
    RETRACE,
    Note,
    RetraceReason,
    TraceEntry,
    note,
    retrace_reason,
)
from jupyterlab_tfcoach.monitor.tftypes import (
    POLYMORPHIC_FUNCTION_MODULE,
    functions_run_eagerly,
    loaded_class,
)
from jupyterlab_tfcoach.monitor.traces import body_scan as fx
from jupyterlab_tfcoach.monitor.traces import signatures as sig
from jupyterlab_tfcoach.monitor.traces.body_advice import (
    call_as_written,
    calling_line,
    effect_source,
    side_effect_text,
    stale_text,
)
from jupyterlab_tfcoach.monitor.traces.entries import TraceEvent, recreation_notes, trace_entries
from jupyterlab_tfcoach.monitor.traces.frozen_objects import (
    CapturedObject,
    captured_objects,
    rebound_object,
    rebound_text,
)
from jupyterlab_tfcoach.monitor.traces.identity import (
    KERAS,
    TENSORFLOW,
    USER,
    FunctionIdentity,
    identify,
    library_roots,
    unwrap,
)
from jupyterlab_tfcoach.monitor.traces.retrace_reasons import (
    MAX_REASONS_PER_TRACE,
    at_site,
    call_arguments,
    difference_reason,
    keras_reason,
    last_batch_reason,
)

# Graph ops that change a variable: a function that has them trains (or updates) state.
_UPDATE_OPS = ("AssignSubVariableOp", "AssignAddVariableOp", "AssignVariableOp", "ResourceApply")
MAX_SIGNATURES_PER_FUNCTION = 256


@dataclass
class FunctionState:
    """What we remember about one live tf.function object."""

    ref: weakref.ReferenceType[Any]
    # ids are reused as soon as an object dies (tf.function(f)(x) in a loop), serials are not.
    serial: int
    identity: FunctionIdentity | None = None
    read_traces: int = 0  # how many of TF's traces we have already read
    last_trace_cell: int | None = None  # the cell run (token) of its latest trace
    signatures: list[sig.Signature] = field(default_factory=list)
    logical_traces: int = 0  # traces, counting a variable-creating double first trace once
    # The user's Python function behind it (read once, at its first trace we see).
    effects_read: bool = False
    facts: fx.CodeFacts | None = None
    scope: fx.Scope | None = None
    owner_name: str = ""  # the Python function named in side-effect texts
    keras_step: bool = False  # a user train_step run by a step function Keras built
    # The user's code whose side effects are told (filename, first line, qualname).
    body_key: tuple[str, int, str] | None = None
    # Plain Python values read from outside while tracing, per (scope, name): one
    # value per trace that read a different one (plain immutable values only).
    baked: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    stale_reported: set[tuple[str, str, str]] = field(default_factory=set)
    # The TF/Keras objects the body read at its latest trace (weak: frozen_objects.py).
    captured: dict[tuple[str, str], CapturedObject] = field(default_factory=dict)


MAX_BAKED_VALUES = 8
# Side effects told in an earlier cell, per body and effect; bounded for a long session.
MAX_TOLD_EFFECTS = 4096


def _group_of(state: FunctionState, identity: FunctionIdentity) -> tuple[Any, ...]:
    """Entries are per code for plain user functions (recreations add up), else per object."""
    return ("code", identity.code_key) if identity.recreatable else ("function", state.serial)


def _count_the_trace_once(reasons: list[RetraceReason]) -> None:
    """One retrace, however many arguments changed in it: the first reason that counts as a
    retrace stands for the trace (``count`` 1), the others say what else changed (``count``
    0), so a batch ``(x, y)`` of a new size counts one retrace, not two."""
    counted = False
    for reason in reasons:
        if reason["counts_as"] != RETRACE:
            continue
        if counted:
            reason["count"] = 0
        counted = True


_CONTEXT_MODULE = "tensorflow.python.eager.context"


def _executing_eagerly() -> bool:
    """TensorFlow's own test, read from the module the user's import loaded (True when it
    cannot be read: the call is then treated as a plain eager call)."""
    context = sys.modules.get(_CONTEXT_MODULE)
    check = getattr(context, "executing_eagerly", None) if context is not None else None
    if check is None:
        return True
    try:
        return bool(check())
    except Exception:
        return True


class TraceRegistry:
    """The hooks on TensorFlow's Function and the per-cell trace bookkeeping."""

    def __init__(self, locator: CellLocator) -> None:
        self._locator = locator
        self._lock = threading.RLock()
        self._states: dict[int, FunctionState] = {}
        self._serials = itertools.count(1)
        self._events: list[TraceEvent] = []
        self._calls_in_cell = 0
        # ids of functions called without tracing this cell: their frozen values are compared.
        self._called: dict[int, tuple[str, int] | None] = {}
        self._cell: int | None = None
        self._code_key_totals: dict[tuple[str, int, str], int] = {}
        self._code_key_last_trace_cell: dict[tuple[str, int, str], tuple[int | None, int]] = {}
        self._shape_retraces: dict[tuple[Any, ...], int] = {}
        # (body_key, effect label) -> the cell that explained it. A side effect of the same
        # code is explained once: a later cell's retrace (a new compile, another instance of
        # the class, the same method traced for new shapes) does not repeat it.
        self._effects_told: dict[tuple[tuple[str, int, str], str], int | None] = {}
        self._function_class: type | None = None
        self._hooks = MethodHooks()
        self._cache_unreadable = False
        self._eager_reported = False
        self._call_line: str | None = None
        # The innermost cell line that made a tracing call, and its arguments as written.
        self._call_arguments: tuple[str | None, dict[str, str]] = (None, {})
        self.installed = False
        # Given the new traces (concrete functions) of every function not TensorFlow's
        # own, right when they are read: the broadcast scan reads their graphs then,
        # once per trace, and keeps nothing (symptoms/broadcast.py).
        self.on_new_traces: Callable[[list[Any]], None] | None = None

    # ----------------------------------------------------------------- hooks
    def install(self, report_existing_traces: bool) -> list[Note]:
        """Hook Function and register the functions that already exist.

        ``report_existing_traces``: TF was imported during the current cell, so
        traces of functions made before the hook belong to this cell's report.
        Returns notes for anything that could not be hooked.
        """
        function_class = loaded_class(POLYMORPHIC_FUNCTION_MODULE, "Function")
        if function_class is None:
            return [
                note(
                    "tfcoach cannot find TensorFlow's Function class in this TensorFlow "
                    "version: trace reports are off."
                )
            ]
        self._function_class = function_class
        if original_method(function_class, "__init__") is None or (
            original_method(function_class, "__call__") is None
        ):
            return [
                note("tfcoach cannot hook tf.function in this TensorFlow version: traces are off.")
            ]
        self._hooks.install(function_class, "__init__", self._init_hook)
        self._hooks.install(function_class, "__call__", self._call_hook)
        self.installed = True
        self._seed(function_class, read_existing=not report_existing_traces)
        return []

    def _init_hook(self, original_init: Any) -> Any:
        registry = self

        def init_hook(function: Any, *args: Any, **kwargs: Any) -> None:
            __tracebackhide__ = True  # hidden in IPython tracebacks
            original_init(function, *args, **kwargs)
            try:
                registry._register(function, read_existing=False)
            except Exception:
                pass

        return init_hook

    def _call_hook(self, original_call: Any) -> Any:
        registry = self

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

        return call_hook

    def uninstall(self) -> None:
        self._hooks.restore()
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
            # Where it was called from (plain data): advice can then rewrite that call.
            frame = caller_frame(2)
            self._called[id(function)] = (
                (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
            )
            return
        frame = caller_frame(2)
        call_site = self._locator.call_site(frame)
        with self._lock:
            state = self._states.get(id(function))
            if state is None or state.ref() is not function:
                state = self._register(function, read_existing=False)
            if state.read_traces > 0 and not _executing_eagerly():
                # Called while another tf.function traces: this new trace is inlined into
                # that one's graph and made once per trace of it, whatever its input
                # shapes. The outer function's own retraces are what cost, and they are
                # told; an input_signature here would change nothing. Kept as history.
                if state.identity is None:
                    state.identity = identify(function, self._locator)
                if state.identity.origin == USER:
                    self._read_new_traces(function, state, call_site=call_site, record=False)
                    return
            # The call as the user wrote it (`train_step(x_train, y_train)`), for advice.
            self._call_line = calling_line(frame)
            try:
                self._call_arguments = self._arguments_as_written(function, frame)
            except Exception:
                self._call_arguments = (None, {})
            try:
                self._read_new_traces(function, state, call_site=call_site, record=True)
            finally:
                self._call_line = None
                self._call_arguments = (None, {})

    def _arguments_as_written(self, function: Any, frame: Any) -> tuple[str | None, dict[str, str]]:
        """The innermost cell line calling the function, and parameter -> the argument as
        that line wrote it (``learning_rate`` -> ``lr_now``). Read only when the call
        traced (a stack walk and one line parsed: nothing per call)."""
        files = self._locator.cell_files()
        while frame is not None and frame.f_code.co_filename not in files:
            frame = frame.f_back
        if frame is None:
            return None, {}
        unwrapped = unwrap(function, library_roots())
        code = unwrapped.code
        if code is None or unwrapped.origin != USER:
            return None, {}
        parameters = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        positional = code.co_argcount
        if unwrapped.is_method:
            parameters, positional = parameters[1:], positional - 1
        line = calling_line(frame)
        return line, call_arguments(line, code.co_name, positional, parameters)

    # ------------------------------------------------------------- per cell
    def begin_cell(self, cell: int | None) -> None:
        with self._lock:
            self._cell = cell
            self._events = []
            self._calls_in_cell = 0
            self._called = {}

    def collect(self) -> tuple[list[TraceEntry], list[Note]]:
        """The ``traces`` entries and notes of the cell that just ran."""
        notes: list[Note] = []
        with self._lock:
            for state in list(self._states.values()):
                function = state.ref()
                if function is None:
                    continue
                try:
                    if function.experimental_get_tracing_count() != state.read_traces:
                        self._read_new_traces(
                            function, state, call_site=None, record=True, outside_call=True
                        )
                except Exception:
                    continue
            called, self._called = self._called, {}
            for key, location in called.items():
                state = self._states.get(key)
                if state is None or not (state.baked or state.captured):
                    continue
                try:
                    self._stale_values(state, location)
                except Exception:
                    continue
            events, self._events = self._events, []
            calls = self._calls_in_cell
        if self._cache_unreadable:
            notes.append(
                note(
                    "tfcoach cannot read tf.function trace signatures in this TensorFlow "
                    "version: retraces are reported without their reason."
                )
            )
            self._cache_unreadable = False
        eager = functions_run_eagerly()
        if eager and (calls or not self._eager_reported):
            notes.append(
                note(
                    "tf.config.run_functions_eagerly(True) is on: tf.function bodies run as "
                    "plain Python, so nothing traces and no graph is built. Call "
                    "tf.config.run_functions_eagerly(False) to get graphs (and trace reports) "
                    "back.",
                    "eager-vs-graph",
                )
            )
        self._eager_reported = eager
        entries, entry_notes = trace_entries(events)
        notes.extend(entry_notes)
        notes.extend(recreation_notes(events))
        return entries, notes

    def stale_training_steps(self, variable_ids: set[int]) -> list[str]:
        """User tf.functions traced before this cell that update variables and use some of
        ``variable_ids``: a training step that keeps the trainable set it was traced with.

        Called only when a layer's ``trainable`` flag changed (rare): reads each live user
        function's traced graphs once, holding nothing afterwards.
        """
        found: list[str] = []
        with self._lock:
            states = list(self._states.values())
        for state in states:
            identity = state.identity
            if identity is None or identity.origin != USER or state.last_trace_cell == self._cell:
                continue
            function = state.ref()
            if function is None:
                continue
            try:
                for concrete in list(function._function_cache.values()):
                    if not any(id(v) in variable_ids for v in concrete.variables):
                        continue
                    if any(
                        op.type.startswith(_UPDATE_OPS) for op in concrete.graph.get_operations()
                    ):
                        found.append(identity.name)
                        break
            except Exception:
                continue
            if len(found) >= 3:
                break
        return found

    def live_function_count(self) -> int:
        with self._lock:
            return sum(1 for state in self._states.values() if state.ref() is not None)

    # ------------------------------------------------------------ internals
    def _read_new_traces(
        self,
        function: Any,
        state: FunctionState,
        call_site: str | None,
        record: bool,
        outside_call: bool = False,
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
            if self.on_new_traces is not None and state.identity.origin != TENSORFLOW:
                try:
                    self.on_new_traces(concrete_functions[state.read_traces :])
                except Exception:
                    pass
            del concrete_functions
        except Exception:
            self._cache_unreadable = True
            new_signatures = [None] * (count - state.read_traces)
        first_new = state.read_traces
        first_event = len(self._events)
        for offset, signature in enumerate(new_signatures):
            index = first_new + offset
            event = self._classify(
                state, state.identity, index, first_new, signature, call_site, outside_call
            )
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
        state.last_trace_cell = self._cell
        recorded = self._events[first_event:]
        if recorded and any(event.counted for event in recorded):
            try:
                self._trace_effects(function, state, recorded[0])
            except Exception:
                pass

    def _classify(
        self,
        state: FunctionState,
        identity: FunctionIdentity,
        index: int,
        first_new: int,
        signature: sig.Signature | None,
        call_site: str | None,
        outside_call: bool = False,
    ) -> TraceEvent | None:
        function_id = state.serial
        group = _group_of(state, identity)
        reasons: list[RetraceReason]
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
                retrace_reason(
                    "other",
                    None,
                    None,
                    None,
                    f"Retraced{at_site(call_site)} (reason unknown).",
                )
            ]
        else:
            found = sig.closest_differences(state.signatures, signature)
            if not found and outside_call and index > 0:
                # Made by TensorFlow, not by a call of the learner's: saving
                # (`tf.saved_model.save`, `model.export`) traces each function again under
                # its own context with the same argument types. Nothing to change; history.
                return None
            if not found:
                reasons = [
                    retrace_reason(
                        "other",
                        None,
                        None,
                        None,
                        f"Retraced{at_site(call_site)} with the same argument types: the call "
                        "context changed (e.g. called from inside another tf.function or under "
                        "a different device or graph).",
                    )
                ]
            else:
                if any(d.kind == "shape" for d in found):
                    shape_count = self._shape_retraces.get(group, 0) + 1
                    self._shape_retraces[group] = shape_count
                if identity.origin == KERAS:
                    keras_retrace = keras_reason(found, call_site)
                    reasons = [keras_retrace] if keras_retrace is not None else []
                else:
                    last_batch = last_batch_reason(
                        found, call_site, shape_count, self._call_arguments[1]
                    )
                    first_shape = next((d for d in found if d.kind == "shape"), None)
                    reasons = (
                        [last_batch]
                        if last_batch is not None
                        else [
                            difference_reason(
                                difference,
                                call_site,
                                shape_count,
                                difference is first_shape,
                                signature,
                                found,
                                written=self._call_arguments[1],
                                call=self._call_arguments[0],
                                repeated=self._advised(group, difference),
                                earlier=state.signatures,
                            )
                            for difference in found[:MAX_REASONS_PER_TRACE]
                        ]
                    )
                if identity.origin != KERAS and len(found) > MAX_REASONS_PER_TRACE:
                    reasons.append(
                        retrace_reason(
                            "other",
                            None,
                            None,
                            None,
                            f"{len(found) - MAX_REASONS_PER_TRACE} more arguments of {name} "
                            "changed too.",
                        )
                    )
                _count_the_trace_once(reasons)
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

    def _advised(self, group: tuple[Any, ...], difference: sig.Difference) -> bool:
        """Whether this cell already explained a new Python value of the same argument of
        the same function: the cause and fix are said once, later values only named."""
        if difference.kind != "python_value":
            return False
        return any(
            event.group == group
            and any(
                reason["kind"] == "python_value" and reason["argument"] == difference.argument
                for reason in event.reasons
            )
            for event in self._events
        )

    def _first_trace_reasons(
        self, identity: FunctionIdentity, function_id: int, call_site: str | None
    ) -> tuple[list[RetraceReason], bool]:
        where = at_site(call_site)
        if identity.origin == KERAS:
            text = (
                f"First trace{where} of a step function Keras builds for fit()/evaluate()/"
                "predict() (a new one after every compile()); not a retrace."
            )
            return [retrace_reason("first_trace", None, None, None, text)], False
        key = identity.code_key
        previous = self._code_key_last_trace_cell.get(key) if identity.recreatable and key else None
        if key is not None and identity.recreatable:
            self._code_key_last_trace_cell[key] = (self._cell, function_id)
        if previous is None or previous[1] == function_id:
            return [retrace_reason("first_trace", None, None, None, f"First trace{where}.")], False
        if previous[0] == self._cell:
            text = (
                f"Recreated{where}: a new tf.function object was made for {identity.name} in this "
                "cell (tf.function(...) inside a loop or a function that is called repeatedly), "
                "and every new object traces from scratch. Create the tf.function once, outside "
                "the loop, and reuse it."
            )
            return [retrace_reason("other", None, None, None, text)], True
        text = (
            f"First trace{where} of a new tf.function object for {identity.name} (recreated: "
            "the earlier object was replaced, e.g. its cell ran again), so it traced from scratch."
        )
        return [retrace_reason("first_trace", None, None, None, text)], False

    def _trace_effects(self, function: Any, state: FunctionState, event: TraceEvent) -> None:
        """Side effects of the traced Python body (on the cell's entry) and the plain
        outer values it read (kept to compare after later calls)."""
        if not state.effects_read:
            state.effects_read = True
            source = effect_source(function, library_roots())
            if source is not None:
                target, instance, keras_step = source
                state.facts = fx.code_facts(target.__code__)
                state.scope = fx.Scope(target, instance)
                state.owner_name = str(target.__qualname__)
                state.keras_step = keras_step
                code = target.__code__
                state.body_key = (code.co_filename, code.co_firstlineno, state.owner_name)
        facts, scope = state.facts, state.scope
        if facts is None or scope is None:
            return
        live = [
            effect
            for effect in fx.live_effects(facts, scope)
            if self._first_telling(state, effect.label)
        ]
        instance_name = self._instance_name(scope, facts) if live else None
        for effect in live:
            text = side_effect_text(
                effect,
                state.owner_name,
                facts,
                state.keras_step,
                scope,
                instance_name,
                call_as_written(self._call_line, state.owner_name, instance_name),
            )
            event.reasons.append(retrace_reason("side_effect", effect.label, None, None, text))
        if state.keras_step:
            # Keras calls its step functions from inside another tf.function: we never
            # see the calls that reuse a trace, so frozen values cannot be compared.
            return
        state.captured = captured_objects(facts, scope)
        for key, value in fx.plain_snapshot(facts, scope).items():
            baked = state.baked.setdefault(key, [])
            if not any(fx.same_value(old, value) for old in baked):
                baked.append(value)
                del baked[:-MAX_BAKED_VALUES]

    def _first_telling(self, state: FunctionState, label: str) -> bool:
        """Whether a side effect is told now: in the first cell that traced its code (every
        trace of that cell, which the entry merges), not again in later cells."""
        if state.body_key is None:
            return True
        key = (state.body_key, label)
        told = self._effects_told.get(key, self._cell)
        if told != self._cell:
            return False
        if len(self._effects_told) >= MAX_TOLD_EFFECTS:
            self._effects_told.clear()
        self._effects_told[key] = self._cell
        return True

    def effect_told_now(self, key: tuple[tuple[str, int, str], str]) -> bool:
        """Whether this cell's traces already told the side effect ``(body_key, label)``."""
        return key in self._effects_told and self._effects_told[key] == self._cell

    def mark_effect_told(self, key: tuple[tuple[str, int, str], str]) -> None:
        """Record that the cell defining the body told the side effect ``(body_key,
        label)`` (``definitions.py``): a later cell's trace does not repeat it."""
        if len(self._effects_told) >= MAX_TOLD_EFFECTS:
            self._effects_told.clear()
        self._effects_told[key] = self._cell

    @staticmethod
    def _rebound_objects(state: FunctionState, owner: str, call: str | None) -> list[RetraceReason]:
        """Names rebound to another variable, model or optimizer since the trace that this
        cell's calls reused (once per name and new object)."""
        scope = state.scope
        if scope is None:
            return []
        reasons: list[RetraceReason] = []
        for key, old in state.captured.items():
            rebound = rebound_object(key, old, scope)
            if rebound is None:
                continue
            kind, old_type, new_type, new_id = rebound
            marker = (key[0], key[1], f"object {new_id}")
            if marker in state.stale_reported:
                continue
            state.stale_reported.add(marker)
            label = f"self.{key[1]}" if key[0] == fx.SELF else key[1]
            text = rebound_text(owner, label, kind, old_type, new_type, call)
            reasons.append(
                retrace_reason("stale_value", label, f"a {old_type}", f"another {new_type}", text)
            )
        return reasons

    @staticmethod
    def _instance_name(scope: fx.Scope, facts: fx.CodeFacts) -> str | None:
        if facts.self_name is None:
            return None
        function = scope.function
        if function is None:
            return None
        return name_bound_to(id(scope.instance), function.__globals__)

    def _stale_values(self, state: FunctionState, location: tuple[str, int] | None) -> None:
        """A call this cell reused a trace made with another value of an outer name."""
        facts, scope, identity = state.facts, state.scope, state.identity
        if facts is None or scope is None or identity is None:
            return
        owner = state.owner_name or identity.name
        line = linecache.getline(*location).strip() if location is not None else None
        call = call_as_written(line or None, owner, None)
        reasons: list[RetraceReason] = []
        for key, baked in state.baked.items():
            present, value = scope.lookup(*key)
            if not present or not fx.is_plain(value) or not baked:
                continue
            if any(fx.same_value(old, value) for old in baked):
                continue
            marker = (key[0], key[1], repr(value)[:200])
            if marker in state.stale_reported:
                continue
            state.stale_reported.add(marker)
            label = f"self.{key[1]}" if key[0] == fx.SELF else key[1]
            old = baked[-1]
            text = stale_text(
                state.owner_name or identity.name,
                key,
                old,
                value,
                facts,
                state.signatures[-1] if state.signatures else None,
                self._instance_name(scope, facts) if key[0] == fx.SELF else None,
                call,
            )
            reasons.append(
                retrace_reason("stale_value", label, fx.value_text(old), fx.value_text(value), text)
            )
        reasons.extend(self._rebound_objects(state, owner, call))
        if not reasons:
            return
        total = (
            self._code_key_totals.get(identity.code_key, 0)
            if identity.recreatable and identity.code_key is not None
            else state.logical_traces
        )
        self._events.append(
            TraceEvent(
                group=_group_of(state, identity),
                identity=identity,
                counted=False,
                reasons=reasons,
                total_after=total,
            )
        )
