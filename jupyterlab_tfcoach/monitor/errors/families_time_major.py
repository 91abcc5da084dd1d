"""Sequence scores given to an op in the other layout (issue #25): a Keras model's
``(batch, time, classes)`` output given to ``tf.nn.ctc_loss``, which reads its logits
time-major, ``(time, batch, classes)``, unless ``logits_time_major=False`` is passed; or
to ``tf.nn.ctc_greedy_decoder`` / ``ctc_beam_search_decoder``, which only take
time-major inputs.

TensorFlow's message speaks of what went wrong deep inside (``Incompatible shapes: [32,
17, 1, 11] vs. [1, 32, 5, 11]``, ``len(sequence_length) != batch_size``), never of the
layout. The reading is the values': the call's other arguments give the batch size (the
first axis of the labels, the size of each 1-D length vector, all one number), and the
scores' first axis has that size while the axis the op reads as the batch does not. The
entry names the layout the op expects (the flag and its default, or that it has none),
and the fix in the learner's names: the flag set for the layout the scores have, or the
scores transposed, ``tf.transpose(logits, [1, 0, 2])``. The reverse (time-major scores
with the flag set to False) is told the same way. Nothing of the learner's runs: shapes
are read from arrays, tensors and sparse tensors, and through a slice with constant
bounds or arithmetic with a number (``lengths[:8] // 2``).

``SPARSE_LABELS_BLANK``: ``tf.nn.ctc_loss`` given its labels as a ``SparseTensor`` has no
default blank class and raises ``Argument `blank_index` must be provided``. Which class is
the blank is read from the labels' values: a class they never use (0, which
``tf.sparse.from_dense`` drops with the padding, else the last class of the logits) is
the one to name; when they use both, no fix is guessed.
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape, value_of
from jupyterlab_tfcoach.monitor.errors.families_arguments import library_callable
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)

# TensorFlow's sequence ops (module ``ctc_ops``) by function name: the parameter holding
# the scores, the flag that sets their layout (None: time-major only) and the parameters
# whose first axis counts the sequences.
_LAYOUTS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "ctc_loss_v3": ("logits", "logits_time_major", ("labels", "label_length", "logit_length")),
    "ctc_loss_v2": ("logits", "logits_time_major", ("labels", "label_length", "logit_length")),
    "ctc_loss": ("inputs", "time_major", ("labels", "sequence_length")),
    "ctc_greedy_decoder": ("inputs", None, ("sequence_length",)),
    "ctc_beam_search_decoder": ("inputs", None, ("sequence_length",)),
    "ctc_beam_search_decoder_v2": ("inputs", None, ("sequence_length",)),
}
_MODULE = "ctc_ops"
_ARITHMETIC = (ast.FloorDiv, ast.Div, ast.Mult, ast.Add, ast.Sub, ast.Mod)
_SHOWN_SOURCES = 3


def _shape_of_value(value: Any) -> tuple[int | None, ...] | None:
    """The shape of an array, tensor or sparse tensor (the library's own attribute)."""
    kind = value_kind(value)
    sparse = type(value).__name__ == "SparseTensor" and str(
        getattr(type(value), "__module__", "")
    ).startswith("tensorflow")
    if kind not in ("array", "tensor", "variable") and not sparse:
        return None
    shape = getattr(value, "shape", None)
    try:
        return tuple(None if size is None else int(size) for size in shape)  # type: ignore[union-attr]
    except Exception:
        return None


def _constant_int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _shape(
    node: ast.expr, frame: CellFrame, context: ErrorContext
) -> tuple[int | None, ...] | None:
    """The shape ``node`` evaluates to, read without running it: a value, a slice of one
    with constant bounds, arithmetic of one with a number."""
    found, value = value_of(node, frame, context)
    if found:
        return _shape_of_value(value)
    if isinstance(node, ast.Call):
        return _filled_shape(node, frame, context)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        left, right = _shape(node.left, frame, context), _shape(node.right, frame, context)
        if left is not None and right is not None:
            return left if left == right else None
        number = node.right if left is not None else node.left
        if not (isinstance(number, ast.Constant) and type(number.value) in (int, float)):
            return None
        return left if left is not None else right
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        whole = _shape(node.value, frame, context)
        if not whole or whole[0] is None:
            return None
        bounds = (node.slice.lower, node.slice.upper, node.slice.step)
        numbers = [None if part is None else _constant_int(part) for part in bounds]
        if any(
            part is not None and number is None
            for part, number in zip(bounds, numbers, strict=True)
        ):
            return None
        if numbers[2] == 0:
            return None
        return (len(range(whole[0])[slice(*numbers)]), *whole[1:])
    return None


# Constructors of TensorFlow and NumPy whose first argument is the shape they make
# (``tf.fill([n], T)``: the length vector written on the line).
_FILLED = frozenset({"fill", "ones", "zeros", "full"})
_FILLING_MODULES = ("tensorflow", "numpy")


def _size(node: ast.expr, frame: CellFrame, context: ErrorContext) -> int | None:
    """A size written in a shape: a number, a name holding an int, ``len(x)`` of a held
    list, array or tensor (its first axis)."""
    number = _constant_int(node)
    if number is not None:
        return number
    if isinstance(node, ast.Name):
        found, value = value_of(node, frame, context)
        if not found:
            return None
        try:
            return int(value) if type(value).__name__ in ("int", "int32", "int64") else None
        except Exception:
            return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
    ):
        found, value = value_of(node.args[0], frame, context)
        if not found:
            return None
        if type(value) in (list, tuple):
            return len(value)
        shape = _shape_of_value(value)
        return shape[0] if shape else None
    return None


