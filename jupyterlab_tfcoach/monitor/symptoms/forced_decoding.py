"""A sequence model scored with the true previous tokens as its decoder input (teacher
forcing at prediction time).

``pred = model.predict([src_test, dec_in_test]).argmax(-1)`` where ``dec_in_test`` is the
start token followed by the target sequence ``dec_out_test``: at each step the decoder
reads the correct previous token, not the one it predicted, so one early mistake never
spreads and the accuracy is far better than what the model does when it has to produce
the sequence itself. Teacher forcing is how such a model is trained; to measure it, it
must read back its own predictions. Nothing raises.

Found after a cell that completed (a cell without ``.predict(`` or a call of a Keras
model on a list costs a substring test and a parse), from each ``M.predict([a, b, ...])``
or ``M([a, b, ...])`` (``M`` a Keras model, two or more named inputs) and what the cell's
other names hold: an input ``B``, a 2-D integer array or eager tensor (at most a million
values), that the cell does not fill itself (``B[:, i] = ...``), and another name ``T``
of the cell with the same shape and at least three distinct values, different from
``B``, such that ``B[:, 1:]`` equals ``T[:, :-1]`` at ``MIN_AGREEMENT`` of the positions
where neither is padding (0), which cover at least ``MIN_FILLED`` of them. The note names
the call, the decoder input and the targets; the fix decodes greedily: starting from
``B``'s first column, each next position filled with the model's own most likely token,
then the same statement on the decoded input.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import top_statements
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-validation-data"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 1_000_000
MIN_AGREEMENT = 0.98
MIN_FILLED = 0.3
_MODEL_CLASSES = frozenset({"Model", "Functional", "Sequential"})


def _is_model(value: Any) -> bool:
    try:
        return any(
            k.__name__ in _MODEL_CLASSES and is_library_class(k) for k in type(value).__mro__
        )
    except Exception:
        return False


def _tokens(value: Any) -> Any | None:
    values = held_array(value, MAX_VALUES, INTEGERS, ndim=2)
    return values if values is not None and values.shape[1] >= 3 else None


def _forced(inputs: Any, targets: Any) -> bool:
    """Whether ``inputs`` is ``targets`` moved one step right (padding left aside)."""
    numpy = sys.modules["numpy"]
    if inputs.shape != targets.shape or numpy.array_equal(inputs, targets):
        return False
    if len(numpy.unique(targets[:200])) < 3:
        return False
    after, before = inputs[:, 1:], targets[:, :-1]
    filled = (after != 0) & (before != 0)
    if filled.sum() < MIN_FILLED * filled.size:
        return False
    return bool((after[filled] == before[filled]).mean() >= MIN_AGREEMENT)


def _filled_here(tree: ast.Module, name: str) -> bool:
    """The cell writes into ``name`` (``name[:, i] = ...``): its own decoding."""
    return any(
        isinstance(node, ast.Assign)
        and any(
            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
            for t in node.targets
        )
        for node in ast.walk(tree)
    )


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or ("predict(" not in source and "([" not in source):
        return []
    if "numpy" not in sys.modules:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    cell_names = list(dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)))
    for statement in top_statements(tree):
        for call in ast.walk(statement):
            if not isinstance(call, ast.Call) or not call.args:
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "predict":
                owner = func.value
            elif isinstance(func, ast.Name):
                owner = func
            else:
                continue
            if not isinstance(owner, ast.Name) or not _is_model(namespace.get(owner.id)):
                continue
            given = call.args[0]
            if not isinstance(given, ast.List | ast.Tuple) or len(given.elts) < 2:
                continue
            inputs = [e.id for e in given.elts if isinstance(e, ast.Name)]
            note = _check(call, statement, inputs, cell_names, tree, source, namespace)
            if note is not None:
                return [note]
    return []


def _check(
    call: ast.Call,
    statement: ast.stmt,
    inputs: list[str],
    cell_names: list[str],
    tree: ast.Module,
    source: str,
    namespace: dict[str, Any],
) -> Note | None:
    for name in inputs:
        fed = _tokens(namespace.get(name))
        if fed is None or _filled_here(tree, name):
            continue
        for other in cell_names:
            if other in inputs:
                continue
            expected = _tokens(namespace.get(other))
            if expected is None or not _forced(fed, expected):
                continue
            return _note(call, statement, name, other, source)
    return None


def _note(call: ast.Call, statement: ast.stmt, fed: str, target: str, source: str) -> Note:
    written = ast.get_source_segment(source, call) or "the prediction"
    text = (
        f"`{written}` (line {call.lineno}) gives the decoder `{fed}`, which is the "
        f"target sequence `{target}` moved one step right: at every step the model reads "
        "the correct previous token instead of the one it predicted (teacher forcing, "
        "how it was trained), so one early mistake never spreads and the score is far "
        "better than what the model does when it has to write the sequence itself. "
        "Nothing raises."
    )
    line = ast.get_source_segment(source, statement)
    if line is None or "\n" in line or "\n" in written:
        return reports.note(
            f"{text} Decode step by step, feeding back the model's own predictions.",
            SECTION,
        )
    pattern = re.compile(rf"(?<![\w.]){re.escape(fed)}(?!\w)")
    step = pattern.sub("dec", written)
    text += (
        " Decode greedily instead, feeding back the model's own predictions: "
        f"`dec = np.zeros_like({fed}); dec[:, 0] = {fed}[:, 0]`, then "
        f"`for i in range(1, dec.shape[1]): dec[:, i] = np.asarray({step}).argmax(-1)[:, i - 1]`"
        f", then `{pattern.sub('dec', line)}`."
    )
    return reports.note(text, SECTION)
