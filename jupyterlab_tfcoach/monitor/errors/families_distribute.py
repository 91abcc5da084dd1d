"""A custom training loop under ``tf.distribute`` that mixes one replica's view with the
strategy's (issue #25).

Under a strategy with several replicas, a distributed dataset yields, and
``strategy.run`` returns, per-replica values (``PerReplica``: one tensor per replica). A
function written for one replica's batch runs on each replica through
``strategy.run(fn, args=(...,))``; what it returns is read back through the strategy
(``reduce``, ``gather``, ``experimental_local_results``). Four errors come from crossing
that line, each recognised from the failing line and the values it holds (classes read by
their names from the values' MRO, never importing TensorFlow):

- ``UNBATCHED_DISTRIBUTED``: a model called on the elements of a distributed dataset whose
  source dataset has no batch axis (its element shape is the model's input without the
  batch axis): the strategy split one example's features among the replicas. The fix
  batches before ``experimental_distribute_dataset``.
- ``RUN_ARGUMENTS``: ``strategy.run(fn, batch)``: the second argument is the tuple of
  arguments, unpacked into ``fn``'s parameters; the fix is ``args=(batch,)``.
- ``PER_REPLICA_OPERAND``: a per-replica value (or a tuple of them) reaching an op or a
  model directly (the step function called without ``strategy.run``); the fix runs the
  step through ``strategy.run`` (or the notebook's function that already does).
- ``PER_REPLICA_ATTRIBUTE``: ``per_replica.numpy()`` on what ``strategy.run`` returned;
  the fix reads it through ``strategy.experimental_local_results``.
"""

from __future__ import annotations

import ast
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    class_mro,
    code,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    model_input_shapes,
    show_shape,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

SECTION = "devices-placement"
# Values that differ per replica. A variable made under the strategy's scope
# (``MirroredVariable``) is a ``DistributedValues`` too, and ops take it: not counted.
_PER_REPLICA_CLASSES = frozenset({"PerReplica"})
_STRATEGY_CLASSES = frozenset({"Strategy", "StrategyBase", "StrategyV1"})
_DISTRIBUTED_DATASET_CLASSES = frozenset({"DistributedDataset", "DistributedDatasetInterface"})
_DATASET_CLASSES = frozenset({"DatasetV2"})
# Strategy methods that take per-replica values: a per-replica operand there is right.
_STRATEGY_METHODS = frozenset(
    {
        "run",
        "reduce",
        "gather",
        "experimental_local_results",
        "experimental_distribute_values_from_function",
    }
)
_MAX_ITEMS = 8
_MAX_NAMESPACE = 5000


def _class_names(value: Any) -> set[str]:
    """The names of the TensorFlow classes ``value`` is an instance of."""
    return {
        cls.__name__
        for cls in class_mro(value)
        if str(getattr(cls, "__module__", "")).startswith(("tensorflow", "keras"))
    }


def _is_per_replica(value: Any) -> bool:
    return bool(_class_names(value) & _PER_REPLICA_CLASSES)


def _is_strategy(value: Any) -> bool:
    return bool(_class_names(value) & _STRATEGY_CLASSES)


def _holds_per_replica(value: Any) -> bool:
    """A per-replica value, or a tuple or list of them (a distributed dataset's element)."""
    if _is_per_replica(value):
        return True
    if type(value) in (tuple, list):
        return any(_is_per_replica(item) for item in value[:_MAX_ITEMS])
    if type(value) is dict:
        return any(_is_per_replica(item) for item in list(value.values())[:_MAX_ITEMS])
    return False


def _strategy_name(context: ErrorContext, frame: CellFrame) -> str | None:
    """The name of the one strategy in the notebook (several: the one the cell uses)."""
    found = []
    for count, (name, value) in enumerate(list(context.namespace.items())):
        if count > _MAX_NAMESPACE:
            break
        if type(name) is str and not name.startswith("_") and _is_strategy(value):
            found.append(name)
    if len(found) == 1:
        return found[0]
    source = frame.source()
    used = [name for name in found if re.search(rf"\b{re.escape(name)}\.", source)]
    return used[0] if len(used) == 1 else None


