"""Soft label rows that do not sum to 1, given to a categorical cross-entropy by ``fit``.

A categorical cross-entropy, ``-sum(y * log(p))`` over a row, reads each label row ``y`` as
a distribution over the classes. Hand-made soft labels whose rows sum to more or less than
1 raise nothing: label smoothing written ``y * (1 - e) + e`` (``e`` added to every class
instead of ``e / K``: rows sum to ``1 + (K - 1) * e``), blends whose weights do not add up
to 1. The loss is then no cross-entropy against a distribution: its minimum sits at the row
divided by its sum, so the predicted probabilities are pushed toward other targets than
the learner meant (for smoothing, the true class much lower), and the loss's value has
another floor.

Read by ``input_ranges.RangeWatcher`` in ``fit``'s hook, once per call, after the call
returned: the labels ``fit`` was given (a NumPy array or eager tensor ``y``, at most
``MAX_VALUES`` values of its first rows; a dataset's first batch, which that watcher reads
anyway for the inputs' range, and caches per dataset). Only labels of rank 2, float, at
least 2 columns, count (``LabelRows``: one pass of row sums). Kept when at least
``OFF_SHARE`` of the rows sum to more than ``ROW_SUM_TOLERANCE`` away from 1, some value
is not a whole number (rows of 0s and 1s with several 1s are multi-hot labels:
``loss_agreement.py`` tells them), and the compiled loss (one output) is Keras's
categorical cross-entropy (a string, a function or a loss object).

Silent: one-hot rows, mixup or CutMix blends of one-hot rows (they sum to 1), smoothing
with ``e / K``, a loss's own ``label_smoothing=``, multi-hot or soft targets given to a
binary cross-entropy (rows may sum to anything there), labels read from no cheap source.

The note names the model, the loss as compiled, the data (the call's argument as written),
the row sums and what the loss's minimum then is, and where a function mapped over that
dataset (or the cell), or the newest assignment of the labels' name in the cells, writes
the smoothing shape ``a * (1 - e) + e``, the fix ``+ e / K``
in the learner's names (``K`` a name of the notebook holding the label width: a name with
``class`` in it first, then one the cells give ``to_categorical``/``one_hot``/``Dense``,
else the number). Otherwise the rule, no code.

Nothing here imports TensorFlow, prints or calls user code; failures are swallowed.
"""

from __future__ import annotations

import ast
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import MAP, chain_of, operation
from jupyterlab_tfcoach.monitor.syntax import call_name, method_calls, parsed_source
from jupyterlab_tfcoach.monitor.training import user_code

SECTION = "labels-and-loss"
MAX_VALUES = 200_000  # labels read (their first rows): enough rows to judge
ROW_SUM_TOLERANCE = 1e-3  # float32 blends of one-hot rows sum to 1 within ~1e-6
OFF_SHARE = 0.5  # a few rows off (zero rows used as a mask) is a choice; most is a bug
CATEGORICAL_LOSSES = frozenset({"categorical_crossentropy", "categorical_focal_crossentropy"})
MAX_RECORDS = 8
MAX_NAMES_SEARCHED = 5000
MAX_CELLS_SEARCHED = 20  # the cell, then earlier cells, newest first


@dataclass(frozen=True)
class LabelRows:
    """Row sums of one call's 2-D float labels: numbers only."""

    width: int
    rows: int
    off: int  # rows whose sum is more than ROW_SUM_TOLERANCE away from 1
    low_sum: float
    high_sum: float
    whole: bool  # every value a whole number (0/1 rows: one-hot or multi-hot)
    # The first row off: its largest value and its sum (what the loss's minimum makes it).
    top: float
    top_sum: float

    @property
    def unnormalised(self) -> bool:
        return not self.whole and self.off > 0 and self.off >= OFF_SHARE * self.rows


@dataclass
class UnnormalisedLabels:
    """A fit whose labels' rows do not sum to 1 under a categorical cross-entropy."""

    model_id: int
    data_id: int
    labels_id: int | None  # ``y`` given apart from the inputs, else None
    rows: LabelRows
    loss: str
    # Python functions mapped over the dataset (weakly): where a smoothing may be written.
    mapped: list[weakref.ReferenceType[Any]] = field(default_factory=list)


