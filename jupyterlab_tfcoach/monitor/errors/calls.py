"""Arguments that do not fit the function they were passed to (issue #25).

Two learner mistakes raise messages that say nothing about the call they come from:

- a TensorFlow/Keras function given a tensor where it expects something else:
  ``tf.data.Dataset.from_tensor_slices(features, labels)`` binds ``labels`` to the
  ``name`` parameter (NumPy then fails on "the truth value of an array"), and a third
  argument is "too many positional arguments";
- a dataset transformation whose function takes another number of parameters than the
  dataset's elements have components: ``Dataset.map`` (``filter``, ``flat_map``) unpacks a
  tuple element into positional arguments, so ``def scale(x)`` on ``(image, label)``
  pairs "takes 1 positional argument but 2 were given".

Both are read from what was written and what the callee declares, never from the message
text alone: the callee is found by walking the call's dotted name from a TensorFlow or
Keras module with ``inspect.getattr_static`` (no descriptor, no ``__getattr__`` runs) and
its parameters come from ``inspect.signature`` (library code); a user's function is read
only through its code object (parameter count and names, never called); a dataset's
components come from its ``element_spec`` as the libraries store it. The fix is written in
the user's names: the arguments gathered into one tuple, or an adapter lambda that takes
every component and hands the function the ones it expects.
"""

from __future__ import annotations

import ast
import inspect
import types
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
    rewrite,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape, value_of
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_LIBRARY_ROOTS = ("tensorflow", "keras", "tf_keras")
_TENSOR_KINDS = ("array", "tensor", "variable", "keras_variable", "symbolic", "list")
# Parameters that name or configure an op: a tensor given there was meant as data.
_NAME_PARAMETERS = ("name",)
_DATASET_TRANSFORMS = ("map", "filter", "flat_map")
_MAX_CHAIN = 8
_CO_VARARGS = 0x04

# Course sections: the tf.data pipeline, and reading shapes and dtypes (any other call).
DATA_SECTION = "tf-data"
GENERAL_SECTION = "shape-dtype-device"
# (rule, fix or None, course section)
CallFinding = tuple[str, str | None, str]


def _is_library_object(value: Any) -> bool:
    module = getattr(type(value), "__module__", "") if not isinstance(value, type) else ""
    if isinstance(value, types.ModuleType):
        module = value.__name__
    elif isinstance(value, (types.FunctionType, type)):
        module = value.__module__
    return type(module) is str and module.partition(".")[0] in _LIBRARY_ROOTS


def library_callee(func: ast.expr, frame: CellFrame, context: ErrorContext) -> Any:
    """The TensorFlow/Keras function ``func`` names (``tf.data.Dataset.from_tensor_slices``),
    found statically from a library module bound in the user's names, else None."""
    chain: list[str] = []
    node = func
    while isinstance(node, ast.Attribute) and len(chain) < _MAX_CHAIN:
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    found, value = context.lookup(node.id, frame)
    if not found or not isinstance(value, types.ModuleType) or not _is_library_object(value):
        return None
    for name in reversed(chain):
        if not isinstance(value, (types.ModuleType, type)):
            return None
        try:
            value = inspect.getattr_static(value, name)
        except AttributeError:
            return None
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
    if isinstance(value, types.FunctionType) and _is_library_object(value):
        return value
    return None


def _dotted(func: ast.expr, frame: CellFrame) -> str:
    return frame.segment(func) or "the call"