def _python_function(value: Any) -> types.FunctionType | None:
    """A plain function, or the Python function of a ``tf.function``."""
    if type(value) is types.FunctionType:
        return value
    python = library_attribute(value, "_python_function")
    return python if type(python) is types.FunctionType else None


def _runner_of(function: str, strategy: str, context: ErrorContext) -> str | None:
    """A notebook function that runs ``function`` through ``strategy.run`` (its global
    names read from its code object: no code runs)."""
    found = []
    for count, (name, value) in enumerate(list(context.namespace.items())):
        if count > _MAX_NAMESPACE:
            break
        if type(name) is not str or name.startswith("_") or name == function:
            continue
        python = _python_function(value)
        if python is None:
            continue
        names = python.__code__.co_names
        if strategy in names and "run" in names and function in names:
            found.append(name)
    return found[0] if len(found) == 1 else None


# --- A per-replica value given to an op or a model directly --------------------------


def _per_replica_operands(line: FailingLine, context: ErrorContext) -> list[str]:
    """The failing call's arguments (names, attribute chains) that hold per-replica values."""
    call = line.call
    if not isinstance(call, ast.Call):
        return []
    found = []
    for argument in [*call.args, *(k.value for k in call.keywords)][:_MAX_ITEMS]:
        if not isinstance(argument, (ast.Name, ast.Attribute, ast.Subscript)):
            continue
        known, value = context.resolve(argument, line.frame)
        text = line.frame.segment(argument)
        if known and text and _holds_per_replica(value):
            found.append(text)
    return found


