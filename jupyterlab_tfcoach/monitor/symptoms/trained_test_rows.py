"""A model evaluated on rows it was trained on: ``fit`` given the test rows, then
``evaluate`` on them as if they were new.

``X_all = np.concatenate([X_train, X_val, X_test]); model.fit(X_all, y_all)`` then
``model.evaluate(X_test, y_test)`` ("use all the labelled rows for the final model")
reports how well the model remembers rows it has seen: the score comes out better than
it will be on new data, and nothing raises. The same happens with ``fit(X_test, ...)``
written for ``fit(X_train, ...)``.

Found after a cell that completed, from its source and the arrays its names hold: a
``M.evaluate(Z, ...)`` whose data names (``Z``, or the names in a list of inputs) carry
a held-out word (``test``, ``val``, ``te``...) and no training word, after a
``M.fit(X, ...)`` of the same model name, in this cell or an earlier one (the fit's
input arrays kept by weak reference, per model, ``MAX_MODELS`` at most), where each
input of ``Z`` is a NumPy array or eager tensor (at most ``MAX_VALUES`` numbers) whose
rows are all rows of the fit's input at the same position: the same object, its first
or last rows, or (floats) each of its first ``SAMPLE_ROWS`` rows found there. The note
names both calls and the rows shared, and gives the fit on the training split (the
held-out names with their training word, when those names hold data), to run on a
model built again.

A score of the training rows under a name that does not say so (``_unnamed_training``):
``np.mean(np.argmax(M.predict(X), 1) == Y)`` or ``M.evaluate(X, Y)`` where ``X`` (and
``Y``) are the very objects the last ``M.fit(X, Y, ...)`` was given, their names carry no
training or held-out word (``x_lab``, ``feats``), the cell's text has no ``train`` in it
(a training figure said as such is meant), the labels are compared (``==``) or given to a
scoring call (``accuracy``, ``score``, ``f1``...) or to ``evaluate``, and the namespace
holds one held-out pair shaped like them (``held_out_pairs.held_out_pair``: ``x_test``/
``y_test``) that the cell does not use. The figure is a training score that reads as the
model's accuracy; the fix is the cell's lines with the held-out names in place.
"""

from __future__ import annotations

import ast
import re
import sys
import weakref
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.symptoms.evaluation_loops import (
    TRAINING_WORDS,
    VALIDATION_WORDS,
)
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.held_out_pairs import held_out_pair, with_held_out
from jupyterlab_tfcoach.monitor.training.validation_copies import with_split

SECTION = "keras-validation-data"
MAX_VALUES = 1_000_000
MAX_MODELS = 8
SAMPLE_ROWS = 16
MAX_CELL_CHARS = 50_000
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_HELD_OUT = VALIDATION_WORDS | {"va", "te", "tst"}
_TRAINING = TRAINING_WORDS | {"tr", "trn"}
_TRAINING_FOR = {"te": "tr", "va": "tr", "tst": "trn"}
# Training rows that repeat one another past this part: data of few distinct values,
# where a match proves nothing. The part of the held-out rows found among the training
# rows that is told: at least MIN_SHARED, and CHANCE_FACTOR times the training rows'
# own repeats (short sequences or coarse values recur by chance in separate draws).
MAX_REPEATED = 0.5
MIN_SHARED = 0.1
CHANCE_FACTOR = 3.0
MIN_SHARED_ROWS = 3


def _words(identifier: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(identifier)}


def _input_names(node: ast.AST) -> list[str] | None:
    """``X`` or ``[X1, X2]`` (a tuple too): the names of a call's inputs, in order."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.List | ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts if isinstance(e, ast.Name)]
    return None


@dataclass
class _Fit:
    """A fit's model and input arrays (weakly), and its call as written."""

    model: weakref.ReferenceType[Any]
    inputs: list[weakref.ReferenceType[Any] | None]
    names: list[str]
    written: str
    line: int
    here: bool  # written in the cell being checked
    told: bool = False
    labels: weakref.ReferenceType[Any] | None = None
    label_name: str | None = None


def _weak(value: Any) -> weakref.ReferenceType[Any] | None:
    try:
        return weakref.ref(value)
    except TypeError:
        return None


