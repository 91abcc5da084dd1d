"""A dataset's ``batch`` meeting an element of another length than the ones before it:
one family.

``Cannot add tensor to the batch: number of elements does not match. Shapes are:
[tensor]: [11], [batch]: [12]`` comes from the iterator, at whatever line pulled the
elements (a ``for`` loop, ``sum(1 for _ in ds)``, ``fit``), long after the statement that
made them uneven. Two causes are read here from the dataset the failing line names
(its chain of transformations, as tf.data stores it: ``symptoms/dataset_order.chain_of``):

- a ``window(size, shift)`` below the ``batch`` with ``drop_remainder`` left False: the
  windows that start near the end of the data run past it and hold fewer than ``size``
  elements, so the windows (and anything sliced from them) get shorter at the end. The
  learner's ``.window(...)`` call is found in the cells (the running one, then ``In``,
  newest first) and the fix is its statement with ``drop_remainder=True``;
- otherwise, elements that differ in length by nature (sentences, recordings): the rule
  says that ``batch`` stacks only equal shapes and names ``padded_batch`` and
  ``ragged_batch``, with no rewritten line (which one fits, or whether the elements should
  be cut to one length where they are made, is the learner's to decide).

The variable of the failing line's loop still holds the last batch that was made: the
rule says so, since the shapes the entry lists for it are of a batch that worked.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import cell_frame, nodes_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, kind_of, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import BATCH, chain_of, operation

SECTION = "tf-data"
_UNEVEN = re.compile(
    r"Cannot add tensor to the batch: number of elements does not match\. Shapes are: "
    r"\[tensor\]: \[(?P<got>[\d,\s]*)\], \[batch\]: \[(?P<want>[\d,\s]*)\]"
)
# The same clash as a graph-mode batch words it: claimed only with a window to blame
# (``families_data.UNEVEN_BATCH`` explains sequences of different lengths, padding them;
# padding short windows with zeros would run and train on made-up values).
_STACKED = re.compile(
    r"Cannot batch tensors with different shapes in component \d+\. First element had "
    r"shape \[(?P<want>[\d,]*)\] and element \d+ had shape \[(?P<got>[\d,]*)\]"
)
_WINDOW_CLASS = "_WindowDataset"
_MAX_NAMES = 20


def _stored_number(link: Any, name: str) -> int | bool | None:
    """A scalar tf.data stored on a transformation (a tensor made from the argument)."""
    value = (instance_dict(link) or {}).get(name)
    if type(value) in (bool, int):
        return value
    numpy = library_attribute(value, "numpy") if value is not None else None
    if numpy is None:
        return None
    try:
        number = numpy()
        return bool(number) if number.dtype == bool else int(number)
    except Exception:
        return None


def _unfinished_window(dataset: Any) -> Any | None:
    """The ``window`` link under the dataset's (first) ``batch`` whose ``drop_remainder``
    is False: the link that makes short windows at the end of the data."""
    batched = False
    for link in chain_of(dataset):
        if operation(link) == BATCH:
            batched = True
        elif batched and type(link).__name__ == _WINDOW_CLASS:
            return link if _stored_number(link, "_drop_remainder") is False else None
    return None


def _datasets_on_line(line: FailingLine, context: ErrorContext) -> list[tuple[str, Any]]:
    names = sorted(
        {
            node.id
            for part in line.frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
    )
    found = []
    for name in names[:_MAX_NAMES]:
        known, value = context.lookup(name, line.frame)
        if known and kind_of(value) == "dataset":
            found.append((name, value))
    return found


def _window_call(context: ErrorContext) -> tuple[str, str] | None:
    """(where, the statement fixed) for the learner's one ``.window(...)`` call written
    without ``drop_remainder``, newest cell first."""
    for cell, node in nodes_in_cells(context):
        if not isinstance(node, (ast.Assign, ast.Expr, ast.Return, ast.AugAssign)):
            continue
        value = node.value
        if value is None:
            continue
        for call in ast.walk(value):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "window"
                and call.args
                and all(k.arg != "drop_remainder" for k in call.keywords)
                and len(call.args) < 4  # size, shift, stride: drop_remainder not given
            ):
                continue
            written = cell.segment(call)
            if not written or "\n" in written:
                return None
            fixed_call = f"{written[:-1].rstrip().rstrip(',')}, drop_remainder=True)"
            fixed = rewrite(cell_frame(cell), node, call, fixed_call)
            if not fixed or "\n" in fixed:
                return None
            return f"line {node.lineno} of {cell.label}", fixed
    return None


def _loop_targets(line: FailingLine) -> list[str]:
    """The names a ``for`` loop (or a generator's ``for``) of the failing line binds."""
    statement = line.frame.statement()
    parts = [statement] if isinstance(statement, ast.For) else line.frame.header()
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, (ast.For, ast.comprehension)):
                return [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)][:4]
    return []


def _read_uneven_batch(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    got = error.group("got").replace(" ", "")
    want = error.group("want").replace(" ", "")
    datasets = _datasets_on_line(line, context)
    if len(datasets) != 1:
        return None
    name, dataset = datasets[0]
    rule = (
        f"The batch being made from {code(name)} met an element of shape [{got}] after "
        f"elements of shape [{want}]: `batch` stacks elements into one tensor, so they must "
        "all have one shape"
    )
    targets = _loop_targets(line)
    if targets:
        hold = "holds" if len(targets) == 1 else "hold"
        rule += (
            f" ({', '.join(code(t) for t in targets)} still {hold} the last batch made "
            "before this one, which worked)"
        )
    window = _unfinished_window(dataset)
    if window is None and error.matched(_STACKED):
        return None
    if window is not None:
        size = _stored_number(window, "_size")
        shift = _stored_number(window, "_shift")
        steps = ""
        if type(shift) is int:
            steps = "at every element" if shift == 1 else f"every {shift} elements"
        length = f" {size}" if type(size) is int else ""
        rule += (
            f". Under that batch, {code(name)} cuts windows{' starting ' + steps if steps else ''}"
            f" with `window`, whose `drop_remainder` is False by default: the windows that "
            f"start near the end of the data run past it and hold fewer than{length} "
            "elements, so the last windows (and what is sliced from them) are shorter. "
            "`drop_remainder=True` keeps only full windows"
        )
        found = _window_call(context)
        if found is None:
            return Finding(rule + ".", None, SECTION)
        where, fixed = found
        return Finding(rule + ".", f"in {where}, {code(fixed)}", SECTION)
    rule += (
        ". When the elements differ in length by nature (texts, recordings), "
        "`padded_batch` pads each batch to its longest element and `ragged_batch` keeps "
        "them ragged; when they should all have one length, the step that made them "
        "uneven is where to fix it"
    )
    return Finding(rule + ".", None, SECTION)


UNEVEN_ELEMENTS = ErrorFamily(
    "a dataset batch meeting elements of another length",
    messages=(Message(_UNEVEN), Message(_STACKED)),
    read=_read_uneven_batch,
    section=SECTION,
)
