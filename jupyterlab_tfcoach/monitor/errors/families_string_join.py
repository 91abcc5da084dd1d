"""Python's ``str.join`` given tensors (issue #25).

``"".join(generated)`` where ``generated`` holds string tensors (a ``StringLookup``'s
inverse, ``tf.strings`` results): Python's ``join`` takes ``str`` items only, and says
``sequence item 0: expected str instance, tensorflow...EagerTensor found``, in the
learner's line, before TensorFlow runs (claimed without the library in the traceback:
the message names TensorFlow's class). Read from the failing line: the ``.join(...)``
call and the items it is given (their dtype, from the first item when a name holds a
list or tuple). The fix is the join of each tensor's Python value:
``"".join(t.numpy().decode() for t in generated)`` for string tensors (``numpy()`` of a
string tensor is ``bytes``), ``str(t.numpy())`` for numbers; or ``tf.strings.reduce_join``
to stay in TensorFlow.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)

SECTION = "shape-dtype-device"
_JOIN_ITEM = re.compile(
    r"sequence item (?P<item>\d+): expected str instance, (?P<cls>[\w.]*(?:Tensor|Variable)) found"
)


def _join_call(line: FailingLine) -> ast.Call | None:
    found = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.func.value, (ast.Constant, ast.Name))
    ]
    return found[0] if len(found) == 1 else None


def _item_dtype(node: ast.expr, line: FailingLine, context: ErrorContext, item: int) -> str | None:
    found, value = value_of(node, line.frame, context)
    if not found or type(value) not in (list, tuple) or item >= len(value):
        return None
    try:
        dtype = value[item].dtype
        return str(dtype.name)
    except Exception:
        return None


def _read_join(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = _join_call(line)
    statement = line.statement
    if call is None or statement is None:
        return None
    items = call.args[0]
    items_source = line.frame.segment(items)
    separator = line.frame.segment(call.func.value)  # type: ignore[attr-defined]
    if not items_source or not separator:
        return None
    dtype = _item_dtype(items, line, context, int(error.group("item")))
    if dtype is None:
        return None
    value = "t.numpy().decode()" if dtype == "string" else "str(t.numpy())"
    what = "string tensors" if dtype == "string" else f"{dtype} tensors"
    tf = tf_alias(context)
    rule = (
        f"{code(items_source)} holds {what}, and Python's `str.join` takes Python strings "
        f"only. Join their values: a tensor's `.numpy()` is its value"
        + (
            " (`bytes` for a string tensor: `.decode()` makes it a `str`)"
            if dtype == "string"
            else ""
        )
        + (
            f"; or stay in TensorFlow with {code(f'{tf}.strings.reduce_join({items_source})')}"
            if dtype == "string"
            else ""
        )
    )
    inner = items_source
    if isinstance(items, (ast.GeneratorExp, ast.ListComp)):
        return Finding(rule + ".", None)
    fixed = rewrite(line.frame, statement, call, f"{separator}.join({value} for t in {inner})")
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


STRING_JOIN = ErrorFamily(
    "Python's str.join given tensors",
    messages=(Message(_JOIN_ITEM),),
    read=_read_join,
    section=SECTION,
    exception_type="TypeError",
    # Python raises it in the learner's line; the message names TensorFlow's class.
    without_library=True,
)