def _filled_shape(
    call: ast.Call, frame: CellFrame, context: ErrorContext
) -> tuple[int | None, ...] | None:
    """The shape ``tf.fill([n], v)``, ``np.full(n, v)``, ``tf.ones([n])`` make, read from
    the sizes written in their shape argument (nothing is run)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _FILLED or not call.args:
        return None
    found, module = value_of(func.value, frame, context)
    name = getattr(module, "__name__", "") if found else ""
    if type(name) is not str or not name.startswith(_FILLING_MODULES):
        return None
    dims = call.args[0]
    parts = list(dims.elts) if isinstance(dims, (ast.List, ast.Tuple)) else [dims]
    sizes = [_size(part, frame, context) for part in parts]
    if not sizes or any(size is None for size in sizes):
        return None
    return tuple(sizes)


def _bound(call: ast.Call, parameters: list[str]) -> dict[str, ast.expr] | None:
    """The call's argument nodes by parameter name, as Python binds them."""
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(parameters):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    bound = dict(zip(parameters, call.args, strict=False))
    bound.update({k.arg: k.value for k in call.keywords if k.arg})
    return bound


def _sequence_op(
    call: ast.Call, frame: CellFrame, context: ErrorContext
) -> tuple[tuple[str, str | None, tuple[str, ...]], list[str]] | None:
    found = library_callable(call.func, frame, context)
    if found is None:
        return None
    function = inspect.unwrap(found[0])
    module = str(getattr(function, "__module__", ""))
    layout = _LAYOUTS.get(str(getattr(function, "__name__", "")))
    if layout is None or not module.endswith(_MODULE):
        return None
    try:
        parameters = list(inspect.signature(found[0]).parameters)
    except (TypeError, ValueError):
        return None
    return layout, parameters


def _flag_value(node: ast.expr | None, frame: CellFrame, context: ErrorContext) -> bool | None:
    if node is None:
        return True  # each flag defaults to time-major
    if isinstance(node, ast.Constant) and type(node.value) is bool:
        return node.value
    found, value = value_of(node, frame, context)
    return value if found and type(value) is bool else None