def _rows(value: Any) -> Any | None:
    values = held_array(value, MAX_VALUES, NUMBERS)
    return values if values is not None and values.ndim > 0 and values.shape[0] > 0 else None


def _rows_in(part: Any, whole: Any) -> bool | None:
    """Whether every row of ``part`` is a row of ``whole``: True for the same object,
    its first or last rows, or each of the first ``SAMPLE_ROWS`` rows found there exactly
    once; False when one of them is not there at all; None when it cannot tell (rows
    found several times: data of few distinct values, where a match proves nothing)."""
    if part is whole:
        return True
    numpy = sys.modules.get("numpy")
    small, large = _rows(part), _rows(whole)
    if numpy is None or small is None or large is None:
        return None
    rows = small.shape[0]
    if small.shape[1:] != large.shape[1:] or rows > large.shape[0]:
        return False
    if numpy.array_equal(large[:rows], small) or numpy.array_equal(large[-rows:], small):
        return True
    flat = large.reshape(large.shape[0], -1)
    unique = True
    for row in small.reshape(rows, -1)[:SAMPLE_ROWS]:
        # The first column narrows the rows down; only those are compared whole.
        candidates = flat[flat[:, 0] == row[0]]
        matches = int((candidates == row).all(axis=1).sum())
        if matches == 0:
            return False
        unique = unique and matches == 1
    return True if unique else None


def shared_rows(part: Any, whole: Any) -> tuple[int, int] | None:
    """(rows of ``part`` found in ``whole``, rows of ``part``) when more of them are than
    chance explains; None otherwise (at most a million values each, ``_rows``)."""
    if part is whole:
        rows = _rows(part)
        return (rows.shape[0], rows.shape[0]) if rows is not None and len(rows) > 1 else None
    small, large = _rows(part), _rows(whole)
    if small is None or large is None or small.shape[0] < 2:
        return None
    if small.shape[1:] != large.shape[1:] or small.dtype != large.dtype:
        return None
    numpy = sys.modules["numpy"]
    # Each row projected on fixed random weights: equal rows give equal numbers, and
    # distinct rows (almost surely) distinct ones; sorting numbers is far cheaper than
    # hashing rows one by one (20,000 rows of 8: ~2 ms).
    width = int(numpy.prod(small.shape[1:], dtype="int64")) if small.ndim > 1 else 1
    weights = numpy.random.default_rng(0).normal(size=width)
    known = large.reshape(large.shape[0], width).astype("float64") @ weights
    keys = small.reshape(small.shape[0], width).astype("float64") @ weights
    repeated = 1 - numpy.unique(known).shape[0] / known.shape[0]
    if repeated > MAX_REPEATED:
        return None
    found = int(numpy.isin(keys, known).sum())
    # Rows drawn apart from the training rows match them by chance about as often as
    # the training rows repeat each other: a leak must share well past that.
    if found < max(MIN_SHARED_ROWS, max(MIN_SHARED, CHANCE_FACTOR * repeated) * len(keys)):
        return None
    return found, len(keys)


