"""A split cut from labels stored sorted by class: a class missing from one side.

Data built class by class (``np.concatenate([make(0), make(1), make(2)])``) or read from
a file ordered by label keeps its labels sorted. Slicing it into a training and a
validation part (``y_train = targets[:384]``) before shuffling gives the training part
the first classes only: the model never sees the rest, and the validation part scores
it on classes it could not learn. Shuffling the training part afterwards does not bring
them back, and nothing raises.

The same holds for rows stored grouped by an id (a loop that appends each user's
interactions in turn): a split by position gives the last users to the test part only.

After a cell that completed (a cell without a slice written with ``:`` in brackets costs
one regular-expression search), each slice ``Y[a:b]`` of a plain name assigned by a top-
level statement (a look such as ``print(Y[:5])`` is no split) and holding a tenth of the
rows or more is read, every slice of a name (``Y[:n]`` may hold every class while
``Y[n:]`` lacks some): its bounds are whole numbers as ``cell_reading.slice_rows`` works
them out (``n_test``, ``-n_test``, ``int(0.8 * len(Y))``); ``Y`` holds, after the cell,
a 1-D NumPy array or tensor of whole numbers or texts (at most ``MAX_ROWS`` values, 2 to
``MAX_CLASSES`` distinct ones, each twice on average) where each value fills one run of
rows (sorted in either direction, or grouped), and the slice lacks one of ``Y``'s
values. A slice under a tenth of the rows is told when it holds one value only, has at
least ``MIN_SUBSET_ROWS`` rows and its inputs are sliced the same way beside it (a small
labelled subset, ``x_lab, y_lab = x_pool[:30], y_pool[:30]``). The note names
the slice, the classes it holds and those it lacks; fix: shuffle ``Y`` and the arrays
the cell slices the same way (``images[:384]``) by one permutation before the split, a
line put first in the cell (in words when the cell slices no partner array: a shuffle of
the labels alone would break every pair).

Data stacked from parts (``_part_note``): rows with no labels to read (``X =
np.concatenate([upper, lower])``, then rescaled ``X = (X - X.mean(0)) / X.std(0)``) keep
each part in one block. The history's assignments of the sliced name (``In``, newest
first, each one that reads the name itself followed back) reach a top-level
``np.concatenate``/``vstack``/``tf.concat`` of a list of names holding arrays whose rows
add up to the name's rows now; a split slice (a tenth of the rows or more) that cuts one
part in the middle and leaves another part out whole is told: the part that is left out
is data that split never holds (a slice that ends on a part's boundary re-splits the
parts on purpose and stays quiet). The fix is the same shuffle before the split.

Rows sorted by a measured value (``order = np.argsort(x[:, 0]); x, y = x[order],
y[order]``, to plot lines) and then split by position (``_sorted_column_note``): the
first part holds the low values and the next the high ones, so the test part lies outside
the range the model trained on and its score measures extrapolation. Told when the cell
slices one float array (1-D, or at most ``MAX_SORTED_COLUMNS`` columns, at least
``MIN_SORTED_ROWS`` rows) into two disjoint parts of a tenth of its rows or more, one of
its columns runs in order over every row with uneven steps (values drawn then sorted: an
evenly spaced axis, ``arange``/``linspace``, is a time or grid axis split in order on
purpose) and most values distinct, and a cell of the history that assigns the array sorts
(``argsort``, ``sort``, ``sorted``, ``sort_values``). Quiet when the names or the cell
speak of time or forecasting (a chronological split is right there). The fix is the same
shuffle before the split.

Reads the labels' values only (one count of the runs, then a count of the classes); nothing here
imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import INTEGERS, held_array, slice_rows
from jupyterlab_tfcoach.monitor.syntax import history_assignments, numpy_name, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "keras-validation-data"
MAX_ROWS = 1_000_000
MAX_CLASSES = 1000
MAX_CELL_CHARS = 50_000
# The fewest rows of a one-class labelled subset told when it is under a tenth of the data.
MIN_SUBSET_ROWS = 5
# A slice written in brackets, whatever its bounds (``y[:n]``, ``y[int(0.8 * len(y)):]``).
_WANTED = re.compile(r"\w\[[^\]\n]*:")


def _grouped(labels: Any) -> tuple[Any, bool] | None:
    """(the distinct values, whether they run in order) when each value of ``labels``
    fills one run of rows (sorted either way, or grouped as ``np.repeat`` and a loop per
    user build them) and values repeat (each twice on average); None otherwise."""
    numpy = sys.modules["numpy"]
    # One pass counts the runs: shuffled data has about as many runs as rows and stops
    # here, before the sort in ``unique``.
    runs = int(numpy.count_nonzero(labels[1:] != labels[:-1])) + 1
    if not 2 <= runs <= min(MAX_CLASSES, labels.shape[0] // 2):
        return None
    classes = numpy.unique(labels)
    if classes.shape[0] != runs:
        return None
    if labels.dtype.kind in "iu":
        steps = labels[1:].astype(numpy.int64) - labels[:-1].astype(numpy.int64)
        ordered = bool((steps >= 0).all() or (steps <= 0).all())
    else:
        ordered = bool((labels[1:] >= labels[:-1]).all() or (labels[1:] <= labels[:-1]).all())
    return classes, ordered


def _labels(value: Any) -> Any | None:
    """A 1-D array or eager tensor of whole numbers or texts (ids, class names)."""
    values = held_array(value, MAX_ROWS, (*INTEGERS, "str", "bytes"), ndim=1)
    return values if values is not None and values.shape[0] > 1 else None


def _listed(classes: list[Any]) -> str:
    shown = [str(c) for c in classes[:8]] + (["..."] if len(classes) > 8 else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a slice of sorted labels that lacks a class, if any."""
    if len(source) > MAX_CELL_CHARS or _WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    # A split is assigned (``y_train = y[:384]``, ``a, b = y[:n], y[n:]``): a slice read
    # inside a call or an expression statement (``print(y[:5])``) is a look, not a split.
    slices = [
        node
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for node in (
            statement.value.elts if isinstance(statement.value, ast.Tuple) else [statement.value]
        )
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
    ]
    targets = _slice_targets(tree)
    read: dict[str, Any] = {}
    parts_of: dict[str, list[tuple[str, int]] | None] = {}
    for node in slices:
        name = node.value.id  # type: ignore[attr-defined]
        rows = slice_rows(node, namespace)
        if rows is None:
            continue
        # Each name's values are read once, and every slice of it checked (``labels[:n]``
        # may hold all classes while ``labels[n:]`` lacks some).
        if name not in read:
            labels = _labels(namespace.get(name))
            read[name] = _grouped(labels) if labels is not None else None
            if read[name] is not None:
                read[name] = (labels, *read[name])
        found = read[name]
        if found is None:
            if name not in parts_of:
                parts_of[name] = _concatenated_parts(name, tree, namespace)
            parts = parts_of[name]
            note = (
                _part_note(node, name, rows, parts, slices, source, namespace, targets)
                if parts
                else None
            )
            if note is not None:
                return [note]
            continue
        labels, classes, ordered = found
        part = labels[rows[1] : rows[2]]
        held = numpy.unique(part)
        # A part of the data (a tenth or more), not a peek at its first rows; a smaller
        # part of one class only, cut with its inputs (``x_pool[:30], y_pool[:30]``), is
        # a labelled subset that can teach one class.
        if part.shape[0] < max(2, labels.shape[0] // 10) and not (
            held.shape[0] == 1
            and part.shape[0] >= MIN_SUBSET_ROWS
            and _partners(node, name, slices, source, namespace)
        ):
            continue
        missing = [c.item() for c in classes[~numpy.isin(classes, held)]]
        if missing:
            return [
                _note(
                    node,
                    name,
                    [c.item() for c in held],
                    missing,
                    ordered,
                    slices,
                    source,
                    namespace,
                    targets,
                )
            ]
    note = _sorted_column_note(slices, source, namespace, targets)
    return [note] if note is not None else []


