"""Test data that did not go through the preprocessing the training data went through.

``X_tr = prepare([scale(x) for x in train_raw])`` then, later, ``X_te =
prepare(test_raw)``: the test inputs keep their raw offsets and scales while the model
learned on normalised ones. The test score then measures inputs unlike anything it was
trained on (usually much lower, sometimes by chance not), and nothing raises.

Told after a completed cell that binds, at its top level, a name with a held-out word
(``X_te``, ``test_images``, ``val_feats``) whose training twin (``as_training_name``:
``X_tr``, ``train_images``) holds a float array or eager tensor of the same trailing shape
(each at most ``MAX_VALUES`` values, at least two rows), when the values show it: per
feature (the last axis), the training data looks normalised (every mean within 1 of 0,
every spread at most 1.5) and the test data's spread differs from it ``SPREAD_RATIO``
times or more, or its mean lies ``SPREAD_RATIO`` training spreads (and at least 1) away.
Two splits of one raw distribution, both unnormalised, are not told.

The cause is read from the cells' source (the history ``In``, last ``HISTORY_CELLS``
cells): the statements that made the training twin and, through the names they read, what
those were made from (``MAX_DEPTH`` steps), and the same for the test statement of this
cell; a function of the learner's (a ``def`` of the notebook) applied on the training side
only is named, with the statement that applied it. The fix is that statement written for
the test data (its training names replaced by their held-out twins of the test side, its
target's training word by the held-out one), then the cell's statement given the result.
Without such a function, the note names the scales and asks for the same preprocessing.
Both sides cut from one array (``x[:n]`` and ``x[n:]``, or indexed rows of it) went
through the same steps whatever their scales: no preprocessing was missed (rows sorted
before the cut differ in range, ``symptoms/sorted_splits.py`` tells that), so it is not told.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import as_training_name, is_held_out_name
from jupyterlab_tfcoach.monitor.syntax import parsed_source, source_segment
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 30_000
MAX_VALUES = 1_000_000
MAX_FEATURES = 512
SPREAD_RATIO = 3.0
NORMALISED_MEAN = 1.0
NORMALISED_SPREAD = 1.5
HISTORY_CELLS = 100
HISTORY_CHARS = 50_000
MAX_DEPTH = 3
# A held-out word in the cell: nothing else is parsed for this check.
_HELD_WORD = word_gate(r"(?i:test|val|valid|holdout|eval)|_te\b|_va\b|\b\w+te\s*[,=]")


def _targets(statement: ast.Assign) -> Iterator[tuple[str, ast.expr]]:
    """``(name, value)`` for ``name = value`` and each element of ``a, b = f(x)`` (the
    whole value) or ``a, b = f(x), g(y)`` (paired)."""
    for target in statement.targets:
        if isinstance(target, ast.Name):
            yield target.id, statement.value
        elif isinstance(target, ast.Tuple):
            value = statement.value
            paired = isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts)
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    yield element.id, value.elts[index] if paired else value  # type: ignore[attr-defined]


def _feature_stats(values: Any) -> tuple[Any, Any] | None:
    numpy = sys.modules["numpy"]
    if values.ndim < 2 or values.shape[0] < 2 or values.shape[-1] > MAX_FEATURES:
        return None
    flat = values.reshape(-1, values.shape[-1]).astype("float64")
    if not numpy.isfinite(flat).all():
        return None
    return flat.mean(axis=0), flat.std(axis=0)


def _scales_differ(train: Any, test: Any) -> tuple[float, float, float, float] | None:
    """(train's largest |mean|, train's largest spread, test's largest spread, ratio) when
    the training data looks normalised and the test data grossly does not match it."""
    numpy = sys.modules["numpy"]
    train_stats, test_stats = _feature_stats(train), _feature_stats(test)
    if train_stats is None or test_stats is None:
        return None
    (mean_tr, sd_tr), (mean_te, sd_te) = train_stats, test_stats
    if (sd_tr <= 0).any() or (sd_te <= 0).any():
        return None
    if numpy.abs(mean_tr).max() > NORMALISED_MEAN or sd_tr.max() > NORMALISED_SPREAD:
        return None
    ratio = sd_te / sd_tr
    largest = float(max(ratio.max(), 1.0 / ratio.min()))
    shift = numpy.abs(mean_te - mean_tr)
    shifted = bool(((shift >= SPREAD_RATIO * sd_tr) & (shift >= 1.0)).any())
    if largest < SPREAD_RATIO and not shifted:
        return None
    return (
        float(numpy.abs(mean_tr).max()),
        float(sd_tr.max()),
        float(sd_te.max()),
        largest,
    )


def _history(namespace: Mapping[str, Any]) -> list[str]:
    history = namespace.get("In")
    if type(history) is not list:
        return []
    return [
        s for s in reversed(history[-HISTORY_CELLS:]) if type(s) is str and len(s) <= HISTORY_CHARS
    ]


def _made_by(name: str, cells: list[str]) -> tuple[ast.expr, ast.Assign, str] | None:
    """The value the newest top-level statement binding ``name`` gave it, with the
    statement and its cell's source."""
    for source in cells:
        if name not in source:
            continue
        tree = parsed_source(source)
        if tree is None:
            continue
        for statement in reversed(tree.body):
            if isinstance(statement, ast.Assign):
                for bound, value in _targets(statement):
                    if bound == name:
                        return value, statement, source
    return None


def _sliced_name(value: ast.expr) -> str | None:
    """``x`` of ``x[:n]``, ``x[n:]`` or ``x[idx]``."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
        return value.value.id
    return None


def _cut_from_one_array(value: ast.expr, twin: str, namespace: Mapping[str, Any]) -> bool:
    """The held-out value and its training twin are both rows of one array."""
    source = _sliced_name(value)
    if source is None:
        return False
    made = _made_by(twin, _history(namespace))
    return made is not None and _sliced_name(made[0]) == source


def _is_notebook_function(value: Any) -> bool:
    return type(value) is types.FunctionType and value.__module__ == "__main__"


def _chain(
    value: ast.expr,
    statement: ast.Assign | None,
    source: str,
    cells: list[str],
    namespace: Mapping[str, Any],
) -> list[tuple[str, ast.Assign | None, str, set[str]]]:
    """Each notebook function applied on the way to ``value``: (function, the statement
    applying it, its cell's source, the names that statement reads), nearest first."""
    found: list[tuple[str, ast.Assign | None, str, set[str]]] = []
    pending = [(value, statement, source, 0)]
    seen: set[str] = set()
    while pending:
        node, made, text, depth = pending.pop(0)
        functions = {
            n.func.id
            for n in ast.walk(node)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and _is_notebook_function(namespace.get(n.func.id))
        }
        local = {  # names bound inside the value (a comprehension's variable)
            t.id
            for n in ast.walk(node)
            if isinstance(n, ast.comprehension)
            for t in ast.walk(n.target)
            if isinstance(t, ast.Name)
        }
        reads = {
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and n.id not in functions
            and n.id not in local
        }
        for function in sorted(functions):
            found.append((function, made, text, reads))
        if depth >= MAX_DEPTH:
            continue
        for name in sorted(reads - seen):
            seen.add(name)
            earlier = _made_by(name, cells)
            if earlier is not None:
                pending.append((earlier[0], earlier[1], earlier[2], depth + 1))
    return found


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or _HELD_WORD.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        for name, value in _targets(statement):
            if not is_held_out_name(name):
                continue
            twin = as_training_name(name)
            if twin is None or twin not in namespace or name not in namespace:
                continue
            test = held_array(namespace[name], MAX_VALUES, ("float",))
            train = held_array(namespace[twin], MAX_VALUES, ("float",))
            if test is None or train is None or test.shape[1:] != train.shape[1:]:
                continue
            scales = _scales_differ(train, test)
            if scales is None or _cut_from_one_array(value, twin, namespace):
                continue
            note = _note(source, statement, value, name, twin, scales, namespace)
            if note is not None:
                return [note]
    return []


_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^A-Za-z\d]")


def _words(name: str, twin: str) -> tuple[str, str] | None:
    """The differing words of a held-out name and its training twin: ``("test",
    "train")`` for ``test_raw``/``train_raw``, ``("te", "tr")`` for ``X_te``/``X_tr``."""
    held, training = _TOKEN.findall(name), _TOKEN.findall(twin)
    if len(held) != len(training):
        return None
    different = [(h, t) for h, t in zip(held, training, strict=True) if h != t]
    return different[0] if len(different) == 1 else None


def _swapped(text: str, training: str, held: str) -> str | None:
    pattern = re.compile(rf"(?<![A-Za-z]){re.escape(training)}(?![a-z])", re.IGNORECASE)
    return pattern.sub(held, text, count=1) if pattern.search(text) else None


def _note(
    source: str,
    statement: ast.Assign,
    value: ast.expr,
    name: str,
    twin: str,
    scales: tuple[float, float, float, float],
    namespace: Mapping[str, Any],
) -> Note | None:
    cells = _history(namespace)
    mean_tr, sd_tr, sd_te, ratio = scales
    line = source_segment(source, statement)
    if line is None or "\n" in line:
        return None
    text = (
        f"`{name}` (line {statement.lineno}) is the test counterpart of `{twin}` (the same "
        f"shape after the first axis), but its values are on another scale: per feature, "
        f"`{twin}` looks normalised (means within {mean_tr:.2g} of 0, spreads up to "
        f"{sd_tr:.2g}) while `{name}`'s spreads reach {sd_te:.2g}, about {ratio:.1f} times "
        "apart. The test data did not go through the preprocessing the training data went "
        "through, so the model is evaluated on inputs unlike those it learned from and the "
        "test score says little about it. Nothing raises."
    )
    training_side = _made_by(twin, cells)
    test_chain = _chain(value, statement, source, cells, namespace)
    if training_side is None:
        return reports.note(text + _generic(twin, name), SECTION)
    train_chain = _chain(training_side[0], training_side[1], training_side[2], cells, namespace)
    test_functions = {function for function, *_ in test_chain}
    missing = [step for step in train_chain if step[0] not in test_functions]
    if not missing:
        return reports.note(text + _generic(twin, name), SECTION)
    function, applied, applied_source, _ = missing[0]
    fix = _fix(source, statement, line, applied, applied_source, test_chain, value)
    text += f" `{twin}` was made through `{function}`"
    shown = source_segment(applied_source, applied) if applied is not None else None
    if shown is not None and "\n" not in shown:
        text += f" (`{shown}`)"
    text += ", which the test data never went through."
    if fix is not None and applied is training_side[1]:
        text += f" Apply it to the test data too: `{fix[0]}`."  # the twin's own statement
    elif fix is not None:
        text += f" Apply it to the test data too: `{fix[0]}`, then `{fix[1]}`."
    else:
        text += f" Apply `{function}` to the test data the same way before this line."
    return reports.note(text, SECTION)


def _generic(twin: str, name: str) -> str:
    return (
        f" Apply to `{name}`'s data the same preprocessing `{twin}` went through (with the "
        "statistics of the training data)."
    )


def _fix(
    source: str,
    statement: ast.Assign,
    line: str,
    applied: ast.Assign | None,
    applied_source: str,
    test_chain: list[tuple[str, ast.Assign | None, str, set[str]]],
    value: ast.expr,
) -> tuple[str, str] | None:
    """The applying statement written for the test data, and this cell's statement
    reading its result."""
    if applied is None or len(applied.targets) != 1:
        return None
    target = applied.targets[0]
    written = source_segment(applied_source, applied)
    if not isinstance(target, ast.Name) or written is None or "\n" in written:
        return None
    # The held-out names this cell's statement reads, by their training twins.
    test_reads = {
        n.id
        for n in ast.walk(value)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and is_held_out_name(n.id)
    }
    by_twin = {as_training_name(n): n for n in test_reads}
    applied_reads = [
        n for n in ast.walk(applied.value) if isinstance(n, ast.Name) and n.id in by_twin
    ]
    if len({n.id for n in applied_reads}) != 1:
        return None
    training_input = applied_reads[0].id
    test_input = by_twin[training_input]
    words = _words(test_input, training_input)
    if words is None:
        return None
    held_word, training_word = words
    new_target = _swapped(target.id, training_word, held_word)
    if new_target is None or new_target == target.id:
        return None
    body = re.sub(rf"\b{re.escape(training_input)}\b", test_input, written)
    body = re.sub(rf"^{re.escape(target.id)}\b", new_target, body)
    reading = re.sub(rf"\b{re.escape(test_input)}\b", new_target, line.split("=", 1)[1])
    return body, f"{line.split('=', 1)[0].rstrip()} ={reading}"