def _validated_on_trained_rows(
    call: ast.Call, names: list[str], source: str, namespace: dict[str, Any]
) -> Note | None:
    """``M.fit(X, y, validation_data=(X_val, y_val))`` where ``X_val`` shares more rows
    with ``X`` than chance explains: the ``val_`` figures partly repeat training ones.
    (An exact copy is ``training/validation_copies.py``'s.)"""
    given = next((k.value for k in call.keywords if k.arg == "validation_data"), None)
    if not isinstance(given, ast.Tuple | ast.List) or len(names) != 1 or not given.elts:
        return None
    held = given.elts[0]
    if not isinstance(held, ast.Name) or held.id == names[0]:
        return None
    part, whole = namespace.get(held.id), namespace.get(names[0])
    if part is None or part is whole:
        return None
    shared = shared_rows(part, whole)
    if shared is None:
        return None
    count, total = shared
    whole_rows = _rows(whole)
    if count == total and whole_rows is not None and whole_rows.shape[0] == total:
        return None  # the training data itself: ``validation_copies`` tells it
    how_many = f"all {total} of its rows" if count == total else f"{count} of its {total} rows"
    written = ast.get_source_segment(source, call) or "fit(..., validation_data=...)"
    text = (
        f"`{written}` (line {call.lineno}) validates on `{held.id}`: {how_many} are "
        f"rows of the training input `{names[0]}`: the model trains on them, so the "
        "`val_` loss and metrics partly repeat the training figures, look better than on "
        "new data, and hide overfitting (EarlyStopping and checkpoints chosen on them "
        "choose wrongly). Nothing raises."
    )
    labels = given.elts[1] if len(given.elts) > 1 else None
    pair = (
        held_out_pair(held.id, labels.id, names[0], namespace)
        if isinstance(labels, ast.Name)
        else None
    )
    held_out = with_held_out(source, call, pair) if pair is not None else None
    if held_out is not None:
        # Rows the notebook keeps apart, labelled: the last fifth of the training input
        # (``validation_split``) may be rows of another kind (pseudo-labelled, augmented).
        return reports.note(
            f"{text} Validate on the held-out labelled data the notebook has: `{held_out}`.",
            SECTION,
        )
    fixed = with_split(source, call)
    if fixed is not None:
        text += (
            " Build the model again and let Keras keep rows apart from the training data "
            f"it is given: `{fixed}` (or validate on rows taken out of `{names[0]}`)."
        )
    else:
        text += f" Validate on rows taken out of `{names[0]}` before fit."
    return reports.note(text, SECTION)


def _training_name(name: str, namespace: dict[str, Any]) -> str | None:
    """``X_train`` for ``X_test``, ``Xn_tr`` for ``Xn_te``, when it holds data."""
    for word in sorted(_HELD_OUT, key=len, reverse=True):
        pattern = re.compile(rf"(?<![A-Za-z]){word}(?![a-z])", re.IGNORECASE)
        if pattern.search(name):
            candidate = pattern.sub(_TRAINING_FOR.get(word, "train"), name, count=1)
            return candidate if _rows(namespace.get(candidate)) is not None else None
    return None