MIN_SORTED_ROWS = 20
MAX_SORTED_COLUMNS = 16
# Steps whose spread is under this fraction of their mean are evenly spaced (a grid).
EVEN_STEPS = 0.05
_SORTS = re.compile(r"\b(?:arg)?sort(?:_values)?\s*\(|\bsorted\s*\(|\.sort\s*\(")
# A split in time order is right: names or words that say the rows are times.
_TIME_WORDS = word_gate(
    r"(?i)(?:^|_)(?:t|ts|time|times|date|dates|day|days|year|years|step|steps|hour|hours)(?:_|$)"
    r"|timestamp|forecast|extrapolat|future|chronolog"
)


def _sorted_column(values: Any) -> tuple[int, bool] | None:
    """(the column, ascending) of a float array whose column runs in order over every
    row, with uneven steps and most values distinct; None otherwise."""
    numpy = sys.modules["numpy"]
    rows = values.shape[0]
    table = values.reshape(rows, -1)
    if table.shape[1] > MAX_SORTED_COLUMNS or not numpy.isfinite(table).all():
        return None
    for column in range(table.shape[1]):
        steps = numpy.diff(table[:, column].astype("float64"))
        ascending = bool((steps >= 0).all())
        if not ascending and not bool((steps <= 0).all()):
            continue
        sizes = numpy.abs(steps)
        if numpy.count_nonzero(sizes) < rows // 2:
            continue
        if float(sizes.std()) <= EVEN_STEPS * float(sizes.mean()):
            continue  # an evenly spaced axis: a grid or time steps
        return column, ascending
    return None


