"""A preprocessing layer adapted on data that holds the test or validation set.

``Normalization.adapt(...)`` (also ``TextVectorization``, ``StringLookup``,
``IntegerLookup``, ``Discretization``) learns its statistics or vocabulary from the data
given, and each call replaces what an earlier one learned. Given the test or validation
data, alone or joined to the training data (``np.concatenate([x_train, x_test])``), the
model's preprocessing has seen the data it is evaluated on: the scores are optimistic, and
a second ``adapt`` on test data makes the layer scale training and test inputs by the
test set's numbers. Nothing raises.

After a cell that completed (a cell without ``.adapt(`` in its text costs one substring
test), each ``<layer>.adapt(<data>)`` statement outside function bodies is read: ``<layer>``
holds one of those Keras layers after the cell, and ``<data>`` names (itself, or through
a name the cell assigned just before from an expression naming it, such as a
concatenation) a name with a word of validation or test data (``test``, ``val``,
``valid``, ``validation``, ``eval``, ``holdout``, ``dev``; split at ``_``, digits and case
changes, as ``symptoms/evaluation_loops.py`` reads names) that holds an array, tensor or
dataset. The note names the call, the test data and, when the cell or the namespace has
one, the training data to adapt on instead: the training name in the concatenation, else
the test name with its word replaced by ``train`` (``x_test`` -> ``x_train``) when that
name holds data; fix ``norm.adapt(x_train)``, then compile and fit again.

Data named neither way (``norm.adapt(data["sqft"])``, ``norm.adapt(x_all)``) leaks too
when it holds more rows than a training split the namespace has: for a ``Normalization``
or ``Discretization``, a name with a training word (``train``, ``x_train``; the same key
of a plain dict) holding an array or tensor with fewer rows of the same width, which are
the first or last rows of the adapted data or (float data) whose first 16 rows are all
found in it (at most a million values each). Fix: ``norm.adapt(train["sqft"])``. The
data may sit inside a row-wise expression (``norm.adapt(np.log1p(data["amount"]).reshape(
-1, 1))``, ``tf.constant(x_all * 2.0)``): the one name or dict item in it holding an
array, unless indexed by rows (``x_all[:800]``); the fix is the expression with the
training split in its place. A ``StringLookup`` or ``IntegerLookup`` adapted so (a 1-D
column of numbers or strings) is told when the training split's values are each there at
most as often as in the adapted data (its rows) and the other rows bring values the split
never has ('PL'): each gets an id whose weights training never moves, where new data's
unseen values share the out-of-vocabulary id.

A layer whose output was computed outside the model and given to a fit of an earlier
cell (``ids = vectorizer(texts)``, then ``clf.fit(ids, y)``; ``produced_inputs.py``
reads it from the history) counts as used by that fit too.

Reads names, types and the source only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, keras_layers
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, TEXTS, held_array
from jupyterlab_tfcoach.monitor.symptoms.evaluation_loops import (
    TRAINING_WORDS,
    VALIDATION_WORDS,
)
from jupyterlab_tfcoach.monitor.symptoms.produced_inputs import Produced, produced_use
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.preprocessing_use import LayerUse, adapting_layer

SECTION = "preprocessing-adapt"
MAX_NOTES = 2
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _words(identifier: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(identifier)]


def _is_data(value: Any) -> bool:
    cls = type(value)
    if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
        return True
    try:
        names = {k.__name__ for k in cls.__mro__ if is_library_class(k)}
    except Exception:
        return False
    return bool(names & {"DatasetV2", "Tensor"})


# Split names learners shorten: ``Xn_tr``, ``y_va``, ``X_te``.
_TRAINING_SHORT = frozenset({"tr", "trn"})
_HELD_OUT_SHORT = frozenset({"va", "te", "tst"})


def _held_out(identifier: str) -> bool:
    words = set(_words(identifier))
    held = VALIDATION_WORDS | _HELD_OUT_SHORT
    return bool(words & held) and not words & (TRAINING_WORDS | _TRAINING_SHORT)


def _training(identifier: str) -> bool:
    return bool(set(_words(identifier)) & (TRAINING_WORDS | _TRAINING_SHORT))


def _names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def _top_statements(tree: ast.Module) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    pending: list[ast.stmt] = list(reversed(tree.body))
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        found.append(statement)
        for field in ("body", "orelse", "finalbody"):
            pending.extend(reversed(getattr(statement, field, None) or []))
    return found


def notes(
    source: str,
    namespace: Mapping[str, Any],
    used_before: Callable[[Any, bool], LayerUse | None] | None = None,
) -> list[Note]:
    """Notes for this cell's ``adapt`` calls given test or validation data, or on a
    layer a fit of an earlier cell trained a model with (``used_before``)."""
    if ".adapt(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    assigned: dict[str, ast.AST] = {}  # the latest value each name got, in order
    fit_lines = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "fit"
    ]
    found: list[Note] = []
    for statement in _top_statements(tree):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                assigned[target.id] = statement.value
            continue
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        call = statement.value
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr == "adapt"
            and isinstance(func.value, ast.Name)
            and call.args
        ):
            continue
        layer = namespace.get(func.value.id)
        layer_class = adapting_layer(layer)
        if layer_class is None:
            continue
        # A fit earlier in this cell counts too (the adapt's line is after it).
        fitted_here = any(line < call.lineno for line in fit_lines)
        use = used_before(layer, fitted_here) if used_before is not None else None
        produced = None
        if use is None:
            produced = produced_use(func.value.id, layer, call, source, namespace)
        if use is not None:
            note = _readapted_note(call, func.value.id, layer_class, use, source, namespace)
        elif produced is not None:
            note = _readapted_note(
                call, func.value.id, layer_class, produced.use, source, namespace, produced
            )
        else:
            note = _leak_note(call, func.value.id, layer_class, assigned, source, namespace)
            if note is None and layer_class in _STATISTICS_LAYERS:
                note = _superset_note(call, func.value.id, source, namespace)
            elif note is None and layer_class in _LOOKUP_LAYERS:
                note = _vocabulary_superset_note(call, func.value.id, source, namespace)
        if note is not None and len(found) < MAX_NOTES:
            found.append(note)
    return found


def _leak_note(
    call: ast.Call,
    layer: str,
    layer_class: str,
    assigned: dict[str, ast.AST],
    source: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    data = call.args[0]
    names = _names(data)
    through = None
    if isinstance(data, ast.Name) and data.id in assigned and not _held_out(data.id):
        through = data.id
        names = _names(assigned[data.id])
    held = [n for n in names if _held_out(n) and _is_data(namespace.get(n))]
    if not held:
        return None
    test = held[0]
    trained = [n for n in names if _training(n) and _is_data(namespace.get(n))]
    if not trained:
        guess = _as_training(test)
        if guess is not None and _is_data(namespace.get(guess)):
            trained = [guess]
    written = ast.get_source_segment(source, call) or f"{layer}.adapt(...)"
    given = f"`{through}` (it holds `{test}`)" if through else f"`{test}`"
    if through is None and not (isinstance(data, ast.Name) and data.id == test):
        given = f"data holding `{test}`"
    learns = "vocabulary" if layer_class != "Normalization" else "mean and variance"
    text = (
        f"`{written}` (line {call.lineno}) learns the {learns} of `{layer}` from {given}: "
        f"the data the model is evaluated on. The preprocessing has then seen the test "
        f"examples (a leak: the scores come out better than on truly new data), and each "
        f"adapt replaces what the layer learned before, so training inputs are scaled by "
        f"the test data's numbers. Nothing raises."
    )
    if trained:
        text += (
            f" Adapt on the training data only, then compile and fit again: "
            f"`{layer}.adapt({trained[0]})`."
        )
    else:
        text += " Adapt on the training data only, then compile and fit again."
    return reports.note(text, SECTION)


_STATISTICS_LAYERS = frozenset({"Normalization", "Discretization"})
# Layers whose vocabulary is the set of values given (a TextVectorization's is words).
_LOOKUP_LAYERS = frozenset({"StringLookup", "IntegerLookup"})
MAX_SUPERSET_VALUES = 1_000_000
_SAMPLE_ROWS = 16


def _key(node: ast.AST) -> str | int | None:
    if isinstance(node, ast.Constant) and type(node.value) in (str, int):
        return node.value  # type: ignore[no-any-return]
    return None


def _array_rows(value: Any) -> Any | None:
    """The values of a NumPy array or eager tensor of at most ``MAX_SUPERSET_VALUES``
    numbers with a first axis; None for anything else."""
    values = held_array(value, MAX_SUPERSET_VALUES, NUMBERS)
    return values if values is not None and values.ndim > 0 else None


def _contains_rows(whole: Any, part: Any) -> bool:
    """Whether ``part``'s rows are rows of ``whole``: its first or last rows exactly, or
    (float data) each of its first few rows found in ``whole``."""
    numpy = sys.modules["numpy"]
    rows = part.shape[0]
    if numpy.array_equal(whole[:rows], part) or numpy.array_equal(whole[-rows:], part):
        return True
    if whole.dtype.kind != "f":
        return False
    flat_whole = whole.reshape(whole.shape[0], -1)
    for row in part.reshape(rows, -1)[:_SAMPLE_ROWS]:
        if not (flat_whole == row).all(axis=1).any():
            return False
    return True


def _superset_note(
    call: ast.Call, layer: str, source: str, namespace: Mapping[str, Any]
) -> Note | None:
    """``norm.adapt(data["sqft"])`` where ``train["sqft"]`` holds some of those rows: the
    statistics come from rows the training split does not have (validation or test)."""
    found = _data_source(call.args[0], namespace)
    if found is None:
        return None
    data, owner, key = found
    if _training(owner) or _held_out(owner):
        return None
    held = namespace.get(owner)
    whole = _array_rows(held if key is None else _item(held, key))
    if whole is None or whole.shape[0] < 2:
        return None
    for name, value in list(namespace.items()):
        if name.startswith("_") or not _training(name) or name == owner:
            continue
        part = _array_rows(value if key is None else _item(value, key))
        if part is None or not 0 < part.shape[0] < whole.shape[0]:
            continue
        if part.shape[1:] != whole.shape[1:] or not _contains_rows(whole, part):
            continue
        given = ast.get_source_segment(source, data) or owner
        written = ast.get_source_segment(source, call) or f"{layer}.adapt({given})"
        training = name if key is None else f"{name}[{given[len(owner) :].strip()[1:-1]}]"
        argument = ast.get_source_segment(source, call.args[0]) or given
        # The adapted expression with the data swapped for the training split's
        # (``np.log1p(X_all["amount"])`` -> ``np.log1p(X_train["amount"])``).
        start = _position(call.args[0], data)
        adapted = (
            f"{argument[:start]}{training}{argument[start + len(given) :]}"
            if start is not None and argument[start : start + len(given)] == given
            else training
        )
        rest = whole.shape[0] - part.shape[0]
        text = (
            f"`{written}` (line {call.lineno}) learns the statistics of `{layer}` from "
            f"all {whole.shape[0]} rows of `{given}`, but the training split `{training}` "
            f"holds only {part.shape[0]} of them: the other {rest} rows (validation or "
            "test data) are part of the mean and variance the model's inputs are scaled "
            "by, a leak: the scores on those rows come out better than on truly new "
            "data. Nothing raises. Adapt on the training rows only, then compile and fit "
            f"again: `{layer}.adapt({adapted})`."
        )
        return reports.note(text, SECTION)
    return None


def _position(outer: ast.AST, inner: ast.AST) -> int | None:
    """Where ``inner`` starts in the text of ``outer`` (both on one line)."""
    if outer.lineno != inner.lineno or outer.end_lineno != outer.lineno:  # type: ignore[attr-defined]
        return None
    return inner.col_offset - outer.col_offset  # type: ignore[attr-defined]


def _values_of(value: Any) -> Any | None:
    """The values of a 1-D (or one-column) array or eager tensor of numbers or strings of
    at most ``MAX_SUPERSET_VALUES``, flattened; None for anything else."""
    values = held_array(value, MAX_SUPERSET_VALUES, (*NUMBERS, *TEXTS))
    if values is None or values.ndim == 0 or (values.ndim == 2 and values.shape[1] != 1):
        return None
    return values.reshape(-1) if values.ndim <= 2 else None


def _vocabulary_superset_note(
    call: ast.Call, layer: str, source: str, namespace: Mapping[str, Any]
) -> Note | None:
    """``lookup.adapt(data["country"])`` where ``train["country"]`` holds some of those
    rows (each value at most as often as in the adapted data) and the others bring values
    the training split lacks: the vocabulary holds held-out values."""
    found = _data_source(call.args[0], namespace, _values_of)
    if found is None:
        return None
    data, owner, key = found
    if _training(owner) or _held_out(owner):
        return None
    held = namespace.get(owner)
    whole = _values_of(held if key is None else _item(held, key))
    if whole is None or whole.shape[0] < 2:
        return None
    numpy = sys.modules["numpy"]
    for name, value in list(namespace.items()):
        if name.startswith("_") or not _training(name) or name == owner:
            continue
        part = _values_of(value if key is None else _item(value, key))
        if part is None or not 0 < part.shape[0] < whole.shape[0] or part.dtype != whole.dtype:
            continue
        every, every_count = numpy.unique(whole, return_counts=True)
        some, some_count = numpy.unique(part, return_counts=True)
        at = numpy.searchsorted(every, some)
        if (at >= every.shape[0]).any() or (every[numpy.minimum(at, len(every) - 1)] != some).any():
            continue
        if (some_count > every_count[at]).any():
            continue  # not rows of the adapted data
        extra = every[~numpy.isin(every, some)]
        if extra.shape[0] == 0:
            continue
        given = ast.get_source_segment(source, data) or owner
        written = ast.get_source_segment(source, call) or f"{layer}.adapt({given})"
        training = name if key is None else f"{name}[{given[len(owner) :].strip()[1:-1]}]"
        argument = ast.get_source_segment(source, call.args[0]) or given
        start = _position(call.args[0], data)
        adapted = (
            f"{argument[:start]}{training}{argument[start + len(given) :]}"
            if start is not None and argument[start : start + len(given)] == given
            else training
        )
        shown = ", ".join(_shown(v) for v in extra[:3].tolist())
        more = f" and {extra.shape[0] - 3} more" if extra.shape[0] > 3 else ""
        text = (
            f"`{written}` (line {call.lineno}) builds the vocabulary of `{layer}` from all "
            f"{whole.shape[0]} rows of `{given}`, but the training split `{training}` holds "
            f"only {part.shape[0]} of them: the other rows (validation or test data) add "
            f"{extra.shape[0]} value{'s' if extra.shape[0] != 1 else ''} the training data "
            f"never has ({shown}{more}). Each gets an id of its own whose weights training "
            "never moves, where new data's unseen values would share the out-of-vocabulary "
            "id: the held-out rows are read with knowledge of themselves, a leak. Nothing "
            "raises. Adapt on the training rows only, then compile and fit again: "
            f"`{layer}.adapt({adapted})`."
        )
        return reports.note(text, SECTION)
    return None


def _shown(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return repr(value) if isinstance(value, str) else str(value)


def _data_source(
    node: ast.AST,
    namespace: Mapping[str, Any],
    reader: Callable[[Any], Any | None] | None = None,
) -> tuple[ast.AST, str, str | int | None] | None:
    """The data an adapt's argument reads: itself (``x_all``, ``data["sqft"]``) or the one
    name or plain-dict item inside a row-wise expression of it
    (``np.log1p(data["amount"]).reshape(-1, 1)``): (its node, the name, the key)."""
    read = reader or _array_rows
    candidates: list[tuple[ast.AST, str, str | int | None]] = []
    # A name indexed by other than a key (``x_all[:800]``, ``x_all[idx]``) is a row
    # selection: the rows adapted on are not all of its rows.
    selected = {
        id(inner.value)
        for inner in ast.walk(node)
        if isinstance(inner, ast.Subscript) and _key(inner.slice) is None
    }
    for inner in ast.walk(node):
        if id(inner) in selected:
            continue
        if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
            key = _key(inner.slice)
            held = _item(namespace.get(inner.value.id), key) if key is not None else None
            if held is not None and read(held) is not None:
                candidates.append((inner, inner.value.id, key))
        elif isinstance(inner, ast.Name) and read(namespace.get(inner.id)) is not None:
            candidates.append((inner, inner.id, None))
    owners = {owner for _, owner, _ in candidates}
    return candidates[0] if len(owners) == 1 else None


def _item(value: Any, key: str | int) -> Any:
    """``value[key]`` of a plain dict (never a user ``__getitem__``); None otherwise."""
    return value.get(key) if type(value) is dict else None


def _as_training(identifier: str) -> str | None:
    """``x_train`` for ``x_test``, ``X_tr`` for ``X_te``: the held-out word replaced by
    ``train`` (its short form by ``tr``)."""
    words = [(w, "train") for w in sorted(VALIDATION_WORDS, key=len, reverse=True)]
    for word, training in [*words, *((w, "tr") for w in sorted(_HELD_OUT_SHORT))]:
        pattern = re.compile(rf"(?<![A-Za-z]){word}(?![a-z])", re.IGNORECASE)
        if pattern.search(identifier):
            return pattern.sub(training, identifier, count=1)
    return None


_HISTORY_CELLS = 100
_HISTORY_CHARS = 50_000


def _earlier_adapt(
    layer: str, data: str, namespace: Mapping[str, Any], told: set[str]
) -> str | None:
    """The data of the latest ``<layer>.adapt(<data>)`` of an earlier cell (the history
    ``In``, newest first) given other data than ``data`` and still holding data."""
    history = namespace.get("In")
    if type(history) is not list:
        return None
    marker = f"{layer}.adapt("
    for source in reversed(history[-_HISTORY_CELLS:]):
        if type(source) is not str or marker not in source or len(source) > _HISTORY_CHARS:
            continue
        tree = parsed_source(source)
        if tree is None:
            continue
        for statement in reversed(_top_statements(tree)):
            value = statement.value if isinstance(statement, ast.Expr) else None
            if not (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "adapt"
                and isinstance(value.func.value, ast.Name)
                and value.func.value.id == layer
                and len(value.args) == 1
                and isinstance(value.args[0], ast.Name)
            ):
                continue
            given = value.args[0].id
            if given != data and given not in told and _is_data(namespace.get(given)):
                return given
    return None


def _readapted_note(
    call: ast.Call,
    layer: str,
    layer_class: str,
    use: LayerUse,
    source: str,
    namespace: Mapping[str, Any],
    produced: Produced | None = None,
) -> Note | None:
    model = use.model()
    if model is None:
        return None
    model_name = name_bound_to(id(model), namespace) or "the model"
    written = ast.get_source_segment(source, call) or f"{layer}.adapt(...)"
    data = ast.get_source_segment(source, call.args[0]) or "new data"
    how = "its dataset's `map`" if use.through_data else "it"
    if produced is not None:
        how = f"`{produced.data}`, the output of `{layer}` (`{produced.made}`)"
    if layer_class == "Normalization":
        learned = "mean and variance"
        effect = (
            "the inputs are now scaled by other numbers than those the trained weights "
            f"learned for (a direct call `{model_name}(x)` uses them at once, predict and "
            "evaluate once their step is traced again)"
        )
    elif layer_class == "Discretization":
        learned = "bin boundaries"
        effect = "values now fall into other bins than those the trained weights learned"
    else:
        learned = "vocabulary"
        learned_by = "the trained weights"
        if any(type(la).__name__ == "Embedding" for la in keras_layers(model, 200)):
            learned_by = f"the rows of `{model_name}`'s `Embedding`"
        effect = (
            f"its tokens now get other ids than those {learned_by} learned (words "
            "the new data lacks become out-of-vocabulary), so the model reads different "
            "inputs"
        )
    text = (
        f"`{written}` (line {call.lineno}) adapts `{layer}` again after `{model_name}` "
        f"was trained with {how} (by a fit before this adapt): it replaces the {learned} "
        f"`{layer}` had during fit with that of `{data}`, and {effect}. Nothing raises. "
        "Adapt a preprocessing layer once, on the training data, before fit, and leave "
        "it as it is for validation, test and new data."
    )
    given = call.args[0]
    earlier = (
        _earlier_adapt(layer, given.id, namespace, use.told)
        if isinstance(given, ast.Name)
        else None
    )
    if produced is not None:
        earlier = produced.adapted
    if isinstance(given, ast.Name):
        use.told.add(given.id)
    if earlier is not None:
        text += (
            f" Delete this line, and put back what `{model_name}` was trained with: "
            f"`{layer}.adapt({earlier})`."
        )
    else:
        text += f" Delete this line, and adapt `{layer}` again on the training data it had."
    return reports.note(text, SECTION)


# The readers ``whole_data_statistics.py`` shares: rows of a split, names of splits.
array_rows = _array_rows
contains_rows = _contains_rows
is_training_name = _training
is_held_out_name = _held_out
as_training_name = _as_training
top_statements = _top_statements