class TrainedTestRowsCheck:
    """The last fit of each model name (weakly), and the evaluations that follow."""

    def __init__(self) -> None:
        self._fits: dict[str, _Fit] = {}

    def notes(self, source: str, namespace: dict[str, Any]) -> list[Note]:
        if ".fit(" not in source and not (
            self._fits and (".evaluate(" in source or ".predict(" in source)
        ):
            return []
        if len(source) > MAX_CELL_CHARS:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        for fit in self._fits.values():
            fit.here = False
        calls = sorted(
            (
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("fit", "evaluate", "predict")
                and isinstance(node.func.value, ast.Name)
                and node.args
            ),
            key=lambda node: (node.lineno, node.col_offset),
        )
        found: list[Note] = []
        for call in calls:
            assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
            model_name = call.func.value.id
            names = _input_names(call.args[0])
            if names is None:
                continue
            if call.func.attr == "fit":
                self._remember(model_name, names, call, source, namespace)
                note = _validated_on_trained_rows(call, names, source, namespace)
                if note is not None and not found:
                    found.append(note)
                continue
            note = self._evaluation(model_name, names, call, source, namespace)
            if note is None and not found:
                note = self._unnamed_training(model_name, names, call, tree, source, namespace)
            if note is not None and not found:
                found.append(note)
        return found

    def _unnamed_training(
        self,
        model_name: str,
        names: list[str],
        call: ast.Call,
        tree: ast.Module,
        source: str,
        namespace: dict[str, Any],
    ) -> Note | None:
        """A score of the fit's own arrays under names that do not say training, while a
        held-out pair waits unused (module docstring)."""
        fit = self._fits.get(model_name)
        if fit is None or fit.told or fit.here or fit.model() is not namespace.get(model_name):
            return None
        if len(names) != 1 or len(fit.inputs) != 1 or fit.labels is None or not fit.label_name:
            return None
        inputs, label_name = names[0], fit.label_name
        reference = fit.inputs[0]
        if reference is None or reference() is not namespace.get(inputs) or inputs != fit.names[0]:
            return None
        if fit.labels() is not namespace.get(label_name):
            return None
        if "train" in source.lower() or any(
            _words(n) & (_HELD_OUT | _TRAINING) for n in (inputs, label_name)
        ):
            return None
        if not _labels_scored(tree, call, label_name):
            return None
        pair = held_out_pair(inputs, label_name, inputs, namespace)
        if pair is None or any(re.search(rf"\b{re.escape(n)}\b", source) for n in pair):
            return None
        fixed = _with_names(source, {inputs: pair[0], label_name: pair[1]})
        if not fixed:
            return None
        fit.told = True
        lines = "; ".join(f"line {number}: `{text}`" for number, text in fixed)
        text = (
            f"Line {call.lineno} scores `{model_name}` on `{inputs}` and `{label_name}`, the "
            f"very arrays `{fit.written}` (an earlier cell) trained it on: the figure is a "
            f"training score, better than the model does on new data, while the held-out "
            f"`{pair[0]}`/`{pair[1]}` the notebook keeps apart go unused. Nothing raises. "
            f"Score the held-out rows. Fix: {lines}."
        )
        return reports.note(text, SECTION)

    def _remember(
        self,
        model_name: str,
        names: list[str],
        call: ast.Call,
        source: str,
        namespace: dict[str, Any],
    ) -> None:
        model = _weak(namespace.get(model_name))
        if model is None:
            return
        written = ast.get_source_segment(source, call) or f"{model_name}.fit(...)"
        inputs = [_weak(namespace.get(name)) for name in names]
        if len(self._fits) >= MAX_MODELS and model_name not in self._fits:
            self._fits.pop(next(iter(self._fits)))
        fitted = _Fit(model, inputs, names, written, call.lineno, True)
        if len(call.args) > 1 and isinstance(call.args[1], ast.Name):
            fitted.label_name = call.args[1].id
            fitted.labels = _weak(namespace.get(call.args[1].id))
        self._fits[model_name] = fitted

    def _evaluation(
        self,
        model_name: str,
        names: list[str],
        call: ast.Call,
        source: str,
        namespace: dict[str, Any],
    ) -> Note | None:
        fit = self._fits.get(model_name)
        if fit is None or fit.model() is not namespace.get(model_name):
            return None
        if len(names) != len(fit.inputs) or (call.func.attr == "predict" and len(call.args) > 1):
            return None
        if not all(_words(n) & _HELD_OUT and not _words(n) & _TRAINING for n in names):
            return None
        if fit.told:
            return None
        verdicts: list[bool | None] = []
        for name, reference in zip(names, fit.inputs, strict=True):
            trained = reference() if reference is not None else None
            held = namespace.get(name)
            if trained is None or held is None:
                return None
            verdicts.append(_rows_in(held, trained))
        if False in verdicts or True not in verdicts:
            return None
        held_rows = _rows(namespace.get(names[0]))
        if held_rows is None:
            return None
        shared = held_rows.shape[0]
        fit.told = True
        evaluated = ast.get_source_segment(source, call) or f"{model_name}.evaluate(...)"
        where = f"line {fit.line} of this cell" if fit.here else "an earlier cell"
        trained_names = ", ".join(f"`{n}`" for n in fit.names)
        does = "scores" if call.func.attr == "evaluate" else "predicts with"  # type: ignore[attr-defined]
        text = (
            f"`{evaluated}` (line {call.lineno}) {does} `{model_name}` on "
            f"{shared} rows it was trained on: `{fit.written}` ({where}) gave it "
            f"{trained_names}, which hold{'s' if len(fit.names) == 1 else ''} every row of "
            f"{', '.join(f'`{n}`' for n in names)}. The model has seen these rows and their "
            "labels, so the score measures how well it remembers them, better than it will "
            "do on new data, and it is no test any more. Nothing raises."
        )
        fix = self._fixed_fit(fit, call, names, namespace, source)
        if fix is not None:
            text += (
                f" Build `{model_name}` again (new weights), train it without the held-out "
                f"rows, `{fix}`, and evaluate on them once, at the end."
            )
        else:
            text += (
                f" Build `{model_name}` again (new weights), train it on the training rows "
                "only, and evaluate on the held-out rows once, at the end."
            )
        return reports.note(text, SECTION)

    def _fixed_fit(
        self,
        fit: _Fit,
        evaluation: ast.Call,
        names: list[str],
        namespace: dict[str, Any],
        source: str,
    ) -> str | None:
        """The fit call with its inputs and labels replaced by the training names of the
        evaluation's (``Xn_te`` -> ``Xn_tr``, ``y_te`` -> ``y_tr``)."""
        fit_tree = parsed_source(fit.written)
        if fit_tree is None or not fit_tree.body or not isinstance(fit_tree.body[0], ast.Expr):
            return None
        fit_call = fit_tree.body[0].value
        if not isinstance(fit_call, ast.Call) or len(fit_call.args) < 2:
            return None
        if len(evaluation.args) < 2:
            return None
        replaced: list[str] = []
        for node in evaluation.args[:2]:
            text = ast.get_source_segment(source, node)
            if text is None:
                return None
            for name in sorted(
                {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}, key=len, reverse=True
            ):
                training = _training_name(name, namespace)
                if training is None:
                    return None
                text = re.sub(rf"\b{re.escape(name)}\b", training, text)
            replaced.append(text)
        first, second = fit_call.args[0], fit_call.args[1]
        if first.end_col_offset is None or second.end_col_offset is None:
            return None
        if first.lineno != 1 or second.end_lineno != 1:
            return None
        written = fit.written.encode("utf-8")
        head = written[: first.col_offset].decode("utf-8")
        tail = written[second.end_col_offset :].decode("utf-8")
        return f"{head}{replaced[0]}, {replaced[1]}{tail}"