def _sorted_in_history(name: str, namespace: Mapping[str, Any], source: str) -> str | None:
    """Where a cell of the history (this one included) that assigns ``name`` also sorts:
    its last statement assigning ``name`` as written and its place, ``""`` when it cannot
    be shown on one line; None when no such cell."""
    history = namespace.get("In")
    cells: list[tuple[Any, int | None]] = [(source, None)]
    if type(history) is list:
        first = max(0, len(history) - _HISTORY_CELLS)
        cells += [(history[i], i) for i in range(len(history) - 1, first - 1, -1)]
    for cell, count in cells:
        if type(cell) is not str or name not in cell or len(cell) > MAX_CELL_CHARS:
            continue
        if _SORTS.search(cell) is None:
            continue
        tree = parsed_source(cell)
        if tree is None:
            continue
        for statement in reversed(tree.body):
            if isinstance(statement, ast.Assign) and any(
                isinstance(n, ast.Name) and n.id == name
                for target in statement.targets
                for n in ast.walk(target)
            ):
                written = ast.get_source_segment(cell, statement)
                if written is None or "\n" in written or len(written) > 120:
                    return ""
                place = (
                    f"line {statement.lineno} of this cell"
                    if count is None
                    else f"cell In[{count}], line {statement.lineno}"
                )
                return f" (`{written}`, {place})"
    return None