def _misplaced_data(
    call: ast.Call, callee: Any, line: FailingLine, context: ErrorContext
) -> CallFinding | None:
    """Tensors passed positionally past the first parameter, landing on ``name`` (or past
    the last parameter): ``from_tensor_slices(features, labels)``."""
    if not call.args or any(isinstance(a, ast.Starred) for a in call.args) or call.keywords:
        return None
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if not positional or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return None
    frame = line.frame
    wrong: list[tuple[ast.expr, str | None]] = []
    for index, argument in enumerate(call.args[1:], start=1):
        parameter = positional[index].name if index < len(positional) else None
        if parameter is not None and parameter not in _NAME_PARAMETERS:
            continue
        found, value = value_of(argument, frame, context)
        if not found and not isinstance(argument, (ast.Tuple, ast.List)):
            return None
        kind = value_kind(value) if found else "list"
        if kind is None and type(value) in (list, tuple):
            kind = "list"
        if kind not in _TENSOR_KINDS:
            return None
        wrong.append((argument, parameter))
    if not wrong:
        return None
    first = positional[0].name
    shown = _dotted(call.func, frame)
    names = [frame.segment(a) for a in call.args]
    if not all(names) or any("\n" in n for n in names if n):
        return None
    landed = [
        f"{code(frame.segment(a) or '')} lands on {code(p)}"
        if p
        else f"{code(frame.segment(a) or '')} is one argument too many"
        for a, p in wrong
    ]
    signature = f"{shown.rsplit('.', 1)[-1]}({', '.join(p.name for p in positional)})"
    rule = (
        f"{code(signature)} takes all its data as ONE argument, {code(first)} (a tuple or "
        f"dict of tensors for several parts); each further positional argument fills the next "
        f"parameter: {', '.join(landed)}"
    )
    gathered = f"({', '.join(n for n in names if n)})"
    fix = f"pass them together, as one tuple: {code(f'{shown}({gathered})')}"
    section = DATA_SECTION if "Dataset" in getattr(callee, "__qualname__", "") else GENERAL_SECTION
    return rule + ".", fix, section


def _element_components(dataset: Any) -> tuple[int, list[str]] | None:
    """How many positional arguments ``map`` passes (a tuple element is unpacked), with
    each component's shape and dtype."""
    spec = library_attribute(dataset, "element_spec")
    if spec is None:
        return None
    parts = list(spec) if type(spec) is tuple else [spec]
    return len(parts), [_shown_spec(part) for part in parts[:6]]


def _shown_spec(part: Any, depth: int = 0) -> str:
    """``(2,) float32`` for a tensor's spec; a tuple of specs in parentheses, each shown
    (``((2,) float32, (2,) float32)``)."""
    if type(part) is tuple and depth < 2:
        return "(" + ", ".join(_shown_spec(item, depth + 1) for item in part[:6]) + ")"
    shape = library_attribute(part, "shape")
    dims = library_attribute(shape, "_dims") if shape is not None else None
    dtype = library_attribute(part, "dtype")
    dtype_name = library_attribute(dtype, "name") if dtype is not None else None
    words = []
    if type(dims) is tuple and all(d is None or type(d) is int for d in dims):
        words.append(show_shape(dims))
    if type(dtype_name) is str:
        words.append(dtype_name)
    return " ".join(words) or "a nested structure"


def _nested_sizes(dataset: Any) -> list[int] | None:
    """For each component of the element, how many values it packs: a tuple of tensors
    (``(a, b)`` in ``((a, b), label)``) its length, a tensor 1; None when no component
    is such a tuple."""
    spec = library_attribute(dataset, "element_spec")
    if type(spec) is not tuple:
        return None
    sizes = [len(part) if type(part) is tuple else 1 for part in spec]
    nested = [part for part in spec if type(part) is tuple]
    if not nested or any(type(item) in (tuple, dict) for part in nested for item in part):
        return None
    return sizes


def _user_parameters(function: ast.expr, frame: CellFrame, context: ErrorContext) -> Any:
    """(parameter names, how many are required, takes *args) of a user function or lambda
    given to ``map``: from the lambda's source or the function's code object."""
    if isinstance(function, ast.Lambda):
        arguments = function.args
        names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        return names, len(names) - len(arguments.defaults), arguments.vararg is not None
    found, value = value_of(function, frame, context)
    if not found or type(value) is not types.FunctionType or _is_library_object(value):
        return None
    code_object = value.__code__
    count = code_object.co_argcount
    names = list(code_object.co_varnames[:count])
    defaults = value.__defaults__
    required = count - (len(defaults) if type(defaults) is tuple else 0)
    return names, required, bool(code_object.co_flags & _CO_VARARGS)


def _fresh_names(taken: list[str], count: int) -> list[str]:
    pool = ["y", "label", "extra", "z", "w", "v"]
    names = [name for name in pool if name not in taken]
    while len(names) < count:
        names.append(f"part{len(names)}")
    return names[:count]