_SCORE_WORDS = ("acc", "score", "f1", "precision", "recall", "metric", "error")


def _labels_scored(tree: ast.Module, call: ast.Call, labels: str) -> bool:
    """Whether the cell compares ``labels`` (``==``), passes them to a scoring call, or
    to the evaluating call itself."""
    if call.func.attr == "evaluate":  # type: ignore[attr-defined]
        return (
            len(call.args) > 1
            and isinstance(call.args[1], ast.Name)
            and (call.args[1].id == labels)
        )
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            isinstance(n, ast.Name) and n.id == labels
            for part in (node.left, *node.comparators)
            for n in ast.walk(part)
        ):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if any(w in called.lower() for w in _SCORE_WORDS) and any(
                isinstance(a, ast.Name) and a.id == labels for a in node.args
            ):
                return True
    return False


def _with_names(source: str, renamed: dict[str, str]) -> list[tuple[int, str]]:
    """The cell's lines that read a renamed name, rewritten, with their numbers."""
    found: list[tuple[int, str]] = []
    for number, line in enumerate(source.splitlines(), start=1):
        written = line
        for old, new in renamed.items():
            written = re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, written)
        if written != line:
            found.append((number, written.strip()))
    return found


_CHECK = TrainedTestRowsCheck()


def remember_ran_fits(source: str, namespace: dict[str, Any], models: list[Any]) -> None:
    """After a cell that raised after its ``fit`` ran (``models``: the models fit ran on,
    as the fit watch saw them), remember each top-level-parsed ``M.fit(X, Y, ...)`` of such
    a model whose input and label names the cell does not bind again after the fit line:
    their objects are the ones fit was given. The later scoring checks then know the fit."""
    if ".fit(" not in source or not models or len(source) > MAX_CELL_CHARS:
        return
    tree = parsed_source(source)
    if tree is None:
        return
    ran = {id(m) for m in models if m is not None}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fit"
            and isinstance(node.func.value, ast.Name)
            and node.args
        ):
            continue
        model_name = node.func.value.id
        if id(namespace.get(model_name)) not in ran:
            continue
        names = _input_names(node.args[0])
        if names is None:
            continue
        given = set(names) | {a.id for a in node.args[1:2] if isinstance(a, ast.Name)}
        rebound = any(
            isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)
            and n.id in given
            and n.lineno >= node.lineno
            for n in ast.walk(tree)
        )
        if not rebound:
            _CHECK._remember(model_name, names, node, source, namespace)
            _CHECK._fits[model_name].here = False


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    """The check of this kernel (one monitor per kernel: its fits, kept weakly)."""
    return _CHECK.notes(source, namespace)


# The readers ``overlapping_splits.py`` shares: an array's rows, rows found in others.
held_rows = _rows
rows_in = _rows_in