def _sorted_column_note(
    slices: list[ast.Subscript],
    source: str,
    namespace: Mapping[str, Any],
    targets: dict[int, str],
) -> Note | None:
    """The note for a float array sorted by one of its columns and split by position."""
    if _TIME_WORDS.search(source):
        return None
    parts: dict[str, list[tuple[ast.Subscript, int, int, int]]] = {}
    for node in slices:
        rows = slice_rows(node, namespace)
        if rows is not None and rows[2] - rows[1] >= max(2, rows[3] // 10):
            parts.setdefault(rows[0], []).append((node, rows[1], rows[2], rows[3]))
    for name, cuts in parts.items():
        cuts.sort(key=lambda cut: cut[1])
        first, last = cuts[0], cuts[-1]
        if len(cuts) < 2 or first[2] > last[1] or _TIME_WORDS.search(name):
            continue
        if any(_TIME_WORDS.search(targets.get(id(cut[0]), "")) for cut in cuts):
            continue
        values = held_array(namespace.get(name), MAX_ROWS, ("float",))
        if values is None or values.ndim > 2 or values.shape[0] < MIN_SORTED_ROWS:
            continue
        found = _sorted_column(values)
        if found is None:
            continue
        sorted_at = _sorted_in_history(name, namespace, source)
        if sorted_at is None:
            continue
        return _sorted_column_text(
            name, found, sorted_at, first, last, slices, source, namespace, targets
        )
    return None


def _sorted_column_text(
    name: str,
    found: tuple[int, bool],
    sorted_at: str,
    first: tuple[ast.Subscript, int, int, int],
    last: tuple[ast.Subscript, int, int, int],
    slices: list[ast.Subscript],
    source: str,
    namespace: Mapping[str, Any],
    targets: dict[int, str],
) -> Note:
    column, ascending = found
    values = held_array(namespace.get(name), MAX_ROWS, ("float",))
    table = values.reshape(values.shape[0], -1)
    by = "its values" if values.ndim == 1 else f"its column {column}"
    direction = "ascending" if ascending else "descending"

    def described(cut: tuple[ast.Subscript, int, int, int]) -> str:
        node, start, stop, _ = cut
        written = ast.get_source_segment(source, node) or f"{name}[...]"
        kept = f" (`{targets[id(node)]}`)" if id(node) in targets else ""
        low = float(table[start:stop, column].min())
        high = float(table[start:stop, column].max())
        return f"`{written}`{kept} holds values from {low:.3g} to {high:.3g}"

    text = (
        f"`{name}` is sorted by {by} in {direction} order{sorted_at}, and this cell splits it by "
        "position: "
        f"{described(first)} while {described(last)}. The two parts do not overlap, so "
        "the later part lies outside the range the model learns from and its score "
        "measures extrapolation, not how well the model does on data like its training "
        "data. Nothing raises."
    )
    partners = _partners(first[0], name, slices, source, namespace)
    fix = _permutation_fix(name, partners, numpy_name(namespace), namespace)
    if fix is None:
        return _shuffle_in_words(text, name)
    return reports.note(
        text + f" Shuffle the rows before splitting. Fix: `{fix}` as the first line of the cell.",
        SECTION,
    )


def _permutation_fix(
    name: str, partners: list[str], numpy: str | None, namespace: Mapping[str, Any]
) -> str | None:
    """One permutation applied to ``name`` and the arrays whose rows pair with it, or None
    where it cannot be written (``labels[perm]`` runs on NumPy arrays only: a tensor takes
    ``tf.gather``)."""
    if numpy is None or type(namespace[name]).__name__ != "ndarray":
        return None
    arrays = [*partners, name]
    return (
        f"perm = {numpy}.random.permutation(len({name})); "
        f"{', '.join(arrays)} = {', '.join(f'{a}[perm]' for a in arrays)}"
    )


def _shuffle_in_words(text: str, name: str) -> Note:
    return reports.note(
        text + f" Shuffle `{name}` and the arrays whose rows pair with it by one "
        "permutation before splitting.",
        SECTION,
    )


_STACKS = frozenset({"concatenate", "vstack", "concat", "row_stack"})
_HISTORY_CELLS = 30


def _stacked_names(value: ast.expr) -> list[str] | None:
    """``[a, b]`` of ``np.concatenate([a, b])`` (``+ noise`` around it allowed)."""
    for node in ast.walk(value):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _STACKS
            and node.args
            and isinstance(node.args[0], ast.List | ast.Tuple)
            and all(isinstance(e, ast.Name) for e in node.args[0].elts)
        ):
            return [e.id for e in node.args[0].elts]  # type: ignore[attr-defined]
    return None


