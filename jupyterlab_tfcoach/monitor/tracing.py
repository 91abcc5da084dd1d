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

import ast
import functools
import gc
import inspect
import itertools
import linecache
import os
import sys
import textwrap
import threading
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import signatures as sig
from jupyterlab_tfcoach.monitor import trace_effects as fx
from jupyterlab_tfcoach.monitor.course_links import course_link
from jupyterlab_tfcoach.monitor.locations import CellLocator, caller_frame
from jupyterlab_tfcoach.monitor.report import note
from jupyterlab_tfcoach.monitor.tftypes import (
    HOOK_MARK,
    POLYMORPHIC_FUNCTION_MODULE,
    functions_run_eagerly,
)

# Graph ops that change a variable: a function that has them trains (or updates) state.
_UPDATE_OPS = ("AssignSubVariableOp", "AssignAddVariableOp", "AssignVariableOp", "ResourceApply")
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
    last_trace_cell: int | None = None  # the cell run (token) of its latest trace
    signatures: list[sig.Signature] = field(default_factory=list)
    logical_traces: int = 0  # traces, counting a variable-creating double first trace once
    # The user's Python function behind it (read once, at its first trace we see).
    effects_read: bool = False
    facts: fx.CodeFacts | None = None
    scope: fx.Scope | None = None
    owner_name: str = ""  # the Python function named in side-effect texts
    keras_step: bool = False  # a user train_step run by a step function Keras built
    # Plain Python values read from outside while tracing, per (scope, name): one
    # value per trace that read a different one (plain immutable values only).
    baked: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    stale_reported: set[tuple[str, str, str]] = field(default_factory=set)


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


def _method_instance(method: types.MethodType) -> Any | None:
    """The object a method is bound to; TF binds per-instance methods to a TfMethodTarget
    holding a weak reference to it."""
    owner = method.__self__
    if type(owner).__name__ == "TfMethodTarget":
        try:
            owner = object.__getattribute__(owner, "weakrefself_target__")()
        except Exception:
            return None
    return owner


@dataclass
class _Unwrapped:
    target: Any
    code: types.CodeType | None
    origin: str
    is_method: bool
    instance: Any | None


def _unwrap(function: Any, roots: dict[str, str]) -> _Unwrapped:
    """TF's decorators and bound-method wrappers peeled off down to the user's code."""
    target = function._python_function
    is_method = False
    instance = None
    code: types.CodeType | None = None
    origin = TENSORFLOW
    for _ in range(_UNWRAP_LIMIT):
        # Exact type checks: isinstance would fall back to a user object's __class__.
        if type(target) is types.MethodType:
            is_method = True
            instance = _method_instance(target)
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
    return _Unwrapped(target, code, origin, is_method, instance)


def identify(function: Any, locator: CellLocator) -> FunctionIdentity:
    """Who the user's code behind a tf.function is."""
    unwrapped = _unwrap(function, _library_roots())
    target, code, origin, is_method = (
        unwrapped.target,
        unwrapped.code,
        unwrapped.origin,
        unwrapped.is_method,
    )
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


def _dimensions(shape: str | None) -> list[str] | None:
    """``"(32, 4)"`` -> ``["32", "4"]``; None for an unknown rank."""
    if shape is None or not shape.startswith("("):
        return None
    return [part.strip() for part in shape.strip("(),").split(",") if part.strip()]


def _is_smaller_batch(before: str | None, after: str | None) -> bool:
    """Only the first of two or more dimensions changed, and it got smaller: a last
    partial batch. A 1-D tensor that got shorter is as likely a shorter sequence."""
    old, new = _dimensions(before), _dimensions(after)
    if not old or not new or len(old) < 2 or len(old) != len(new) or old[1:] != new[1:]:
        return False
    return old[0].isdigit() and new[0].isdigit() and int(new[0]) < int(old[0])


