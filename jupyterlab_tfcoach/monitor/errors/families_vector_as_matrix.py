"""A vector given where the call documents a matrix (issue #25): ``tf.linalg.solve(A, b)``
with ``b`` of shape ``(6,)``, ``tf.linalg.triangular_solve(L, b)``,
``tf.linalg.cholesky_solve(chol, b)``, ``tf.linalg.lstsq(A, b)``.

TensorFlow says ``All input tensors must have the same rank`` or ``In[1] ndims must be >=
2``, which names neither the argument nor the cure. The callee's own documentation does:
its ``Args:`` entry gives the argument a shape whose last two axes are named
(``Shape is `[..., M, K]```), a matrix with one column per right-hand side. The reading
finds the argument of rank 1 whose documented shape ends in two axes, says it is a vector
where a matrix (a column) is documented, and makes it a column in the call; the result is
then a column too, so the fix takes its only column back (``[:, 0]``) to keep the vector
the learner meant. A vector made by taking one column out of a matrix (``y[:, 0]``) is
kept a column with a slice instead (``y[:, 0:1]``), and the result stays a column.
"""

from __future__ import annotations

import ast
import inspect
import re

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    is_postfix_safe,
    rewrite,
    rewrite_all,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, Operand, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)
from jupyterlab_tfcoach.monitor.errors.shapes import indexed_shape

_RANK_MESSAGES = re.compile(
    r"All input tensors must have the same rank|ndims must be >= 2|rank >= 2|"
    r"must be at least rank 2|Shape must be at least rank 2"
)
_SHAPE_QUOTE = re.compile(r"`\[([^\]`]*)\]`")
_DIM = re.compile(r"^[A-Za-z_]\w*$")
_MAX_DOC = 6000
_MAX_FRAMES = 60
_ONE_AXIS = re.compile(r"ndims must be >= 2: 1\b")


def _documented_shape(doc: str, parameter: str) -> str | None:
    """The shape the ``Args:`` entry of ``parameter`` quotes (``[..., M, K]``), or None."""
    start = doc.find("Args:")
    if start < 0:
        return None
    args = doc[start : start + _MAX_DOC]
    entry = re.search(
        rf"^\s*{re.escape(parameter)}:(?P<text>.*?)(?=^\s*\w+:|^\s*$|\Z)", args, re.S | re.M
    )
    if entry is None:
        return None
    text = " ".join(entry.group("text").split())
    quote = _SHAPE_QUOTE.search(text)
    return quote.group(1).strip() if quote else None


def _received_shape(context: ErrorContext, parameter: str) -> tuple[int | None, ...] | None:
    """The shape of the value TensorFlow's own function received as ``parameter``: read
    from the outermost library frame of the traceback that has that local (already
    computed; nothing is run)."""
    traceback = context.exception.__traceback__
    for _ in range(_MAX_FRAMES):
        if traceback is None:
            return None
        frame = traceback.tb_frame
        module = frame.f_globals.get("__name__") if type(frame.f_globals) is dict else None
        if type(module) is str and module.startswith(("tensorflow.", "keras.")):
            value = frame.f_locals.get(parameter)
            shape = getattr(value, "shape", None) if value is not None else None
            if type(shape).__name__ == "TensorShape":
                try:
                    return tuple(shape.as_list())
                except Exception:
                    return None
        traceback = traceback.tb_next
    return None


def _of_shape(shape: tuple[int | None, ...]) -> str:
    return f" of shape {show_shape(shape)}" if shape[0] is not None else " (one axis)"


def _column_shape(shape: tuple[int | None, ...]) -> str:
    return f", shape ({shape[0]}, 1)" if shape[0] is not None else ""


def _ends_in_matrix(shape: str) -> bool:
    dims = [part.strip() for part in shape.split(",")]
    return len(dims) >= 2 and all(_DIM.match(dim) for dim in dims[-2:])