def _concatenated_parts(
    name: str, tree: ast.Module, namespace: Mapping[str, Any]
) -> list[tuple[str, int]] | None:
    """The parts (name, rows) ``name``'s rows were stacked from, in order; None when the
    history does not show it or the rows no longer add up."""
    if any(
        isinstance(t, ast.Name) and t.id == name
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
        for t in ast.walk(target)
    ):
        return None  # bound again in this cell: the history says nothing of it
    total = _row_count(namespace.get(name))
    if total is None:
        return None
    history = namespace.get("In")
    if type(history) is not list:
        return None
    # A shuffle or permutation anywhere near the name (``np.random.shuffle(X)`` in place,
    # ``X = X[perm]``) may have mixed the blocks: nothing is told then.
    stacked_somewhere = False
    for cell in history[-_HISTORY_CELLS:]:
        if type(cell) is not str or name not in cell:
            continue
        if "shuffle" in cell or "perm" in cell:
            return None
        stacked_somewhere = stacked_somewhere or any(word in cell for word in _STACKS)
    if not stacked_somewhere:
        return None  # substring tests only: no cell stacks anything under this name
    for statement, _ in history_assignments(name, namespace, _HISTORY_CELLS, MAX_CELL_CHARS):
        stacked = _stacked_names(statement.value)
        if stacked is not None:
            parts = [(part, _row_count(namespace.get(part))) for part in stacked]
            counts = [rows for _, rows in parts]
            if len(parts) < 2 or None in counts or sum(counts) != total:  # type: ignore[arg-type]
                return None
            return [(part, rows) for part, rows in parts if rows is not None]
        if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement.value)):
            return None  # made otherwise: the parts are not known
    return None


def _row_count(value: Any) -> int | None:
    if type(value).__name__ not in ("ndarray", "EagerTensor"):
        return None
    try:
        shape = value.shape
        return int(shape[0]) if len(shape) >= 1 else None
    except Exception:
        return None


