"""The target given to the model as an input: a label column kept among the features,
or the targets passed as one of the model's inputs.

``X = table[:, :5]`` where column 4 is the label, ``model.fit(X_train, y_train)``: the
model can read the answer from its input, learns to copy that column, and its scores
come out near perfect while saying nothing about rows whose answer is unknown. The same
happens with ``model.fit([X_train, y_train], y_train)`` (the targets as a second input),
and at ``evaluate`` on inputs built the same way. Nothing raises.

Found after a cell that completed (a cell without ``.fit(`` or ``.evaluate(`` in its text
costs two substring tests), from each ``M.fit(x, y)`` / ``M.evaluate(x, y)`` written
with names (``x`` a name or a list of names; ``y`` a name, positionally or as
``x=``/``y=``) and the arrays they hold (NumPy arrays or eager tensors of at most a
million numbers, the first ``SAMPLE_ROWS`` rows read): ``y`` a non-constant 1-D or
``(N, 1)`` target, and an input either equal to it or a 2-D ``(N, F)`` table (F at most
``MAX_FEATURES``) with a column equal to it, or (float targets) following it exactly up
to a scale and shift (a correlation of ``MIN_CORRELATION``: a standardised copy). The note
names the call, the column and the target; the fix drops the column from that table and
from its held-out twins that have the same width (``X_train`` -> ``X_val``, ``X_test``),
or takes the target out of the inputs, and says the model is built again for the inputs
left.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import is_training_name
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-validation-data"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 1_000_000
MAX_FEATURES = 200
SAMPLE_ROWS = 2_000
MIN_CORRELATION = 0.9999
# Fewer rows than this: a binary feature may equal binary labels by chance.
MIN_ROWS = 20
_HELD_OUT_FOR = {
    "train": ("val", "valid", "validation", "test", "dev"),
    "tr": ("va", "te", "val", "test"),
    "trn": ("tst", "val"),
}


def _values(value: Any) -> Any | None:
    values = held_array(value, MAX_VALUES, NUMBERS)
    if values is None or values.ndim == 0 or values.shape[0] < 3:
        return None
    return values[:SAMPLE_ROWS]


def _target(value: Any) -> Any | None:
    """A target's sampled values as a 1-D float array, when it varies."""
    values = _values(value)
    if values is None or not (values.ndim == 1 or (values.ndim == 2 and values.shape[1] == 1)):
        return None
    flat = values.reshape(-1).astype("float64")
    numpy = sys.modules["numpy"]
    if not numpy.isfinite(flat).all() or flat.min() == flat.max():
        return None
    return flat


def _same(column: Any, target: Any, exact_only: bool) -> bool:
    numpy = sys.modules["numpy"]
    if numpy.array_equal(column, target):
        return True
    if exact_only or not numpy.isfinite(column).all() or column.min() == column.max():
        return False
    return bool(abs(numpy.corrcoef(column, target)[0, 1]) >= MIN_CORRELATION)


def _copied_column(table: Any, target: Any) -> int | None:
    values = _values(table)
    if values is None or values.ndim != 2 or not 1 < values.shape[1] <= MAX_FEATURES:
        return None
    rows = min(values.shape[0], target.shape[0])
    if rows < MIN_ROWS:
        return None
    # Integer labels must be copied exactly; float targets may be standardised copies.
    exact_only = bool(float(target[:rows].min()) >= 0) and bool(
        (target[:rows] == target[:rows].round()).all()
    )
    for column in range(values.shape[1]):
        if _same(values[:rows, column].astype("float64"), target[:rows], exact_only):
            return column
    return None


def _names(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.List | ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts if isinstance(e, ast.Name)]
    return None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    if len(call.args) > position:
        return call.args[position]
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return None


def _twins(name: str, width: int, namespace: dict[str, Any]) -> list[str]:
    """``X_val``, ``X_test`` for ``X_train``: held-out twins of the same width."""
    found = [name]
    if not is_training_name(name):
        return found
    for word, held in _HELD_OUT_FOR.items():
        pattern = re.compile(rf"(?<![A-Za-z]){word}(?![a-z])", re.IGNORECASE)
        if not pattern.search(name):
            continue
        for other in held:
            twin = pattern.sub(other, name, count=1)
            values = _values(namespace.get(twin))
            if twin not in found and values is not None and values.ndim == 2:
                if values.shape[1] == width:
                    found.append(twin)
    return found


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if (".fit(" not in source and ".evaluate(" not in source) or len(source) > MAX_CELL_CHARS:
        return []
    if "numpy" not in sys.modules:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("fit", "evaluate")
            and isinstance(node.func.value, ast.Name)
        ):
            continue
        inputs = _names(_argument(node, 0, "x"))
        labels = _names(_argument(node, 1, "y"))
        if not inputs or not labels or len(labels) != 1:
            continue
        target = _target(namespace.get(labels[0]))
        if target is None:
            continue
        note = _told(node, inputs, labels[0], target, source, namespace)
        if note is not None:
            return [note]
    return []


def _told(
    call: ast.Call,
    inputs: list[str],
    label: str,
    target: Any,
    source: str,
    namespace: dict[str, Any],
) -> Note | None:
    written = ast.get_source_segment(source, call) or f"{label}"
    fitting = isinstance(call.func, ast.Attribute) and call.func.attr == "fit"
    doing = "trains" if fitting else "scores"
    for name in inputs if len(inputs) > 1 else []:
        value = namespace.get(name)
        held = _target(value)
        if (
            name == label
            or value is namespace.get(label)
            or (held is not None and held.shape == target.shape and _same(held, target, True))
        ):
            kept = [n for n in inputs if n != name]
            shown = kept[0] if len(kept) == 1 else f"[{', '.join(kept)}]"
            given = ast.get_source_segment(source, call.args[0]) if call.args else name
            text = (
                f"`{written}` (line {call.lineno}) {doing} with `{name}` among the model's "
                f"inputs, and `{name}` holds the targets `{label}` themselves: the model reads "
                "the answer from its input, learns to copy it, and its scores say nothing "
                "about rows whose answer is unknown. Nothing raises. Build the model again "
                f"without that input and give it only the features: `{shown}` in place of "
                f"`{given}`."
            )
            return reports.note(text, SECTION)
    for name in inputs:
        copied = _values(namespace.get(name))
        column = _copied_column(namespace.get(name), target)
        if column is None or copied is None:
            continue
        rows = min(copied.shape[0], target.shape[0])
        exact = sys.modules["numpy"].array_equal(
            copied[:rows, column].astype("float64"), target[:rows]
        )
        holds = "holds the target" if exact else "holds a scaled copy of the target"
        width = copied.shape[1]
        names = _twins(name, width, namespace)
        dropped = ", ".join(f"np.delete({n}, {column}, axis=1)" for n in names)
        fix = f"{', '.join(names)} = {dropped}"
        features = f"{width - 1} feature{'s' if width != 2 else ''}"
        text = (
            f"`{written}` (line {call.lineno}) {doing} on `{name}`, whose column {column} "
            f"{holds} `{label}`: the model reads the answer from its input, learns to copy "
            "that column, and its scores come out near perfect while saying nothing about "
            "rows whose answer is unknown. Nothing raises. Drop the column, build the model "
            f"again for {features} and train it anew: `{fix}`."
        )
        return reports.note(text, SECTION)
    return None
