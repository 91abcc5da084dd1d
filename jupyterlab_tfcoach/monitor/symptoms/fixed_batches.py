"""One batch drawn from a dataset before a training loop, then trained on at every step.

``xb = next(iter(train_ds))`` above ``for step in range(2000): train_step(xb)`` takes the
dataset's first batch once: every step trains on those same rows, the rest of the data
is never seen, and the loss falls as the model memorises one batch. Nothing raises.

Told after a cell that completed (a cell without ``next(iter(`` costs one substring
test), from its source and the dataset's stored chain: a top-level ``B = next(iter(D))``
(or ``a, b = next(iter(D))``) where ``D`` holds a ``tf.data`` dataset that yields more than
one element per pass (``dataset_order.cardinality``, read from the numbers its links
store: nothing runs) or repeats forever, followed by a top-level ``for ... in range(...)``
or ``while`` loop whose body passes a name bound by that statement to a training call (a
call whose name holds ``train`` or ``step``: ``train_step(xb)``,
``model.train_on_batch(xb, yb)``) and never binds it again. Quiet when the cell says
the single batch is meant (``overfit``, ``sanity``, ``one batch``, ``single batch``,
``same batch`` in its text, any case): overfitting one batch is a standard check that a
model can learn at all. The fix draws a new batch at each step: an iterator over the
dataset repeated, made before the loop, and ``B = next(...)`` at the top of its body.

Reads the cell's source and stored numbers of the dataset's links; nothing here imports
TensorFlow.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import INFINITE, cardinality, chain_of
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import library_class_names
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "tf-data"
MAX_CELL_CHARS = 20_000
_MEANT = word_gate(r"(?i)overfit|sanity|\b(?:one|single|same)[ _]batch")
_STEP_WORDS = re.compile(r"(?i)train|step")


def _drawn_once(statement: ast.stmt) -> tuple[list[str], str] | None:
    """(the names bound, the dataset's name) of ``B = next(iter(D))``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    value = statement.value
    if not (
        isinstance(value, ast.Call)
        and call_name(value) == "next"
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Call)
        and call_name(value.args[0]) == "iter"
        and len(value.args[0].args) == 1
        and isinstance(value.args[0].args[0], ast.Name)
    ):
        return None
    target = statement.targets[0]
    names = [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return (names, value.args[0].args[0].id) if names else None


def _many_elements(dataset: Any) -> int | None:
    """The elements one pass yields (``INFINITE`` for a repeat) when more than one."""
    if "DatasetV2" not in library_class_names(dataset):
        return None
    try:
        count = cardinality(chain_of(dataset))
    except Exception:
        return None
    if count is None or (count != INFINITE and count < 2):
        return None
    return count


def _trained_on(loop: ast.stmt, names: list[str]) -> tuple[str, str] | None:
    """(the training call as written, the name it is given) when the loop passes one of
    ``names`` to a training call and never binds it."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Store):
            return None
    for node in ast.walk(loop):
        if not isinstance(node, ast.Call):
            continue
        called = call_name(node) or ""
        if not _STEP_WORDS.search(called):
            continue
        for argument in node.args:
            if isinstance(argument, ast.Name) and argument.id in names:
                return called, argument.id
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "next(iter(" not in source or len(source) > MAX_CELL_CHARS:
        return []
    if _MEANT.search(source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for index, statement in enumerate(tree.body):
        drawn = _drawn_once(statement)
        if drawn is None:
            continue
        names, dataset_name = drawn
        for loop in tree.body[index + 1 :]:
            if isinstance(loop, ast.For) and not (
                isinstance(loop.iter, ast.Call) and call_name(loop.iter) == "range"
            ):
                continue
            if not isinstance(loop, ast.For | ast.While):
                continue
            used = _trained_on(loop, names)
            if used is None:
                continue
            count = _many_elements(namespace.get(dataset_name))
            if count is None:
                return []
            return [_note(source, statement, loop, names, dataset_name, used, count)]
    return []


def _note(
    source: str,
    statement: ast.stmt,
    loop: ast.For | ast.While,
    names: list[str],
    dataset_name: str,
    used: tuple[str, str],
    count: int,
) -> Note:
    called, name = used
    drawn = ast.get_source_segment(source, statement) or f"{name} = next(iter({dataset_name}))"
    target = drawn.split("=", 1)[0].strip()
    header = ast.get_source_segment(source, loop.iter if isinstance(loop, ast.For) else loop.test)
    per_pass = "batches without end" if count == INFINITE else f"{count} batches a pass"
    text = (
        f"`{drawn}` (line {statement.lineno} of this cell) takes one batch of "
        f"`{dataset_name}` once, before the loop, and the loop (line {loop.lineno}"
        f"{f', `{header}`' if header else ''}) gives that same `{name}` to `{called}` "
        f"at every step: every step trains on the same rows, while `{dataset_name}` "
        f"holds {per_pass}. The rest of the data is never seen, and the loss falls "
        "as the model memorises one batch. Nothing raises. Draw a new batch at each "
        f"step. Fix: replace line {statement.lineno} with "
        f"`batches = iter({dataset_name}.repeat())` and put "
        f"`{target} = next(batches)` first in the loop's body."
    )
    return reports.note(text, SECTION)