def _part_note(
    node: ast.Subscript,
    name: str,
    rows: tuple[str, int, int, int],
    parts: list[tuple[str, int]],
    slices: list[ast.Subscript],
    source: str,
    namespace: Mapping[str, Any],
    targets: dict[int, str],
) -> Note | None:
    _, start, stop, total = rows
    if stop - start < max(2, total // 10):
        return None
    bounds: list[tuple[str, int, int]] = []
    first = 0
    for part, count in parts:
        bounds.append((part, first, first + count))
        first += count
    if any(count < total // 10 for _, count in parts):
        return None
    cuts_one = any(a < start < b or a < stop < b for _, a, b in bounds)
    left_out = [(part, a, b) for part, a, b in bounds if b <= start or a >= stop]
    if not cuts_one or not left_out:
        return None
    written = ast.get_source_segment(source, node) or f"{name}[...]"
    stacked = ", ".join(f"`{part}`" for part, _ in parts)
    missing = " and ".join(f"`{part}` (rows {a} to {b - 1})" for part, a, b in left_out)
    text = (
        f"`{name}` was stacked from {stacked} in that order, one block each, so "
        f"`{written}` (line {node.lineno} of this cell) holds rows {start} to {stop - 1} "
        f"only: {missing} never appear{'s' if len(left_out) == 1 else ''} in that part. "
        "A split taken before shuffling keeps the order the data was built in: this part "
        "measures (or learns) a different distribution from the rest. Nothing raises."
    )
    if id(node) in targets:
        text += f" That part is `{targets[id(node)]}`."
    numpy = numpy_name(namespace)
    partners = _partners(node, name, slices, source, namespace)
    if numpy is None or type(namespace[name]).__name__ != "ndarray":
        return reports.note(
            text + f" Shuffle `{name}` (and the arrays whose rows pair with it) by one "
            "permutation before splitting.",
            SECTION,
        )
    arrays = [name, *partners]
    fix = (
        f"perm = {numpy}.random.permutation(len({name})); "
        f"{', '.join(arrays)} = {', '.join(f'{a}[perm]' for a in arrays)}"
    )
    text += f" Shuffle before splitting, as the first line of the cell: `{fix}`."
    return reports.note(text, SECTION)


def _slice_targets(tree: ast.Module) -> dict[int, str]:
    """The name each top-level assigned slice is kept in (``y_lab`` for ``y_pool[:30]``
    in ``x_lab, y_lab = x_pool[:30], y_pool[:30]``), by the slice node's id."""
    found: dict[int, str] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        pairs = (
            zip(target.elts, value.elts, strict=False)
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            else [(target, value)]
        )
        for name, node in pairs:
            if isinstance(name, ast.Name) and isinstance(node, ast.Subscript):
                found[id(node)] = name.id
    return found


def _partners(
    node: ast.Subscript,
    name: str,
    slices: list[ast.Subscript],
    source: str,
    namespace: Mapping[str, Any],
) -> list[str]:
    """The NumPy arrays of ``name``'s length that the cell slices with the same bounds as
    written (``x_pool[:n]`` beside ``y_pool[:n]``): the rows that pair with the labels."""
    cut = ast.get_source_segment(source, node.slice)
    rows = len(namespace[name])
    partners: list[str] = []
    for other in slices:
        partner = other.value.id  # type: ignore[attr-defined]
        if partner == name or partner in partners:
            continue
        value = namespace.get(partner)
        if ast.get_source_segment(source, other.slice) != cut:
            continue
        try:
            same_rows = type(value).__name__ == "ndarray" and len(value) == rows
        except Exception:
            same_rows = False
        if same_rows:
            partners.append(partner)
    return partners


def _note(
    node: ast.Subscript,
    name: str,
    held: list[Any],
    missing: list[Any],
    ordered: bool,
    slices: list[ast.Subscript],
    source: str,
    namespace: Mapping[str, Any],
    targets: dict[int, str],
) -> Note:
    written = ast.get_source_segment(source, node) or f"{name}[...]"
    partners = _partners(node, name, slices, source, namespace)
    cut = ast.get_source_segment(source, node.slice)
    kept = [targets[id(node)]] if id(node) in targets else []
    kept += [
        targets[id(other)]
        for other in slices
        if other is not node
        and id(other) in targets
        and other.value.id in partners  # type: ignore[attr-defined]
        and ast.get_source_segment(source, other.slice) == cut
    ]
    # Labels in order are classes; ids grouped row by row (a user's interactions) are
    # values, which the split leaves out the same way.
    noun, nouns = ("class", "classes") if ordered else ("value", "values")
    order = "is sorted by class" if ordered else "keeps the rows of each value together"
    text = (
        f"`{name}` {order}, so `{written}` (line {node.lineno} of this cell) "
        f"holds {nouns if len(held) > 1 else noun} {_listed(held)} only: "
        f"{noun if len(missing) == 1 else nouns} "
        f"{_listed(missing)} never appear{'s' if len(missing) == 1 else ''} in that part. "
        "A split taken before shuffling keeps the order the data was built in; a model "
        f"trained on it never sees those {nouns}, and shuffling the part afterwards does "
        "not bring them back. Nothing raises."
    )
    if kept:
        listed = " and ".join(f"`{k}`" for k in dict.fromkeys(kept))
        text += f" That part is {listed}."
    numpy = numpy_name(namespace)
    # Without the arrays that pair with these labels, a printed shuffle of the labels
    # alone would break every pair: say it in words.
    fix = _permutation_fix(name, partners, numpy, namespace) if partners else None
    if fix is None:
        return _shuffle_in_words(text, name)
    text += f" Shuffle them together before splitting, as the first line of the cell: `{fix}`."
    return reports.note(text, SECTION)
