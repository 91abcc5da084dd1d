"""Error families about data pipelines and graph loops (see ``family_record.py`` for a
family's shape): batching dataset elements of different shapes, a loop variable whose
shape changes in a loop AutoGraph converts, and arguments that do not fit a library
function or a dataset's elements (read in ``calls.py``).

Each family's record sits after its reading code; ``families.FAMILIES`` lists them in
the order they are tried.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.calls import explain_call_arguments
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
    shape_list,
    tf_alias,
)

# ------------------------------------------------------------------ batching sequences
_BATCH_SHAPES = re.compile(
    r"Cannot batch tensors with different shapes in component (?P<component>\d+)\. First "
    r"element had shape \[(?P<first>[\d,]*)\] and element (?P<index>\d+) had shape "
    r"\[(?P<other>[\d,]*)\]"
)


def _read_uneven_batch(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    first, other = shape_list(error.group("first")), shape_list(error.group("other"))
    if first is None or other is None:
        return None
    batch = next(
        (
            node
            for part in line.frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "batch"
        ),
        None,
    )
    rule = (
        f".batch(n) stacks elements into one tensor, so all must have one shape, but one "
        f"element is {show_shape(first)} and another {show_shape(other)}: sequences of "
        f"different lengths. padded_batch pads each batch to its longest element (with 0), "
        f"ragged_batch makes a tf.RaggedTensor"
    )
    if batch is None:
        return Finding(rule + ".", None)
    dataset = batch.func.value  # type: ignore[attr-defined]
    origin = _built_from(dataset, line, context)
    if origin:
        rule += f". {origin}"
    whole = segment_of(line, batch)
    receiver = segment_of(line, dataset)
    fixed = f"{receiver}.padded_batch{whole[len(receiver) + len('.batch') :]}"
    fix = f"pad each batch, in place of {code(whole)}: {code(fixed)}" if receiver else None
    return Finding(rule + ".", fix)


def _built_from(dataset: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """``seq_ds`` is built from ``token_lists`` (a list of ...): the Python lists its
    defining statement reads, found in the cells the error went through."""
    if not isinstance(dataset, ast.Name):
        return None
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and any(
                    isinstance(target, ast.Name) and target.id == dataset.id
                    for target in node.targets
                )
            ):
                continue
            lists = []
            for inner in ast.walk(node.value):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                    found, value = context.lookup(inner.id, frame)
                    described = describe(inner.id, value) if found else None
                    if described is not None and described.kind == "list":
                        lists.append(f"{code(inner.id)} ({described.description})")
            if lists:
                return f"{code(dataset.id)} is built from " + " and ".join(lists[:2])
    return None


UNEVEN_BATCH = ErrorFamily(
    "batching elements of different shapes",
    messages=(Message(_BATCH_SHAPES),),
    read=_read_uneven_batch,
    section="tf-data",
)


# ------------------------------------------------------------------ loop variables
_LOOP_SHAPE = re.compile(
    r"'(?P<name>\w+)' has shape (?P<before>\([^)]*\)) before the loop, but shape "
    r"(?P<after>\([^)]*\)) after one iteration"
)


def _read_loop_shape(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    name, before, after = error.group("name"), error.group("before"), error.group("after")
    tf = tf_alias(context)
    statement = line.statement
    rank = len(shape_list(before.strip("()")) or ())
    loop = ""
    growth = ""
    if isinstance(statement, (ast.For, ast.While)):
        header = segment_of(
            line, statement.iter if isinstance(statement, ast.For) else statement.test
        )
        loop = f"`for ... in {header}:`" if isinstance(statement, ast.For) else f"`while {header}:`"
        for child in ast.walk(statement):
            if (
                isinstance(child, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in child.targets)
                and isinstance(child.value, ast.Call)
            ):
                growth = (
                    f" ({code(segment_of(line, child.value.func))} on line {child.lineno} grows it)"
                )
                break
    rule = (
        f"AutoGraph turns {loop or 'a loop over a tensor'} into a tf.while_loop, whose loop "
        f"variables must keep one shape: {code(name)} is {before} before the loop and "
        f"{after} after one iteration{growth}. Collect values in a tf.TensorArray and "
        f".stack() it, or declare that the size varies"
    )
    invariant = f"{tf}.TensorShape([{', '.join(['None'] * rank)}])"
    fixed = (
        f"{tf}.autograph.experimental.set_loop_options(shape_invariants=[({name}, {invariant})])"
    )
    fix = f"as the first line of the loop's body, write {code(fixed)}" if loop else None
    return Finding(rule + ".", fix)


LOOP_SHAPE = ErrorFamily(
    "a loop variable whose shape changes in a graph loop",
    messages=(Message(_LOOP_SHAPE),),
    read=_read_loop_shape,
    section="python-loops",
)


# ------------------------------------------------------------------ call arguments
def _read_call_arguments(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    found = explain_call_arguments(error.parsed, line, context)
    return Finding(*found) if found is not None else None


CALL_ARGUMENTS = ErrorFamily(
    "arguments that do not fit a library function or a dataset's elements",
    # No message: what was written against what the callee declares (``calls.py``).
    messages=(),
    read=_read_call_arguments,
    section="tf-data",  # a call of another function than a dataset's: "shape-dtype-device"
    # Too many positional arguments fail at the call, before TensorFlow runs.
    without_library=True,
)