def _adapter(
    method: str,
    function: ast.expr,
    frame: CellFrame,
    names: list[str],
    components: int,
    one_value: bool = False,
) -> str | None:
    """``lambda x, y: (scale(x), y)``: every component taken, the function given the
    ones it expects, the others passed on (``map``) or dropped (``filter``, or a ``map``
    whose elements the cell then reads as one value: ``one_value``)."""
    kept = names[:components]
    extra = _fresh_names(names, components - len(kept))
    parameters = [*kept, *extra]
    if isinstance(function, ast.Lambda):
        body = frame.segment(function.body)
        if not body or "\n" in body:
            return None
        result = body
    else:
        source = frame.segment(function)
        if not source or "\n" in source:
            return None
        result = f"{source}({', '.join(kept)})"
    if method == "map" and not one_value:
        result = f"({result}, {', '.join(extra)})"
    elif method not in ("map", "filter"):
        return None
    return f"lambda {', '.join(parameters)}: {result}"


def _pass_through(
    function: ast.expr, frame: CellFrame, context: ErrorContext, names: list[str], count: int
) -> tuple[str, str] | None:
    """``lambda x: augment(x)`` where the user's ``augment`` itself takes ``count``
    parameters (``def augment(image, label)``): the lambda only forwards, and calls the
    function short; the fix forwards every component, ``lambda x, y: augment(x, y)``
    (the function's signature is read from its code object, never called)."""
    if not isinstance(function, ast.Lambda) or not isinstance(function.body, ast.Call):
        return None
    body = function.body
    if body.keywords or [getattr(arg, "id", None) for arg in body.args] != names:
        return None
    signature = _user_parameters(body.func, frame, context)
    callee = frame.segment(body.func)
    if signature is None or not callee or "\n" in callee:
        return None
    parameters, required, variadic = signature
    if not required <= count <= len(parameters) and not (variadic and required <= count):
        return None
    everything = [*names, *_fresh_names(names, count - len(names))]
    forwarded = ", ".join(everything)
    return callee, f"lambda {forwarded}: {callee}({forwarded})"


def _transformed_dataset(method: str, context: ErrorContext) -> tuple[bool, Any]:
    """The dataset a transformation ran on, from its frame in the traceback (``self`` of
    ``DatasetV2.map``): for a dataset built on the same line (``from_tensor_slices(...)
    .map(fn)``), which no name holds."""
    traceback = context.exception.__traceback__
    for _ in range(_MAX_FRAMES):
        if traceback is None:
            break
        frame = traceback.tb_frame
        if frame.f_code.co_name == method:
            local = frame.f_locals
            dataset = local.get("self") if type(local) is dict else None
            if value_kind(dataset) == "dataset":
                return True, dataset
        traceback = traceback.tb_next
    return False, None


_MAX_FRAMES = 200


def _dataset_function(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> CallFinding | None:
    """``ds.map(fn)`` whose ``fn`` takes another number of parameters than ``ds``'s
    elements have components."""
    if parsed.type != "TypeError":
        return None
    frame = line.frame
    for part in frame.header():
        for node in ast.walk(part):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _DATASET_TRANSFORMS
                and node.args
            ):
                continue
            found, dataset = value_of(node.func.value, frame, context)
            if not found:
                found, dataset = _transformed_dataset(node.func.attr, context)
            if not found or value_kind(dataset) != "dataset":
                continue
            components = _element_components(dataset)
            function = node.args[0]
            parameters = _user_parameters(function, frame, context)
            if components is None or parameters is None:
                continue
            count, shown = components
            names, required, varargs = parameters
            if required <= count and (count <= len(names) or varargs):
                continue
            sizes = _nested_sizes(dataset)
            if sizes is not None and sum(sizes) == len(names) and not varargs:
                nested = _nested_finding(node, function, sizes, shown, names, line)
                if nested is not None:
                    return nested
            return _function_finding(node, function, count, shown, names, line, context)
    return None


