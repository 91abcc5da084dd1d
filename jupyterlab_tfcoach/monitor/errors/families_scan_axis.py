"""``tf.scan`` (``foldl``, ``foldr``) walking the batch axis where time was meant.

``tf.scan(step, elems, initializer=h0)`` calls ``step`` once per entry of ``elems``'s
FIRST axis. Sequences kept batch-major, ``(batch, time, features)``, are then walked one
example at a time: ``step`` gets a ``(time, features)`` slice while the state carries one
row per example, and the two meet in an op that cannot line them up (``Incompatible
shapes: [7,16] vs. [4,16]``), inside ``step``, far from the scan. The symptom read here:
the error comes from inside the function a ``tf.scan`` of an outer frame calls, the
state's first axis has the size of ``elems``'s first axis (the batch), ``elems``'s second
axis has another size, and the message names that second size. The cause is the axis the
scan walks; the fix puts time first for the scan (``tf.transpose(elems, [1, 0, 2])``) and
the batch first again in its result, so the code after it is unchanged.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_SCANS = frozenset({"scan", "foldl", "foldr"})
# Element-wise and matmul size clashes, eager or traced.
_CLASH = re.compile(
    r"Incompatible shapes: \[[\d,]+\] vs\. \[[\d,]+\]|Matrix size-incompatible|"
    r"Dimensions must be equal"
)


def _scan_call(frame: CellFrame) -> ast.Call | None:
    statement = frame.statement()
    if statement is None:
        return None
    for node in ast.walk(statement):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SCANS
            and len(node.args) >= 2
        ):
            return node
    return None


def _initializer(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "initializer":
            return keyword.value
    return call.args[2] if len(call.args) > 2 else None


def _dims(value: object) -> tuple[int, ...] | None:
    shape = library_attribute(value, "shape")
    try:
        dims = tuple(shape)  # type: ignore[arg-type]
    except Exception:
        return None
    return dims if all(type(size) is int for size in dims) else None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    frames = context.frames()
    for frame in frames[1:]:
        if frame is line.frame:
            continue
        call = _scan_call(frame)
        initializer = _initializer(call) if call is not None else None
        if call is None or initializer is None:
            continue
        elems = call.args[1]
        found, elems_value = value_of(elems, frame, context)
        found_init, init_value = value_of(initializer, frame, context)
        if not (found and found_init):
            return None
        walked, state = _dims(elems_value), _dims(init_value)
        if walked is None or state is None or len(walked) < 3 or not state:
            return None
        batch, steps = walked[0], walked[1]
        message = error.parsed.full_message or error.parsed.message or ""
        if not (state[0] == batch != steps and re.search(rf"\b{steps}\b", message)):
            return None
        elems_text = frame.segment(elems)
        function = frame.segment(call.args[0])
        scan = frame.segment(call.func)
        statement = frame.statement()
        if not (elems_text and function and scan and statement is not None):
            return None
        tf = tf_alias(context)
        slice_shape = ", ".join(map(str, walked[1:]))
        rule = (
            f"{code(scan)} calls {code(function)} once per entry of the FIRST axis of "
            f"{code(elems_text)} {walked}, so each call gets one ({slice_shape}) "
            f"slice, while the state {code(frame.segment(initializer) or 'initializer')} "
            f"{state} holds one row per example: axis 0 of {code(elems_text)} is the batch "
            f"({batch}), not the {steps} time steps. Scan over time by putting it first"
            + (", and put the batch first again in the result" if call.func.attr == "scan" else "")  # type: ignore[attr-defined]
        )
        perm_in = [1, 0, *range(2, len(walked))]
        perm_out = [1, 0, *range(2, len(state) + 1)]
        moved = rewrite(frame, call, elems, f"{tf}.transpose({elems_text}, {perm_in})")
        if moved is None:
            return Finding(rule + ".", None)
        # A scan stacks a state per step (time first, to put back); a fold returns the
        # last state alone, already batch-first.
        stacked = call.func.attr == "scan"  # type: ignore[attr-defined]
        result = f"{tf}.transpose({moved}, {perm_out})" if stacked else moved
        fixed = rewrite(frame, statement, call, result)
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", None)
        return Finding(rule + ".", code(fixed))
    return None


SCAN_AXIS = ErrorFamily(
    "tf.scan walking the batch axis instead of time",
    messages=(Message(_CLASH),),
    read=_read,
    section="python-loops",
)