def _one_line(text: str) -> str | None:
    """The call or statement on one line (its line breaks all inside brackets), or None
    when that does not parse."""
    joined = re.sub(r"\s*\n\s*", " ", text)
    try:
        ast.parse(joined)
    except SyntaxError:
        return None
    return joined


def _with_flag(
    frame: CellFrame, call: ast.Call, flag: str, value: bool, given: ast.expr | None
) -> str | None:
    """The call with ``flag=value``: its written value replaced, or the keyword added."""
    if given is not None:
        return rewrite(frame, call, given, str(value))
    source = frame.segment(call)
    if not source or not source.endswith(")"):
        return None
    head = source[:-1].rstrip()
    separator = " " if head.endswith(("(", ",")) else ", "
    return f"{head}{separator}{flag}={value})"


def _read_layout(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    frame = line.frame
    statement = frame.statement()
    if statement is None:
        return None
    calls = [
        (node, found)
        for part in frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Call) and (found := _sequence_op(node, frame, context))
    ]
    if len(calls) != 1:
        return None
    call, ((scores_parameter, flag, sized), parameters) = calls[0]
    bound = _bound(call, parameters)
    if bound is None or scores_parameter not in bound:
        return None
    scores = bound[scores_parameter]
    shape = _shape(scores, frame, context)
    if shape is None or len(shape) != 3 or None in shape[:2] or shape[0] == shape[1]:
        return None
    batches: dict[int, list[str]] = {}
    for parameter in sized:
        node = bound.get(parameter)
        given = _shape(node, frame, context) if node is not None else None
        source = frame.segment(node) if node is not None else None
        if given and given[0] is not None and source and "\n" not in source:
            batches.setdefault(given[0], []).append(f"{code(source)} {show_shape(given)}")
    if len(batches) != 1:
        return None
    [(batch, sources)] = batches.items()
    flag_node = bound.get(flag) if flag else None
    time_major = _flag_value(flag_node, frame, context) if flag else True
    if time_major is None:
        return None
    read_as_batch = shape[1] if time_major else shape[0]
    other = shape[0] if time_major else shape[1]
    if read_as_batch == batch or other != batch:
        return None
    op = frame.segment(call.func) or ""
    written = frame.segment(scores) or scores_parameter
    given_by = ", ".join(sources[:_SHOWN_SOURCES]) + (" gives" if len(sources) == 1 else " give")
    tf = tf_alias(context)
    transposed = f"{tf}.transpose({written}, [1, 0, 2])"
    if time_major:
        expects = (
            f"{code(op)} reads {code(scores_parameter)} time-major, (time, batch, classes)"
            + (
                f", unless it is given {code(flag + '=False')} (the flag defaults to True)"
                if flag
                else " (it has no flag for another layout)"
            )
        )
        found_layout = (
            f"{code(written)} is {show_shape(shape)}: its first axis is {batch}, the batch "
            f"size {given_by}, and its second ({shape[1]}) is not, so it is "
            f"batch-major, (batch, time, classes), as a Keras model returns it, and the op "
            f"took {shape[1]} for the batch"
        )
    else:
        expects = (
            f"{code(op)} is given {code(flag + '=False')} (`{flag}` defaults to True), "
            f"so it reads {code(scores_parameter)} batch-major, (batch, time, classes)"
        )
        found_layout = (
            f"{code(written)} is {show_shape(shape)}: its second axis is {batch}, the batch "
            f"size {given_by}, and its first ({shape[0]}) is not, so it is "
            f"time-major, (time, batch, classes), and the op took {shape[0]} for the batch"
        )
    if flag:
        fixed_call = _with_flag(frame, call, flag, not time_major, flag_node)
        how = (
            f"Say which layout the scores have, {code(f'{flag}={not time_major}')}, or "
            f"transpose them: {code(transposed)}"
        )
    else:
        fixed_call = rewrite(frame, call, scores, transposed)
        how = f"Transpose the scores to (time, batch, classes): {code(transposed)}"
    fix = None
    if fixed_call is not None:
        whole = None
        if not hasattr(statement, "body"):
            whole = rewrite(frame, statement, call, fixed_call)
        fix = (_one_line(whole) if whole else None) or _one_line(fixed_call)
    rule = f"{expects}. {found_layout}. {how}."
    return Finding(rule, code(fix) if fix else None)