def _nested_finding(
    call: ast.Call,
    function: ast.expr,
    sizes: list[int],
    shown: list[str],
    names: list[str],
    line: FailingLine,
) -> CallFinding | None:
    """``pair_ds.map(jitter)`` with elements ``((a, b), label)`` and ``jitter(a, b,
    label)``: map unpacks the outer tuple only, so the function gets ``(a, b)`` as one
    argument. The fix unpacks the inner tuple for it: ``lambda pair, label: jitter(*pair,
    label)``."""
    frame = line.frame
    method = call.func.attr  # type: ignore[attr-defined]
    receiver = frame.segment(call.func.value) or "the dataset"  # type: ignore[attr-defined]
    function_source = frame.segment(function)
    if not function_source or isinstance(function, ast.Lambda):
        return None
    outer: list[str] = []
    arguments: list[str] = []
    given: list[str] = []
    at = 0
    taken = set(names)
    for size in sizes:
        if size == 1:
            outer.append(names[at])
            arguments.append(names[at])
            given.append(code(names[at]))
        else:
            inner = names[at : at + size]
            packed = "pair" if size == 2 else "group"
            while packed in taken:
                packed += "_"
            taken.add(packed)
            outer.append(packed)
            arguments.append(f"*{packed}")
            given.append(f"{code(', '.join(inner))} together as one tuple")
        at += size
    structure = "(" + ", ".join(shown) + ")"
    rule = (
        f"{code(receiver)}.{method} calls its function once per element and unpacks only "
        f"the element's outer tuple into positional arguments: each element of "
        f"{code(receiver)} is {structure}, so {code(function_source)} is called with "
        f"{len(sizes)} arguments ({'; '.join(given)}), but it takes {len(names)} "
        f"({', '.join(names)}). Unpack the inner tuple for it (or write it to take "
        f"{code(', '.join(outer))} and unpack inside)"
    )
    adapter = f"lambda {', '.join(outer)}: {function_source}({', '.join(arguments)})"
    statement = line.statement
    holds = statement is not None and any(node is call for node in ast.walk(statement))
    fixed = rewrite(frame, statement if holds else call, function, adapter)  # type: ignore[arg-type]
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return rule + ".", fix, DATA_SECTION


def _function_finding(
    call: ast.Call,
    function: ast.expr,
    count: int,
    shown: list[str],
    names: list[str],
    line: FailingLine,
    context: ErrorContext,
) -> CallFinding:
    frame = line.frame
    method = call.func.attr  # type: ignore[attr-defined]
    receiver = frame.segment(call.func.value) or "the dataset"  # type: ignore[attr-defined]
    function_name = (
        "the lambda" if isinstance(function, ast.Lambda) else code(frame.segment(function) or "")
    )
    elements = (
        f"a tuple of {count} ({', '.join(shown)})" if count > 1 else f"one value ({shown[0]})"
    )
    rule = (
        f"{code(receiver)}.{method} calls its function once per element, and unpacks a "
        f"tuple element into positional arguments: each element of {code(receiver)} is "
        f"{elements}, so the function is called with {count} argument"
        f"{'s' if count != 1 else ''}, but {function_name} takes {len(names)} "
        f"({', '.join(names) or 'none'})"
    )
    fix = None
    unpacked = _indexed_lambda(function, count, frame) if count > len(names) else None
    if unpacked is not None:
        # ``lambda ex: (f(ex[0]), g(ex[1]))``: the lambda was written for the whole tuple;
        # map hands it the components, so it takes them by name.
        fixed = rewrite(frame, call, function, unpacked)
        if fixed and "\n" not in fixed:
            fix = f"take the {count} components as {count} parameters: {code(fixed)}"
            return rule + ".", fix, DATA_SECTION
    wrapped = _pass_through(function, frame, context, names, count) if count > len(names) else None
    if wrapped is not None:
        callee, adapter = wrapped
        fixed = rewrite(frame, call, function, adapter)
        if fixed and "\n" not in fixed:
            fix = (
                f"{code(callee)} itself takes every component: take them all and pass them "
                f"on: {code(fixed)}"
            )
            return rule + ".", fix, DATA_SECTION
    if count > len(names):
        reader = _one_value_reader(call, line) if method == "map" else None
        adapter = _adapter(method, function, frame, names, count, reader is not None)
        fixed = rewrite(frame, call, function, adapter) if adapter else None
        if fixed and "\n" not in fixed:
            if reader is not None:
                keep = f"returns only its result, as {code(reader)} reads each element as one value"
            elif method == "map":
                keep = "passes the other components on unchanged"
            else:
                keep = ""
            fix = (
                f"take every component and hand {function_name} the "
                f"{'one' if len(names) == 1 else str(len(names))} it uses"
                f"{' (the adapter ' + keep + ')' if keep else ''}: {code(fixed)}"
            )
        elif method == "flat_map":
            fix = f"give {function_name} one parameter per component"
    else:
        rule += (
            f"; {code(receiver)} has no component for "
            f"{', '.join(code(n) for n in names[count:])}: build it from a tuple, as "
            f"{code('from_tensor_slices((features, labels))')}, if it should carry them"
        )
    return rule + ".", fix, DATA_SECTION