def rows_of(array: Any) -> LabelRows | None:
    """The row sums of a NumPy array of labels of rank 2 (float, 2 columns or more; at
    most ``MAX_VALUES`` values of its first rows), else None."""
    shape = getattr(array, "shape", None)
    dtype = getattr(array, "dtype", None)
    if shape is None or len(shape) != 2 or getattr(dtype, "kind", "") != "f":
        return None
    width = int(shape[1])
    if width < 2 or int(shape[0]) == 0:
        return None
    values = array[: max(1, MAX_VALUES // width)]
    sums = values.sum(axis=1)
    low, high = float(sums.min()), float(sums.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    rows = int(values.shape[0])
    if low >= 1.0 - ROW_SUM_TOLERANCE and high <= 1.0 + ROW_SUM_TOLERANCE:
        # Every row sums to 1 (one-hot rows, blends of them): nothing more to read.
        return LabelRows(width, rows, 0, low, high, False, 1.0, 1.0)
    off_rows = abs(sums - 1.0) > ROW_SUM_TOLERANCE
    off = int(off_rows.sum())
    whole = bool((values == values.round()).all())
    first = int(off_rows.argmax()) if off else 0
    return LabelRows(
        width=width,
        rows=rows,
        off=off,
        low_sum=low,
        high_sum=high,
        whole=whole,
        top=float(values[first].max()),
        top_sum=float(sums[first]),
    )


def tensor_rows(value: Any) -> LabelRows | None:
    """``rows_of`` an eager tensor or NumPy array (a tensor over ``MAX_VALUES``: None)."""
    cls = type(value)
    if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
        return rows_of(value)
    if "EagerTensor" not in cls.__name__:
        return None
    shape = library_attribute(value, "shape")
    try:
        dims = [int(d) for d in shape]
    except Exception:
        return None
    if len(dims) != 2 or math.prod(dims) > MAX_VALUES:
        return None
    numpy = library_attribute(value, "numpy")
    return rows_of(numpy()) if numpy is not None else None


def element_labels(element: Any) -> Any | None:
    """The labels of a dataset element ``(x, y[, w])``, else None."""
    if type(element) is tuple and len(element) >= 2:
        return element[1]
    return None


def mapped_functions(dataset: Any) -> list[weakref.ReferenceType[Any]]:
    """The Python functions given to ``map`` along the dataset's chain (weakly)."""
    found: list[weakref.ReferenceType[Any]] = []
    for link in chain_of(dataset) if operation(dataset) is not None else ():
        if operation(link) != MAP:
            continue
        wrapper = (instance_dict(link) or {}).get("_map_func")
        function = (instance_dict(wrapper) or {}).get("_func") if wrapper is not None else None
        if type(function) is FunctionType and len(found) < 8:
            found.append(weakref.ref(function))
    return found


def categorical_loss(model: Any) -> str | None:
    """The compiled loss's Keras function name when it is a categorical cross-entropy."""
    from jupyterlab_tfcoach.monitor.training.loss_agreement import compiled_loss

    found = compiled_loss(model)
    return found[0] if found is not None and found[0] in CATEGORICAL_LOSSES else None


# ------------------------------------------------------------------ the note
@dataclass(frozen=True)
class Smoothing:
    """``a * (1 - e) + e`` as written, and the same with ``e / K``."""

    written: str
    fixed: str
    place: str


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def _one_minus(node: ast.AST) -> ast.AST | None:
    """``e`` of ``1 - e`` (``1.0 - e``)."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Constant)
        and node.left.value in (1, 1.0)
    ):
        return node.right
    return None


def _smoothing_term(node: ast.BinOp) -> ast.AST | None:
    """The added ``e`` of ``a * (1 - e) + e`` in any order of the factors and terms."""
    if not isinstance(node.op, ast.Add):
        return None
    for product, added in ((node.left, node.right), (node.right, node.left)):
        if not isinstance(product, ast.BinOp) or not isinstance(product.op, ast.Mult):
            continue
        if not isinstance(added, ast.Name | ast.Constant | ast.Attribute):
            continue
        for factor in (product.left, product.right):
            spread = _one_minus(factor)
            if spread is not None and _same(spread, added):
                return added
    return None


def _replaced(source: str, node: ast.BinOp, term: ast.AST, divisor: str) -> str | None:
    """The expression's text with ``term`` replaced by ``term / divisor``."""
    text = ast.get_source_segment(source, node)
    term_text = ast.get_source_segment(source, term)
    if not text or not term_text or "\n" in text or node.lineno != term.lineno:
        return None
    start = term.col_offset - node.col_offset
    end = (term.end_col_offset or 0) - node.col_offset
    raw = text.encode("utf-8")
    if raw[start:end].decode("utf-8", "replace") != term_text:
        return None
    return (raw[:start] + f"{term_text} / {divisor}".encode() + raw[end:]).decode("utf-8")


def _smoothing_in(
    source: str, divisor: str, within: ast.AST | None = None
) -> tuple[str, str, int] | None:
    """The first ``a * (1 - e) + e`` of ``source`` (of the node ``within`` it, if given)."""
    tree = within if within is not None else parsed_source(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            term = _smoothing_term(node)
            if term is None:
                continue
            fixed = _replaced(source, node, term, divisor)
            written = ast.get_source_segment(source, node)
            if fixed is not None and written:
                return written, fixed, node.lineno
    return None


def _assignment(source: str, name: str) -> ast.Assign | None:
    """The last top-level ``name = ...`` of a cell."""
    tree = parsed_source(source) if name in source else None
    found = None
    for statement in tree.body if tree is not None else ():
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in statement.targets
        ):
            found = statement
    return found


_WIDTH_CALLS = frozenset({"to_categorical", "one_hot", "Dense", "CategoryEncoding"})


def _width_names(sources: list[str]) -> set[str]:
    """Names the cells give as a class count: arguments of ``to_categorical``,
    ``one_hot``, ``Dense``, ``CategoryEncoding``."""
    found: set[str] = set()
    for source in sources:
        if not any(call in source for call in _WIDTH_CALLS):
            continue
        tree = parsed_source(source)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call) and call_name(node) in _WIDTH_CALLS:
                for argument in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(argument, ast.Name):
                        found.add(argument.id)
    return found


def _width_name(namespace: Mapping[str, Any], width: int, sources: list[str]) -> str:
    """A name of the notebook holding the label width: one with ``class`` in it first,
    then one the cells give as a class count (``to_categorical(y, n_kinds)``), else the
    number."""
    found: list[str] = []
    for index, (name, value) in enumerate(list(namespace.items())):
        if index >= MAX_NAMES_SEARCHED:
            break
        if type(value) is int and value == width and not name.startswith("_"):
            found.append(name)
    classes = [name for name in found if "class" in name.lower()]
    if classes:
        return classes[0]
    counts = _width_names(sources) if found else set()
    return next((name for name in found if name in counts), str(width))


def smoothing(
    record: UnnormalisedLabels, namespace: Mapping[str, Any], cell_source: str
) -> Smoothing | None:
    """Where a function mapped over the data, or the cell, writes ``a * (1 - e) + e``."""
    sources, counts = user_code.cell_sources(namespace, cell_source)
    sources, counts = sources[:MAX_CELLS_SEARCHED], counts[:MAX_CELLS_SEARCHED]
    divisor = _width_name(namespace, record.rows.width, sources)
    for ref in record.mapped:
        function = ref()
        method = user_code.method_source(function) if function is not None else None
        if method is None:
            continue
        found = _smoothing_in(method.source, divisor)
        if found is not None:
            written, fixed, line = found
            name = getattr(function, "__name__", "")
            place = user_code.place_of(function, method.first_line + line - 1, namespace)
            where = f"in `{name}`, {place}" if name.isidentifier() else place
            return Smoothing(written, fixed, where)
    labels = name_bound_to(record.labels_id, namespace) if record.labels_id else None
    if labels is None:
        # A dataset's labels: a smoothing written in this cell (a lambda's, a loop's).
        found = _smoothing_in(cell_source, divisor) if "1 -" in cell_source else None
        return Smoothing(found[0], found[1], f"line {found[2]} of this cell") if found else None
    # Labels given by name: the smoothing is the value of their newest assignment.
    for source, count in zip(sources, counts, strict=True):
        statement = _assignment(source, labels)
        if statement is None:
            continue
        found = _smoothing_in(source, divisor, statement.value)
        if found is None:
            return None
        return Smoothing(found[0], found[1], user_code.cell_place(count, found[2]))
    return None


def _fit_argument(source: str, model: str) -> str | None:
    """The first argument of ``model.fit(...)`` as written in the cell."""
    for node in method_calls(source, model, "fit"):
        argument = node.args[0] if node.args else None
        for keyword in node.keywords:
            if keyword.arg == "x":
                argument = keyword.value
        text = ast.get_source_segment(source, argument) if argument is not None else None
        if text and "\n" not in text and len(text) <= 80:
            return text
    return None


def _number(value: float) -> str:
    return f"{value:.3g}"


def _sums(rows: LabelRows) -> str:
    if abs(rows.high_sum - rows.low_sum) <= ROW_SUM_TOLERANCE:
        return f"sum to {_number(rows.low_sum)}"
    return f"sum to between {_number(rows.low_sum)} and {_number(rows.high_sum)}"


def note(record: UnnormalisedLabels, namespace: Mapping[str, Any], cell_source: str) -> Note | None:
    model = name_bound_to(record.model_id, namespace)
    if model is None:
        return None
    rows = record.rows
    if record.labels_id is not None:
        labels = name_bound_to(record.labels_id, namespace)
        data = f"the labels `{labels}`" if labels else "the labels given"
        counted = f"{rows.off} of its first {rows.rows} rows"
    else:
        written = _fit_argument(cell_source, model) or name_bound_to(record.data_id, namespace)
        data = f"the labels of `{written}` (its first batch)" if written else "the labels given"
        counted = f"{rows.off} of the batch's {rows.rows} rows"
    loss = (
        "categorical cross-entropy"
        if record.loss == "categorical_crossentropy"
        else "categorical focal cross-entropy"
    )
    meant = rows.top / rows.top_sum if rows.top_sum > 0 else None
    pushed = (
        f" (a row whose largest value is {_number(rows.top)} is learned as "
        f"{_number(meant)}: each row divided by its sum)"
        if meant is not None and abs(meant - rows.top) > 0.005
        else ""
    )
    text = (
        f"`{model}.fit` trained a {loss} on {data}, whose rows {_sums(rows)} "
        f"({counted}, {rows.width} classes), not 1. The loss reads each label row as a "
        f"distribution over the classes; with rows that do not sum to 1 it is no "
        f"cross-entropy any more: its minimum moves to the rows divided by their "
        f"sums{pushed}, so the predicted probabilities are pushed toward other targets "
        f"than the ones you wrote, and the loss's floor changes too. Nothing raises."
    )
    found = smoothing(record, namespace, cell_source)
    if found is not None:
        text += (
            f" `{found.written}` ({found.place}) adds the whole smoothing to every class; "
            f"label smoothing spreads it over the {rows.width} classes so that each row "
            f"still sums to 1: `{found.fixed}`."
        )
    else:
        text += (
            " Build soft labels so that each row sums to 1 (a smoothing `e` spread as "
            "`y * (1 - e) + e / K` over the K classes, blends whose weights add up to 1), "
            "or give one-hot rows and let the loss smooth them "
            "(`CategoricalCrossentropy(label_smoothing=...)`)."
        )
    return reports.note(text, SECTION)


def notes(
    records: list[UnnormalisedLabels], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    found: list[Note] = []
    told: set[int] = set()
    for record in records:
        if record.model_id in told:
            continue
        told.add(record.model_id)
        try:
            told_note = note(record, namespace, cell_source)
        except Exception:
            told_note = None
        if told_note is not None:
            found.append(told_note)
    return found