def _is_flag(value: str | None) -> bool:
    """A bool, None or string Python argument: usually a mode switch with few values."""
    return value is not None and (value in ("True", "False", "None") or value[:1] in ("'", '"'))


def _is_simple_name(path: str) -> bool:
    return path.isidentifier()


def _tensor_dtype_for(signature: sig.Signature | None, value: str | None) -> str:
    """The dtype a Python number argument should become: the one the function works in.

    ``tf.constant(0.1)`` is float32 but ``tf.constant(1)`` is int32: an int passed to a
    function whose tensors are float must still become a float tensor.
    """
    dtypes = [
        leaf.dtype for leaf in (signature or {}).values() if leaf.kind == sig.TENSOR and leaf.dtype
    ]
    floats = [d for d in dtypes if d.startswith(("float", "bfloat", "half"))]
    if floats:
        return max(set(floats), key=floats.count)
    text = value or ""
    is_float = any(mark in text for mark in (".", "e", "inf", "nan"))
    if not is_float:
        ints = [d for d in dtypes if d.startswith(("int", "uint"))]
        return max(set(ints), key=ints.count) if ints else "int32"
    return "float32"


def _spec(leaf: sig.Leaf, varying: set[int] | None, rank_changed: bool) -> str | None:
    """``tf.TensorSpec(shape=[None, 4], dtype=tf.float32)`` for one tensor leaf."""
    dims = _dimensions(leaf.shape)
    if dims is None or rank_changed:
        shape = "None"
    else:
        shape = (
            "["
            + ", ".join("None" if i in (varying or set()) else dim for i, dim in enumerate(dims))
            + "]"
        )
    return f"tf.TensorSpec(shape={shape}, dtype=tf.{leaf.dtype})"


def _varying_dimensions(
    found: list[sig.Difference],
) -> tuple[dict[str, set[int]], set[str]]:
    varying: dict[str, set[int]] = {}
    rank_changed: set[str] = set()
    for difference in found:
        if difference.kind != "shape":
            continue
        old, new = _dimensions(difference.before), _dimensions(difference.after)
        if old is None or new is None or len(old) != len(new):
            rank_changed.add(difference.argument)
            continue
        varying[difference.argument] = {
            i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b
        }
    return varying, rank_changed


def _shape_fix(signature: sig.Signature | None, found: list[sig.Difference]) -> str:
    """The input_signature to write, in the function's own argument names and dtypes."""
    varying, rank_changed = _varying_dimensions(found)
    leaves = list((signature or {}).items())
    if leaves and all(leaf.kind == sig.TENSOR and _is_simple_name(path) for path, leaf in leaves):
        specs = [_spec(leaf, varying.get(path), path in rank_changed) for path, leaf in leaves]
        decorator = f"@tf.function(input_signature=[{', '.join(s for s in specs if s)}])"
        return (
            "Fix: declare the shapes once, with None where the size varies: "
            f"{decorator} (or use tf.function(reduce_retracing=True))."
        )
    first = next((d for d in found if d.kind == "shape"), None)
    leaf = (signature or {}).get(first.argument) if first is not None else None
    if first is not None and leaf is not None and leaf.kind == sig.TENSOR:
        example = _spec(leaf, varying.get(first.argument), first.argument in rank_changed)
        return (
            "Fix: give the tf.function an input_signature with None where the size varies "
            f"(for `{first.argument}`: {example}), or use tf.function(reduce_retracing=True)."
        )
    return (
        "Fix: give the tf.function an input_signature with None in the dimension that varies "
        "(e.g. tf.TensorSpec(shape=[None, ...])), or use tf.function(reduce_retracing=True)."
    )