TIME_MAJOR = ErrorFamily(
    "sequence scores given to a CTC op in the other layout",
    messages=(),
    read=_read_layout,
    section="batch-dimension",
)


# ------------------------------------------------ sparse labels with no blank class named
_NO_BLANK = re.compile(r"Argument `blank_index` must be provided when `labels` is a `SparseTensor`")
_MAX_LABEL_VALUES = 1_000_000


def _label_values(value: Any) -> Any | None:
    """The values of a TensorFlow SparseTensor as a NumPy array (its own attribute)."""
    if type(value).__name__ != "SparseTensor" or not str(
        getattr(type(value), "__module__", "")
    ).startswith("tensorflow"):
        return None
    try:
        values = value.values
        if int(values.shape[0]) > _MAX_LABEL_VALUES:
            return None
        return values.numpy()
    except Exception:
        return None


def _read_blank(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    frame = line.frame
    statement = frame.statement()
    call = line.call
    if statement is None or not isinstance(call, ast.Call):
        return None
    found = _sequence_op(call, frame, context)
    if found is None:
        return None
    (scores_parameter, _flag, _sized), parameters = found
    bound = _bound(call, parameters)
    if bound is None or "labels" not in bound or scores_parameter not in bound:
        return None
    labels = bound["labels"]
    known, held = value_of(labels, frame, context)
    values = _label_values(held) if known else None
    shape = _shape(bound[scores_parameter], frame, context)
    labels_text = frame.segment(labels)
    if values is None or not shape or shape[-1] is None or not labels_text:
        return None
    classes = shape[-1]
    op = frame.segment(call.func) or "ctc_loss"
    rule = (
        f"{code(op)} has no default blank class for labels given as a SparseTensor "
        f"({code(labels_text)}): it must be told which of the {classes} classes of the "
        "scores is the blank, the class no label uses"
    )
    try:
        uses_zero = bool((values == 0).any())
        largest = int(values.max()) if values.size else -1
    except Exception:
        return None
    if not uses_zero:
        blank = "0"
        why = (
            f"{code(labels_text)} never holds 0 (a sparse tensor made with "
            "`tf.sparse.from_dense` drops its zeros, the padding), so class 0 is the blank"
        )
    elif largest < classes - 1:
        blank = "-1"
        why = (
            f"{code(labels_text)} uses 0 and its largest class is {largest}, so the last "
            f"class, {classes - 1} (`-1` counts from the end), is the blank"
        )
    else:
        return Finding(
            rule + f"; {code(labels_text)} uses both 0 and the last class, {classes - 1}, so "
            "a class for the blank must be added to the scores.",
            None,
        )
    fixed_call = _with_keyword(frame, call, "blank_index", blank)
    fix = None
    if fixed_call is not None:
        whole = (
            rewrite(frame, statement, call, fixed_call) if not hasattr(statement, "body") else None
        )
        fix = (_one_line(whole) if whole else None) or _one_line(fixed_call)
    return Finding(f"{rule}. {why}: {code('blank_index=' + blank)}.", code(fix) if fix else None)


def _with_keyword(frame: CellFrame, call: ast.Call, keyword: str, value: str) -> str | None:
    source = frame.segment(call)
    if not source or not source.endswith(")"):
        return None
    head = source[:-1].rstrip()
    separator = " " if head.endswith(("(", ",")) else ", "
    return f"{head}{separator}{keyword}={value})"


SPARSE_LABELS_BLANK = ErrorFamily(
    "sparse CTC labels given with no blank class",
    messages=(Message(_NO_BLANK),),
    read=_read_blank,
    section="labels-and-loss",
    exception_type="ValueError",
)