def _method_name(call: ast.expr | None) -> str | None:
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _read_per_replica_operand(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.parsed.type not in ("ValueError", "TypeError"):
        return None
    if _method_name(line.call) in _STRATEGY_METHODS:
        return None
    operands = _per_replica_operands(line, context)
    if not operands or line.call_source is None:
        return None
    strategy = _strategy_name(context, line.frame)
    if strategy is None:
        return None
    names = " and ".join(code(name) for name in operands)
    verb = "holds" if len(operands) == 1 else "hold"
    rule = (
        f"{names} {verb} per-replica values (`PerReplica`: one tensor per replica of "
        f"{code(strategy)}, as a distributed dataset yields them and `strategy.run` returns "
        f"them), and {code(line.call_source)} takes one tensor: a function written for one "
        f"replica's batch runs on every replica through "
        f"`{strategy}.run(fn, args=(...,))`, which hands each replica its own part"
    )
    fix = _run_fix(line, context, strategy)
    return Finding(rule + ".", fix)


def _run_fix(line: FailingLine, context: ErrorContext, strategy: str) -> str | None:
    """The cell's call of the step function the error went through, run by the strategy."""
    frames = context.frames()
    if len(frames) < 2 or frames[0] is not line.frame:
        return None
    functions = line.frame.enclosing_functions()
    if not functions or not isinstance(functions[-1], ast.FunctionDef):
        return None
    function = functions[-1].name
    outer = frames[1]
    statement = outer.statement()
    if statement is None:
        return None
    calls = [
        node
        for node in ast.walk(statement)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and not node.keywords
    ]
    if len(calls) != 1:
        return None
    call = calls[0]
    arguments = [outer.segment(argument) for argument in call.args]
    if any(not text for text in arguments):
        return None
    packed = ", ".join(arguments) + ("," if len(arguments) == 1 else "")  # type: ignore[arg-type]
    runner = _runner_of(function, strategy, context)
    replacement = (
        f"{runner}({', '.join(arguments)})"  # type: ignore[arg-type]
        if runner is not None
        else f"{strategy}.run({function}, args=({packed}))"
    )
    fixed = rewrite(outer, statement, call, replacement)
    if not fixed or "\n" in fixed:
        return None
    said = f"on line {outer.position.line} {code(fixed.strip())}"
    if runner is not None:
        return (
            f"call {code(runner)}, which runs {code(function)} on each replica through "
            f"`{strategy}.run`: {said}"
        )
    return said


PER_REPLICA_OPERAND = ErrorFamily(
    "a per-replica value given to an op or a model directly",
    messages=(),
    read=_read_per_replica_operand,
    section=SECTION,
)


# --- strategy.run's result read as a tensor ------------------------------------------

_NO_ATTRIBUTE = re.compile(r"'(?P<cls>PerReplica)' object has no attribute '(?P<attr>\w+)'")


def _read_per_replica_attribute(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    attribute = error.group("attr")
    statement = line.statement
    if statement is None:
        return None
    reads = [
        node
        for node in ast.walk(statement)
        if isinstance(node, ast.Attribute)
        and node.attr == attribute
        and _is_per_replica(context.resolve(node.value, line.frame)[1])
    ]
    if len(reads) != 1:
        return None
    receiver = line.frame.segment(reads[0].value)
    strategy = _strategy_name(context, line.frame)
    if not receiver or strategy is None:
        return None
    local = f"{strategy}.experimental_local_results({receiver})"
    rule = (
        f"{code(receiver)} holds per-replica values (`PerReplica`, one tensor per "
        f"replica, as `{strategy}.run` returns them), not a tensor, so it has no "
        f"{code('.' + attribute)}. Read them through the strategy: {code(local)} gives "
        f"the replicas' tensors one by one, "
        f"`{strategy}.reduce(tf.distribute.ReduceOp.MEAN, {receiver}, axis=None)` "
        f"combines them into one, `{strategy}.gather({receiver}, axis=0)` joins them "
        "along the batch axis"
    )
    fix = None
    if attribute == "numpy":
        parent = next(
            (
                node
                for node in ast.walk(statement)
                if isinstance(node, ast.Call)
                and node.func is reads[0]
                and not node.args
                and not node.keywords
            ),
            None,
        )
        if parent is not None:
            fixed = rewrite(line.frame, statement, parent, local)
            if fixed and "\n" not in fixed:
                fix = code(fixed.strip())
    return Finding(rule + ".", fix)


PER_REPLICA_ATTRIBUTE = ErrorFamily(
    "what strategy.run returns read as a tensor",
    messages=(Message(_NO_ATTRIBUTE),),
    read=_read_per_replica_attribute,
    section=SECTION,
    exception_type="AttributeError",
    without_library=True,  # raised by Python in the user's line
)


# --- strategy.run(fn, batch): the arguments not given as a tuple ---------------------

_ARGUMENT_COUNT = re.compile(
    r"takes (?P<takes>\d+) positional arguments? but (?P<given>\d+) (?:were|was) given"
    r"|missing \d+ required positional arguments?"
)


def _read_run_arguments(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "run"
        and call.args
        and _is_strategy(context.resolve(call.func.value, line.frame)[1])
    ):
        return None
    given = call.args[1] if len(call.args) > 1 else None
    keyword = next((k for k in call.keywords if k.arg == "args"), None)
    if given is None and keyword is not None:
        given = keyword.value
    if given is None or isinstance(given, (ast.Tuple, ast.List)):
        return None
    strategy = line.frame.segment(call.func.value)
    function = line.frame.segment(call.args[0])
    written = line.frame.segment(given)
    if not (strategy and function and written) or line.statement is None:
        return None
    found, value = context.resolve(given, line.frame)
    if found and type(value) in (tuple, list):
        what = f"{code(written)} (a {type(value).__name__} of {len(value)} items)"
        spread = f"was unpacked into {len(value)} arguments of {code(function)}"
    else:
        what = code(written)
        spread = f"was unpacked into the arguments of {code(function)}"
    rule = (
        f"`{strategy}.run(fn, args=...)` calls `fn(*args)` on each replica: its second "
        f"argument is the tuple of the arguments, so {what} {spread}. One argument is "
        f"given as a tuple of one: `args=({written},)`"
    )
    others = ", ".join(line.frame.segment(k) or "" for k in call.keywords if k.arg != "args")
    replacement = f"{strategy}.run({function}, args=({written},){', ' + others if others else ''})"
    fixed = rewrite(line.frame, line.statement, call, replacement)
    fix = code(fixed.strip()) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


RUN_ARGUMENTS = ErrorFamily(
    "strategy.run given its arguments not as a tuple",
    messages=(Message(_ARGUMENT_COUNT),),
    read=_read_run_arguments,
    section=SECTION,
    exception_type="TypeError",
)


# --- A distributed dataset of single examples ----------------------------------------


def _element_shape(dataset: Any) -> tuple[int | None, ...] | None:
    spec = library_attribute(dataset, "element_spec")
    first = spec[0] if type(spec) is tuple and spec else spec
    shape = library_attribute(first, "shape")
    dims = library_attribute(shape, "_dims") if shape is not None else None
    if type(dims) not in (list, tuple):
        return None
    try:
        return tuple(None if d is None else int(d) for d in dims)
    except Exception:
        return None


def _model_called(line: FailingLine, context: ErrorContext) -> tuple[Any, ast.expr] | None:
    """The Keras model the failing line runs (``strategy.run(model, ...)`` or
    ``model(x)``), with its node."""
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    node: ast.expr = call.func
    if isinstance(call.func, ast.Attribute) and call.func.attr == "run" and call.args:
        node = call.args[0]
    found, model = context.resolve(node, line.frame)
    if not found or not model_input_shapes(model):
        return None
    return model, node


def _read_unbatched(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if error.parsed.type != "ValueError":
        return None
    called = _model_called(line, context)
    tree = line.frame.tree()
    if called is None or tree is None:
        return None
    model, model_node = called
    inputs = model_input_shapes(model)
    if len(inputs) != 1 or len(inputs[0]) < 2:
        return None
    loops = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.For)
        and isinstance(node.iter, ast.Name)
        and node.lineno <= line.frame.position.line <= (node.end_lineno or node.lineno)
        and bool(
            _class_names(context.lookup(node.iter.id, line.frame)[1]) & _DISTRIBUTED_DATASET_CLASSES
        )
    ]
    if len(loops) != 1:
        return None
    distributed = loops[0].iter.id  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == distributed
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "experimental_distribute_dataset"
            and len(node.value.args) == 1
        ):
            continue
        source_node = node.value.args[0]
        found, dataset = context.resolve(source_node, line.frame)
        if not found or not (_class_names(dataset) & _DATASET_CLASSES):
            return None
        shape = _element_shape(dataset)
        if shape is None or shape != inputs[0][1:]:
            return None
        source = line.frame.segment(source_node)
        strategy = line.frame.segment(node.value.func.value)
        model_text = line.frame.segment(model_node)
        if not (source and strategy and model_text):
            return None
        rule = (
            f"{code(source)}'s elements are single examples of shape {show_shape(shape)}, "
            f"with no batch axis, and {code(model_text)} takes batches "
            f"{show_shape(inputs[0])}: `{strategy}.experimental_distribute_dataset` splits "
            f"the first axis of each element among the replicas, so each replica got a "
            f"piece of one example's {shape[0]} values. Batch the dataset before "
            "distributing it"
        )
        batched = f"{source}.batch(8 * {strategy}.num_replicas_in_sync)"
        fixed = rewrite(line.frame, node, source_node, batched)
        fix = (
            f"on line {node.lineno} {code(fixed.strip())}" if fixed and "\n" not in fixed else None
        )
        return Finding(rule + ".", fix)
    return None


UNBATCHED_DISTRIBUTED = ErrorFamily(
    "a distributed dataset of single examples",
    messages=(),
    read=_read_unbatched,
    section=SECTION,
)