def _difference_reason(
    difference: sig.Difference,
    call_site: str | None,
    shape_retraces: int,
    first_shape_in_trace: bool = True,
    signature: sig.Signature | None = None,
    found: list[sig.Difference] | None = None,
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
                f"every new shape traces again.{repeat}{batch} "
                f"{_shape_fix(signature, found or [difference])}"
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
        dtype = _tensor_dtype_for(signature, after)
        text = (
            f"Retraced{where}: the Python value of `{argument}` changed from {before} to {after}. "
            "A Python argument is part of the trace key, so each new value traces again; "
            f"pass a tensor instead, in the dtype the function works in: "
            f"tf.constant({argument}, tf.{dtype})."
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
    elif after is not None and "traced by identity" in after:
        text = (
            f"Retraced{where}: `{argument}` is {after}. Create it once and pass the same "
            "object on every call."
        )
    else:
        text = f"Retraced{where}: `{argument}` changed from {before} to {after}."
        if "tf.Variable" in str(before) and "tf.Variable" in str(after):
            text += " A tf.Variable argument traces once per shape and dtype."
    return _reason(difference.kind, argument, before, after, text)


# ------------------------------------------------------- Python side effects
def _effect_source(
    function: Any, roots: dict[str, str]
) -> tuple[types.FunctionType, Any | None, bool] | None:
    """The user's Python function whose body runs while this tf.function traces, the
    object its ``self`` is (None for a plain function), and whether Keras runs it."""
    unwrapped = _unwrap(function, roots)
    target = unwrapped.target
    if type(target) is not types.FunctionType:
        return None
    if unwrapped.origin == USER:
        return target, unwrapped.instance if unwrapped.is_method else None, False
    if unwrapped.origin != KERAS:
        return None
    # Keras' step function closes over the model's own train_step/test_step/predict_step:
    # a user override runs while it traces.
    code = target.__code__
    for name, cell in zip(code.co_freevars, target.__closure__ or (), strict=False):
        if name not in ("step_function", "step_func"):
            continue
        try:
            content = cell.cell_contents
        except ValueError:
            return None
        if type(content) is not types.MethodType:
            return None
        inner = content.__func__
        if type(inner) is types.FunctionType and (
            _origin_of(inner.__code__.co_filename, roots) == USER
        ):
            return inner, content.__self__, True
    return None


def _calling_line(frame: Any) -> str | None:
    """The source line that made a call (read only when the call traced)."""
    if frame is None:
        return None
    try:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    except Exception:
        return None
    return line if line and len(line) <= 300 else None


def _call_as_written(line: str | None, owner: str, instance_name: str | None) -> str | None:
    """``train_step(x_train, y_train)`` as the calling line wrote it, or None."""
    if line is None:
        return None
    short = owner.rsplit(".", 1)[-1]
    wanted = instance_name if short == "__call__" else short
    if wanted is None:
        return None
    try:
        tree = ast.parse(line + " pass" if line.endswith(":") else line)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called == wanted:
            return ast.get_source_segment(line, node)
    return None


# NumPy / random module functions and the TensorFlow op that draws inside the graph.
_TF_RANDOM = {
    "normal": "tf.random.normal(shape, mean, stddev)",
    "randn": "tf.random.normal(shape)",
    "standard_normal": "tf.random.normal(shape)",
    "gauss": "tf.random.normal([], mu, sigma)",
    "normalvariate": "tf.random.normal([], mu, sigma)",
    "uniform": "tf.random.uniform(shape, low, high)",
    "rand": "tf.random.uniform(shape)",
    "random": "tf.random.uniform([])",
    "randint": "tf.random.uniform(shape, low, high, dtype=tf.int32)",
    "shuffle": "tf.random.shuffle(x)",
    "permutation": "tf.random.shuffle(x)",
}


def _random_in_graph(scope: fx.Scope, effect: fx.Effect) -> str | None:
    """The TensorFlow draw for the user's own ``np.random.normal(0.0, 0.1)`` call, with its
    arguments: ``tf.random.normal([], 0.0, 0.1)``. Read from the function's source."""
    function = scope.function
    if function is None:
        return None
    try:
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
    except Exception:
        return None
    wanted = effect.detail.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == wanted
        ):
            return _tf_random_call(wanted, node, source)
    return None


def _tf_random_call(name: str, call: ast.Call, source: str) -> str | None:
    args = [ast.get_source_segment(source, a) or "" for a in call.args]
    keywords = {k.arg: ast.get_source_segment(source, k.value) or "" for k in call.keywords}

    def pick(index: int, key: str, default: str | None) -> str | None:
        if key in keywords:
            return keywords[key]
        return args[index] if index < len(args) else default

    def shape(size: str | None) -> str:
        if size is None:
            return "[]"  # NumPy without a size draws one number
        return f"[{size}]" if size.replace("_", "").isdigit() else size

    if name == "normal":
        return (
            f"tf.random.normal({shape(pick(2, 'size', None))}, {pick(0, 'loc', '0.0')}, "
            f"{pick(1, 'scale', '1.0')})"
        )
    if name == "uniform":
        return (
            f"tf.random.uniform({shape(pick(2, 'size', None))}, {pick(0, 'low', '0.0')}, "
            f"{pick(1, 'high', '1.0')})"
        )
    if name in ("rand", "randn"):
        op = "uniform" if name == "rand" else "normal"
        return f"tf.random.{op}([{', '.join(args)}])"
    if name == "random" and not args:
        return "tf.random.uniform([])"
    if name in ("gauss", "normalvariate") and len(args) == 2:
        return f"tf.random.normal([], {args[0]}, {args[1]})"
    return None


def _call_example(owner: str, facts: fx.CodeFacts, instance_name: str | None = None) -> str:
    """``train_step(x, y)``; for a method ``counter(x)`` / ``counter.step(x)``."""
    short = owner.rsplit(".", 1)[-1]
    arguments = ", ".join(facts.parameters)
    if facts.self_name is None:
        return f"{short}({arguments})"
    obj = instance_name or "obj"
    return f"{obj}({arguments})" if short == "__call__" else f"{obj}.{short}({arguments})"


def _side_effect_text(
    effect: fx.Effect,
    owner: str,
    facts: fx.CodeFacts,
    keras_step: bool,
    scope: fx.Scope,
    instance_name: str | None,
    call_text: str | None = None,
) -> str:
    label = effect.label
    only = "runs only while TensorFlow traces it, not on every call"
    if effect.action == fx.RANDOM:
        replacement = _random_in_graph(scope, effect) or _TF_RANDOM.get(
            effect.detail.rsplit(".", 1)[-1], "tf.random.uniform([])"
        )
        return (
            f"`{label}(...)` in `{owner}` {only}: it draws one number while tracing and the "
            "graph keeps that number as a constant, so every call gets the same value. Draw "
            f"inside the graph with TensorFlow's random ops instead: `{replacement}`."
        )
    if effect.action == fx.PRINT:
        return (
            f"`print(...)` in `{owner}` {only}: it prints once per trace (showing symbolic "
            "tensors, not values). Use `tf.print(...)` to print on every call."
        )
    if effect.action == fx.COUNTER:
        operator = effect.detail or "+="
        operand = effect.operand or "..."
        method = {"+=": "assign_add", "-=": "assign_sub"}.get(operator)
        _, current = scope.lookup(effect.scope, effect.name)
        start = "0" if type(current) is int else "0.0"
        update = (
            f"`{label}.{method}({operand})`"
            if method
            else f"`{label}.assign({label} {operator[:-1]} {operand})`"
        )
        if effect.scope == fx.SELF:
            where = f"`self.{effect.name} = tf.Variable({start})` in `__init__`"
        elif effect.scope == fx.CLOSURE:
            where = (
                f"`{label} = tf.Variable({start})` once in the enclosing function (then "
                f"`nonlocal {label}` is not needed)"
            )
        else:
            where = (
                f"`{label} = tf.Variable({start})` once, outside the function (then "
                f"`global {label}` is not needed)"
            )
        return (
            f"`{label} {operator} {operand}` in `{owner}` {only}: `{label}` counts traces, "
            f"not calls. Keep it in a variable: {where}, and inside {update}."
        )
    if effect.action in (fx.MUTATION, fx.SUBSCRIPT):
        what = (
            f"`{label}.{effect.detail}(...)`"
            if effect.action == fx.MUTATION
            else f"`{label}[...] = ...`"
        )
        changes = (
            f"`{label}` changes once per trace (and keeps symbolic tensors that hold no "
            "values), not once per call"
        )
        call = call_text or _call_example(owner, facts, instance_name)
        if keras_step:
            fix = (
                'Return the value in the logs instead (`return {"loss": loss}`): fit() '
                'averages it per epoch into `history.history["loss"]`; for one value per '
                "batch, read `logs` in a keras.callbacks.Callback's on_train_batch_end."
            )
        elif effect.action == fx.MUTATION and effect.detail in ("append", "extend"):
            target = f"{instance_name or 'obj'}.{effect.name}" if effect.scope == fx.SELF else label
            fix = (
                f"Return the value from `{owner}` and append it outside, after each call: "
                f"`{target}.append(float({call}))`, or collect values inside with a "
                "tf.TensorArray."
            )
        else:
            fix = (
                f"Return the value from `{owner}` and update `{label}` outside, after the "
                "call, or keep it in a tf.Variable."
            )
        return f"{what} in `{owner}` {only}: {changes}. {fix}"
    # A plain value assigned to an outer name.
    return (
        f"`{label} = ...` in `{owner}` {only}: `{label}` is set once per trace. Return the "
        f"value from `{owner}` and assign it outside, or keep it in a tf.Variable "
        f"(`{label}.assign(...)`)."
    )


def _stale_text(
    owner: str,
    key: tuple[str, str],
    old: Any,
    new: Any,
    facts: fx.CodeFacts,
    signature: sig.Signature | None,
    instance_name: str | None,
    call_text: str | None = None,
) -> str:
    scope, name = key
    label = f"self.{name}" if scope == fx.SELF else name
    old_text, new_text = fx.value_text(old), fx.value_text(new)
    head = (
        f"`{owner}` still uses {label} = {old_text} from its trace; it is now {new_text}. "
        "Python values read while tracing become constants of the graph, and calls that "
        "reuse the trace do not see later changes."
    )
    parameters = list(facts.parameters)
    if type(new) in (int, float):
        dtype = _tensor_dtype_for(signature, fx.value_text(new))
        if scope == fx.SELF:
            return (
                f"{head} Keep it in a variable: `self.{name} = tf.Variable({old_text})` in "
                f"`__init__`, then change it with "
                f"`{instance_name or 'obj'}.{name}.assign({new_text})`."
            )
        extra = f"tf.constant({name}, tf.{dtype})"
        if call_text is not None and call_text.endswith(")") and "\n" not in call_text:
            # The call as the cell wrote it, with the new argument last.
            empty = call_text.endswith("()")
            call = f"{call_text[:-1]}{'' if empty else ', '}{extra})"
        else:
            arguments = ", ".join([*parameters, extra])
            call = f"{owner.rsplit('.', 1)[-1]}({arguments})"
        return (
            f"{head} Pass it as an argument (add a `{name}` parameter and call "
            f"`{call}`), or keep it in a variable: `{name} = tf.Variable({old_text})`, "
            f"then `{name}.assign({new_text})`."
        )
    return (
        f"{head} Pass it as an argument instead (a Python {type(new).__name__} argument "
        "traces once per value, which suits a switch), or run the cell that defines "
        f"`{owner}` again after changing it."
    )


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


MAX_BAKED_VALUES = 8
_PYTHON_KINDS = ("side_effect", "stale_value")


def _group_of(state: FunctionState, identity: FunctionIdentity) -> tuple[Any, ...]:
    """Entries are per code for plain user functions (recreations add up), else per object."""
    return ("code", identity.code_key) if identity.recreatable else ("function", state.serial)


def _entry_course(reasons: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The course section for an entry: what changes results first, then retracing."""
    kinds = {reason["kind"] for reason in reasons}
    sections = []
    if "side_effect" in kinds:
        sections.append("side-effects")
    if "stale_value" in kinds:
        sections.append("frozen-python-values")
    if kinds - {"first_trace", "side_effect", "stale_value"}:
        sections.append("retracing")
    sections.append("tracing")
    for section in sections:
        link = course_link(section)
        if link is not None:
            return link
    return None


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
        self._function_class: type | None = None
        self._patched: list[tuple[type, str, Any]] = []
        self._cache_unreadable = False
        self._eager_reported = False
        self._call_line: str | None = None
        self.installed = False

    # ----------------------------------------------------------------- hooks
    def install(self, report_existing_traces: bool) -> list[dict[str, Any]]:
        """Hook Function and register the functions that already exist.

        ``report_existing_traces``: TF was imported during the current cell, so
        traces of functions made before the hook belong to this cell's report.
        Returns notes for anything that could not be hooked.
        """
        module = sys.modules.get(POLYMORPHIC_FUNCTION_MODULE)
        function_class = getattr(module, "Function", None) if module is not None else None
        if not isinstance(function_class, type):
            return [
                note(
                    "tfcoach cannot find TensorFlow's Function class in this TensorFlow "
                    "version: trace reports are off."
                )
            ]
        self._function_class = function_class
        registry = self
        original_init = function_class.__dict__.get("__init__")
        original_call = function_class.__dict__.get("__call__")
        if original_init is None or original_call is None:
            return [
                note("tfcoach cannot hook tf.function in this TensorFlow version: traces are off.")
            ]
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
            # The call as the user wrote it (`train_step(x_train, y_train)`), for advice.
            self._call_line = _calling_line(frame)
            try:
                self._read_new_traces(function, state, call_site=call_site, record=True)
            finally:
                self._call_line = None

    # ------------------------------------------------------------- per cell
    def begin_cell(self, cell: int | None) -> None:
        with self._lock:
            self._cell = cell
            self._events = []
            self._calls_in_cell = 0
            self._called = {}

    def collect(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The ``traces`` entries and notes of the cell that just ran."""
        notes: list[dict[str, Any]] = []
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
            called, self._called = self._called, {}
            for key, location in called.items():
                state = self._states.get(key)
                if state is None or not state.baked:
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
        entries, entry_notes = self._entries(events)
        notes.extend(entry_notes)
        notes.extend(self._recreation_notes(events))
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
        first_event = len(self._events)
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
    ) -> TraceEvent | None:
        function_id = state.serial
        group = _group_of(state, identity)
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
                            difference,
                            call_site,
                            shape_count,
                            difference is first_shape,
                            signature,
                            found,
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

    def _trace_effects(self, function: Any, state: FunctionState, event: TraceEvent) -> None:
        """Side effects of the traced Python body (on the cell's entry) and the plain
        outer values it read (kept to compare after later calls)."""
        if not state.effects_read:
            state.effects_read = True
            source = _effect_source(function, _library_roots())
            if source is not None:
                target, instance, keras_step = source
                state.facts = fx.code_facts(target.__code__)
                state.scope = fx.Scope(target, instance)
                state.owner_name = str(target.__qualname__)
                state.keras_step = keras_step
        facts, scope = state.facts, state.scope
        if facts is None or scope is None:
            return
        live = fx.live_effects(facts, scope)
        instance_name = self._instance_name(scope, facts) if live else None
        for effect in live:
            text = _side_effect_text(
                effect,
                state.owner_name,
                facts,
                state.keras_step,
                scope,
                instance_name,
                _call_as_written(self._call_line, state.owner_name, instance_name),
            )
            event.reasons.append(_reason("side_effect", effect.label, None, None, text))
        if state.keras_step:
            # Keras calls its step functions from inside another tf.function: we never
            # see the calls that reuse a trace, so frozen values cannot be compared.
            return
        for key, value in fx.plain_snapshot(facts, scope).items():
            baked = state.baked.setdefault(key, [])
            if not any(fx.same_value(old, value) for old in baked):
                baked.append(value)
                del baked[:-MAX_BAKED_VALUES]

    @staticmethod
    def _instance_name(scope: fx.Scope, facts: fx.CodeFacts) -> str | None:
        if facts.self_name is None:
            return None
        function = scope.function
        if function is None:
            return None
        return fx.name_of(scope.instance, function.__globals__)

    def _stale_values(self, state: FunctionState, location: tuple[str, int] | None) -> None:
        """A call this cell reused a trace made with another value of an outer name."""
        facts, scope, identity = state.facts, state.scope, state.identity
        if facts is None or scope is None or identity is None:
            return
        owner = state.owner_name or identity.name
        line = linecache.getline(*location).strip() if location is not None else None
        call = _call_as_written(line or None, owner, None)
        reasons: list[dict[str, Any]] = []
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
            text = _stale_text(
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
                _reason("stale_value", label, fx.value_text(old), fx.value_text(value), text)
            )
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

    def _entries(
        self, events: list[TraceEvent]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        entries: dict[tuple[Any, ...], dict[str, Any]] = {}
        origins: dict[tuple[Any, ...], str] = {}
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
                origins[event.group] = event.identity.origin
            if event.counted:
                entry["new_traces"] += 1
            entry["total_traces"] = max(entry["total_traces"], event.total_after)
            for reason in event.reasons:
                # The first trace of a step function Keras builds is what every fit()
                # does: not worth a line. Its retraces and side effects are.
                if event.identity.origin == KERAS and reason["kind"] == "first_trace":
                    continue
                entry["reasons"].append(reason)
        for entry in entries.values():
            reasons = entry["reasons"]
            # Side effects and frozen values: once per entry and name, however many traces.
            seen: set[tuple[Any, ...]] = set()
            python: list[dict[str, Any]] = []
            for reason in reasons:
                if reason["kind"] in _PYTHON_KINDS:
                    key = (reason["kind"], reason["argument"], reason["after"])
                    if key not in seen:
                        seen.add(key)
                        python.append(reason)
            others = _condense([r for r in reasons if r["kind"] not in _PYTHON_KINDS])
            entry["reasons"] = (others[:1] + python + others[1:])[:MAX_REASONS_PER_ENTRY]
            entry["course"] = _entry_course(entry["reasons"])
        listed = [
            entry
            for group, entry in entries.items()
            if entry["reasons"] or (entry["new_traces"] and origins[group] != KERAS)
        ]
        notes: list[dict[str, Any]] = []
        if len(listed) > MAX_ENTRIES_PER_REPORT:
            rest = listed[MAX_ENTRIES_PER_REPORT:]
            names = ", ".join(entry["function"] for entry in rest[:10])
            more = f" and {len(rest) - 10} more" if len(rest) > 10 else ""
            notes.append(
                note(
                    f"{len(rest)} more tf.functions traced in this cell and are not listed "
                    f"({sum(entry['new_traces'] for entry in rest)} traces): {names}{more}.",
                    "tracing",
                )
            )
            listed = listed[:MAX_ENTRIES_PER_REPORT]
        return listed, notes

    def _recreation_notes(self, events: list[TraceEvent]) -> list[dict[str, Any]]:
        counts: dict[str, int] = {}
        for event in events:
            if event.recreated_in_cell:
                counts[event.identity.name] = counts.get(event.identity.name, 0) + 1
        return [
            note(
                f"{name} was recreated {count} time{'s' if count > 1 else ''} in this cell: "
                "each tf.function(...) call makes a new function object that traces again. "
                "These are recreations, not retraces; create the tf.function once and reuse it.",
                "retracing",
            )
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
