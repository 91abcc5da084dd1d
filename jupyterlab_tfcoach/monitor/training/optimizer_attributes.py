"""A learning rate written to an attribute a Keras optimizer never reads.

``optimizer.lr = 1e-4`` was tf.keras 2's way to change the rate. A Keras 3 optimizer has
no ``lr``: Python just stores a new attribute on the object, the optimizer keeps
updating with its ``learning_rate`` (a variable it owns), and the "smaller rate" of the
next epochs is the old one. Nothing raises. The same for any rate-like name
(``opt.learn_rate = ...``, ``opt.lr_value = ...``) that the optimizer's class does not
define.

Told after a completed cell holding ``.<name> =`` (a regular-expression search
otherwise): a top-level statement (or one in a top-level ``for``/``if``/``with``)
``O.A = value`` where ``O`` names a Keras optimizer, ``A`` reads as a learning rate
(``lr`` as a word, ``learning`` or ``rate``; not ``learning_rate`` itself, not private),
``A`` is not defined by the optimizer's class (so nothing of Keras reads it) and the
instance now stores it, and the optimizer's own rate is a variable (not a schedule).
The fix is the statement with ``learning_rate`` in place of ``A``: Keras 3 assigns the
number to its rate variable, which a traced training step reads at every update.

Reads instance dictionaries and a variable's value (Keras's ``numpy``); nothing here
imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute, stored
from jupyterlab_tfcoach.monitor.syntax import parsed_source, source_segment
from jupyterlab_tfcoach.monitor.training.schedule_calls import keras_optimizer

SECTION = "keras-model-api"
MAX_CELL_CHARS = 50_000
WANTED = re.compile(r"\.\s*[A-Za-z_]\w*\s*=[^=]")
_RATE = "learning_rate"


def _rate_like(attribute: str) -> bool:
    lowered = attribute.lower()
    if attribute.startswith("_") or lowered == _RATE:
        return False
    return "lr" in lowered.split("_") or "learning" in lowered or "rate" in lowered


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Top-level statements and those in top-level loops, branches and ``with`` blocks
    (not function or class bodies)."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.For | ast.While | ast.If | ast.With):
            yield from _statements(statement.body)
            yield from _statements(getattr(statement, "orelse", []))


def _current_rate(optimizer: Any) -> float | None:
    rate = stored(optimizer, "_learning_rate")
    backing = library_attribute(rate, "value")
    numpy = library_attribute(backing if backing is not None else rate, "numpy")
    try:
        return float(numpy()) if numpy is not None else None
    except Exception:
        return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in _statements(tree.body):
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and _rate_like(target.attr)
        ):
            continue
        optimizer = namespace.get(target.value.id)
        if not keras_optimizer(optimizer):
            continue
        try:
            if hasattr(type(optimizer), target.attr):
                continue
        except Exception:
            continue
        if stored(optimizer, target.attr, _RATE) is _RATE:
            continue
        rate = _current_rate(optimizer)
        if rate is None:
            continue
        written = source_segment(source, statement)
        value = source_segment(source, statement.value)
        if written is None or value is None or "\n" in written:
            continue
        return [_note(target.value.id, target.attr, written, value, rate, statement.lineno)]
    return []


def _note(name: str, attribute: str, written: str, value: str, rate: float, line: int) -> Note:
    text = (
        f"`{written}` (line {line}) stores a new Python attribute `{attribute}` on the "
        f"Keras optimizer `{name}`, which Keras never reads: a Keras 3 optimizer has no "
        f"`{attribute}`, its rate is `{name}.{_RATE}`, still {rate:.6g}, so the updates "
        f"after this line use the old rate. Nothing raises. Fix: "
        f"`{name}.{_RATE} = {value}` in place of line {line} (Keras assigns it to the "
        f"optimizer's rate variable, which a compiled training step reads too)."
    )
    return reports.note(text, SECTION)