# Dataset methods after which an element is still the mapped function's result.
_ELEMENT_KEEPING = ("take", "skip", "batch", "prefetch", "cache", "shuffle", "repeat")


def _keeps_elements(node: ast.expr, inner: ast.AST) -> bool:
    """Whether ``node`` is ``inner`` or ``inner`` followed by element-keeping dataset
    methods only (``inner.batch(4).take(2)``)."""
    while node is not inner:
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _ELEMENT_KEEPING
        ):
            return False
        node = node.func.value
    return True


def _one_value_reader(call: ast.Call, line: FailingLine) -> str | None:
    """``for pts in vis_ds.take(2):`` in the cell, where ``vis_ds = ds.map(fn)`` is the
    failing statement: the loop reads each element of the mapped dataset as one value
    (one name, no unpacking), so an adapter that passed the other components on would
    hand it a tuple. The loop's header, as written; None when no loop of the cell reads
    the dataset, or one unpacks its elements."""
    statement = line.statement
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and _keeps_elements(statement.value, call)
    ):
        return None
    dataset = statement.targets[0].id
    tree = line.frame.tree()
    if tree is None:
        return None
    readers: list[ast.For] = []
    roots: list[ast.Name] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.For) or node.lineno <= statement.lineno:
            continue
        root = node.iter
        while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute):
            if root.func.attr not in _ELEMENT_KEEPING:
                break
            root = root.func.value
        if isinstance(root, ast.Name) and root.id == dataset:
            readers.append(node)
            roots.append(root)
    if not readers or not all(isinstance(loop.target, ast.Name) for loop in readers):
        return None
    # Any other read of the dataset (a fit, a zip) may need every component.
    reads = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Name)
        and node.id == dataset
        and isinstance(node.ctx, ast.Load)
        and node.lineno > statement.lineno
    ]
    if any(not any(read is root for root in roots) for read in reads):
        return None
    loop = readers[0]
    header = line.frame.segment(loop.iter)
    if not header or "\n" in header:
        return None
    return f"for {loop.target.id} in {header}"  # type: ignore[attr-defined]


def _indexed_lambda(function: ast.expr, count: int, frame: Any) -> str | None:
    """``lambda ex: (ex[0] / 255, ex[1])`` whose one parameter is only ever indexed by
    constants below ``count``: the same lambda taking one parameter per component, each
    ``ex[i]`` replaced by the i-th (None for any other use of the parameter)."""
    if not isinstance(function, ast.Lambda):
        return None
    arguments = function.args
    if (
        len(arguments.args) != 1
        or arguments.posonlyargs
        or arguments.vararg
        or arguments.kwonlyargs
        or arguments.kwarg
    ):
        return None
    parameter = arguments.args[0].arg
    subscripts: list[tuple[ast.AST, int]] = []
    plain_uses = 0
    for node in ast.walk(function.body):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == parameter
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int
            and 0 <= node.slice.value < count
        ):
            subscripts.append((node, node.slice.value))
        elif isinstance(node, ast.Name) and node.id == parameter:
            plain_uses += 1
    if not subscripts or plain_uses != len(subscripts):
        return None  # the parameter is used whole somewhere: not a tuple read by index
    taken = {n.id for n in ast.walk(function.body) if isinstance(n, ast.Name)}
    new_names = ["x", "y"] if count == 2 and not taken & {"x", "y"} else []
    if not new_names:
        new_names = [f"{parameter}{i}" for i in range(count)]
        if taken & set(new_names):
            return None
    body = rewrite_all(frame, function.body, [(node, new_names[i]) for node, i in subscripts])
    return f"lambda {', '.join(new_names)}: {body}" if body else None


def explain_call_arguments(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> CallFinding | None:
    """The family's entry point: a library call's misplaced data, or a dataset function
    whose parameters do not match the elements."""
    found = _dataset_function(parsed, line, context)
    if found is not None:
        return found
    for part in line.frame.header():
        for node in ast.walk(part):
            if not isinstance(node, ast.Call):
                continue
            callee = library_callee(node.func, line.frame, context)
            if callee is None:
                continue
            found = _misplaced_data(node, callee, line, context)
            if found is not None:
                return found
    return None
