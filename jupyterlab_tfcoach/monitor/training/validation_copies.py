"""A fit validated on its own training data.

``model.fit(x, y, validation_data=(x, y))`` (or ``validation_data=train_ds``) runs the
validation on the very examples the model trains on: ``val_loss`` and ``val_accuracy``
then repeat the training figures and say nothing about data the model has not seen
(overfitting stays invisible, EarlyStopping on ``val_loss`` never stops for it). Nothing
raises.

Read around each ``fit`` call (``fit_watch``'s hook, once per call, nothing per step):
the ``validation_data`` given and fit's ``x``/``y``. A pair is the same data when it is
the same object, or two NumPy arrays or tensors of one shape and dtype that hold equal
values (a view too) (compared only up to ``MAX_COMPARED`` values; a tensor through
TensorFlow's own ``numpy``). A dataset counts only as the same object. Kept per cell:
the model (weakly) and which of ``x``/``y`` matched. After the cell, the note names the
fit call written in the cell (``<model>.fit(...)`` with ``validation_data=``) and gives
it with ``validation_split=0.2`` in place of ``validation_data=...`` for arrays (Keras
then keeps the last 20% apart), or says to pass held-out data for a dataset.
"""

from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, library_attribute
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-validation-data"
MAX_COMPARED = 1_000_000
MAX_KEPT = 4
_FIT_ARGUMENTS = ("x", "y")


@dataclass
class ValidationCopy:
    """One fit whose validation data is its training data."""

    model: weakref.ReferenceType[Any]
    dataset: bool  # the same dataset object, rather than arrays


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    if name in kwargs:
        return kwargs[name]
    index = _FIT_ARGUMENTS.index(name)
    return args[index] if len(args) > index else None


def _class_names(value: Any) -> set[str]:
    try:
        return {k.__name__ for k in type(value).__mro__ if is_library_class(k)}
    except Exception:
        return set()


def _as_numpy(value: Any) -> Any | None:
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if type(value) is numpy.ndarray:
        return value
    if "Tensor" in _class_names(value) or "ResourceVariable" in _class_names(value):
        to_numpy = library_attribute(value, "numpy")
        return to_numpy() if to_numpy is not None else None
    return None


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if a is b:
        return True
    shape_a, shape_b = getattr(a, "shape", None), getattr(b, "shape", None)
    if shape_a is None or tuple(shape_a) != tuple(shape_b or ()):
        return False
    size = 1
    for dim in tuple(shape_a):
        size *= int(dim or 0)
    if size == 0 or size > MAX_COMPARED:
        return False
    left, right = _as_numpy(a), _as_numpy(b)
    numpy = sys.modules.get("numpy")
    if left is None or right is None or numpy is None or left.dtype != right.dtype:
        return False
    return bool(numpy.array_equal(left, right))


def validation_copy(
    model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> ValidationCopy | None:
    """What one fit call was given, when its validation data is its training data."""
    given = kwargs.get("validation_data")
    if given is None:
        return None
    x = _argument(args, kwargs, "x")
    if given is x and "DatasetV2" in _class_names(x):
        return ValidationCopy(weakref.ref(model), dataset=True)
    if type(given) not in (tuple, list) or len(given) < 2:
        return None
    y = _argument(args, kwargs, "y")
    if _same(x, given[0]) and _same(y, given[1]):
        return ValidationCopy(weakref.ref(model), dataset=False)
    return None


def _fit_calls(source: str, model_name: str) -> list[ast.Call]:
    tree = parsed_source(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fit"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == model_name
            and any(k.arg == "validation_data" for k in node.keywords)
        ):
            found.append(node)
    return found


def _with_split(source: str, call: ast.Call) -> str | None:
    """The call with ``validation_split=0.2`` in place of ``validation_data=...``."""
    if call.lineno != call.end_lineno:
        return None
    written = ast.get_source_segment(source, call)
    keyword = next(k for k in call.keywords if k.arg == "validation_data")
    if written is None or keyword.end_col_offset is None:
        return None
    raw = written.encode("utf-8")
    start, end = keyword.col_offset - call.col_offset, keyword.end_col_offset - call.col_offset
    return (raw[:start] + b"validation_split=0.2" + raw[end:]).decode("utf-8")


def validation_copy_notes(
    copies: list[ValidationCopy], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    notes: list[Note] = []
    told: set[int] = set()
    for copy in copies[:MAX_KEPT]:
        model = copy.model()
        if model is None or id(model) in told:
            continue
        told.add(id(model))
        name = name_bound_to(id(model), dict(namespace))
        calls = _fit_calls(cell_source, name) if name else []
        written = ast.get_source_segment(cell_source, calls[0]) if calls else None
        call_text = f"`{written}`" if written and "\n" not in written else f"`{name}.fit`"
        head = (
            f"{call_text} validates on the data it trains on: its `validation_data` is "
            f"{'the same dataset as' if copy.dataset else 'the same arrays as'} its "
            "training data. The `val_` figures then repeat the training ones on examples "
            "the model has already seen, and say nothing about new data (overfitting "
            "stays invisible, and a callback watching `val_loss` follows the training "
            "loss). Nothing raises."
        )
        fixed = _with_split(cell_source, calls[0]) if calls and not copy.dataset else None
        if fixed is not None:
            text = (
                f"{head} Keep part of the examples apart for validation: `{fixed}` (Keras "
                "holds out the last 20%, shuffle the arrays first if they are sorted), or "
                "pass arrays held out from training."
            )
        else:
            text = f"{head} Pass a dataset of examples held out from training as `validation_data`."
        notes.append(reports.note(text, SECTION))
    return notes


# ``symptoms/trained_test_rows.py`` gives the same fix for validation rows shared in part.
with_split = _with_split