def _kept_column(
    node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, str] | None:
    """(the indexed array's source, the index rewritten to keep its axis) for
    ``y[:, 0]`` of a 2-D ``y``: the vector came from taking one column out, and the slice
    ``y[:, 0:1]`` keeps it a column. None for any other expression."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
        return None
    items = node.slice.elts
    if len(items) != 2 or not isinstance(items[0], ast.Slice):
        return None
    last = items[1]
    if items[0].lower or items[0].upper or items[0].step:
        return None
    if not (isinstance(last, ast.Constant) and type(last.value) is int and last.value >= 0):
        return None
    base = indexed_shape(node.value, line.frame, context)
    taken = line.frame.segment(node.value)
    if base is None or len(base) != 2 or not taken or not is_postfix_safe(node.value):
        return None
    return taken, f"{taken}[:, {last.value}:{last.value + 1}]"


def _read_vector_as_matrix(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None:
        return None
    callee = library_callee(call.func, line.frame, context)
    if callee is None:
        return None
    try:
        doc = inspect.getdoc(callee) or ""
        bound = inspect.signature(callee).bind_partial(
            *[node for node in call.args if not isinstance(node, ast.Starred)],
            **{keyword.arg: keyword.value for keyword in call.keywords if keyword.arg},
        )
    except Exception:
        return None
    vectors = []
    unread = []
    for parameter, node in bound.arguments.items():
        if not isinstance(node, ast.expr):
            continue
        shape = _documented_shape(doc, parameter)
        if shape is None or not _ends_in_matrix(shape):
            continue
        operand = operand_of(node, line, context)
        if operand is None or operand.shape is None:
            # An expression (``tf.linalg.matvec(...)``): the value the library received.
            received = _received_shape(context, parameter)
            source = line.frame.segment(node)
            if not source or "\n" in source:
                continue
            if received is None:
                # A constant index of a named array (``y[:, 0]``), worked out from its
                # shape (TensorFlow's trimmed traceback may hold no library frame).
                indexed = indexed_shape(node, line.frame, context)
                received = tuple(indexed) if indexed is not None else None
            if received is None:
                unread.append((parameter, node, Operand(source, "tensor", "", (None,)), shape))
                continue
            operand = Operand(source, "tensor", "", received)
        if operand.shape is not None and len(operand.shape) == 1:
            vectors.append((parameter, node, operand, shape))
    # The op said it met one axis (``ndims must be >= 2: 1``) and one documented matrix
    # was not read: that one is the vector.
    if not vectors and len(unread) == 1 and _ONE_AXIS.search(error.parsed.message):
        vectors = unread
    if len(vectors) != 1:
        return None
    parameter, node, operand, shape = vectors[0]
    called = line.frame.segment(call.func) or "the call"
    kept = _kept_column(node, line, context)
    if kept is not None:
        taken, column = kept
        rule = (
            f"{code(operand.source)} is a vector{_of_shape(operand.shape)}: the integer index "
            f"took the column out of {code(taken)}. {code(called)} documents its "
            f"`{parameter}` as `[{shape}]`: a matrix, one column per right-hand side. Keep "
            f"the column with a slice ({code(column)}); the result is then a column too"
        )
        inner = rewrite(line.frame, line.statement, node, column)
        return Finding(rule + ".", code(inner) if inner and "\n" not in inner else None)
    rule = (
        f"{code(operand.source)} is a vector{_of_shape(operand.shape)}, but "
        f"{code(called)} documents its `{parameter}` as `[{shape}]`: a matrix, one column "
        f"per right-hand side. Make it a column ({code(operand.source + '[:, None]')}"
        f"{_column_shape(operand.shape)}); the result is then a column too, and its "
        "`[:, 0]` is the vector"
    )
    if not is_postfix_safe(node):
        return Finding(rule + ".", None)
    column = f"{line.frame.segment(node)}[:, None]"
    inner = rewrite(line.frame, call, node, column)
    if inner is None:
        return Finding(rule + ".", None)
    fixed = rewrite_all(line.frame, line.statement, [(call, f"{inner}[:, 0]")])
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


VECTOR_AS_MATRIX = ErrorFamily(
    "a vector given where the call documents a matrix",
    messages=(Message(_RANK_MESSAGES),),
    read=_read_vector_as_matrix,
    section="shape-dtype-device",
)
