"""The held-out labelled arrays a fit should validate on, when the notebook has them.

A fit whose ``validation_data`` repeats its training rows needs other rows to validate
on. ``validation_split=0.2`` keeps the last fifth of what fit is given apart, which is
right for labelled training data but wrong when those rows are not what the figure must
measure (pseudo-labels, augmented copies, a training set with a separate test set named
in the notebook): the held-out score is then measured against the same kind of rows.
When the namespace holds one pair of arrays named as held-out data (``x_test``/
``y_test``, ``X_val``/``y_val``: a word of validation or test in the name), shaped like
the training pair after the first axis, with as many rows as each other and none of them
found among the training rows, the fix validates on that pair instead.

The label array's name is read from the fit's own names: the part that differs between
the given inputs and labels (``x_lab``/``y_lab``: ``x`` -> ``y``) is swapped in the
candidate input's name. Values are read as shapes and, for the row check, through
``trained_test_rows.shared_rows`` (bounded); nothing is called on user objects.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor.symptoms.evaluation_loops import VALIDATION_WORDS

MAX_NAMES = 2000
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_HELD_OUT = VALIDATION_WORDS | {"va", "te", "tst"}


def _held_out_name(name: str) -> bool:
    return bool({p.lower() for p in _PARTS.findall(name)} & _HELD_OUT)


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    if shape is None or type(value).__name__ not in ("ndarray", "EagerTensor"):
        return None
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        return None


def _swap(inputs: str, labels: str) -> tuple[str, str] | None:
    """(``x``, ``y``) for ``x_lab``/``y_lab``: the leading parts that differ, the rest equal."""
    start = 0
    while start < min(len(inputs), len(labels)) and inputs[start] == labels[start]:
        start += 1
    end = 0
    while (
        end < min(len(inputs), len(labels)) - start
        and inputs[len(inputs) - 1 - end] == labels[len(labels) - 1 - end]
    ):
        end += 1
    a, b = inputs[start : len(inputs) - end], labels[start : len(labels) - end]
    return (a, b) if a and b else None


def held_out_pair(
    inputs: str, labels: str, training: str, namespace: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(``x_test``, ``y_test``): the one held-out pair of the namespace fit to validate a
    model trained on ``training``, whose validation pair was named ``inputs``/``labels``."""
    from jupyterlab_tfcoach.monitor.symptoms.trained_test_rows import shared_rows

    swap = _swap(inputs, labels)
    x_shape = _shape(namespace.get(inputs))
    y_shape = _shape(namespace.get(labels))
    trained = namespace.get(training)
    if swap is None or x_shape is None or y_shape is None or trained is None:
        return None
    found: list[tuple[str, str]] = []
    for name, value in list(namespace.items())[:MAX_NAMES]:
        if name in (inputs, training) or name.startswith("_") or swap[0] not in name:
            continue
        if not _held_out_name(name):
            continue
        shape = _shape(value)
        if shape is None or shape[1:] != x_shape[1:]:
            continue
        label_name = name.replace(swap[0], swap[1], 1)
        label_shape = _shape(namespace.get(label_name))
        if label_shape is None or label_shape[1:] != y_shape[1:] or label_shape[0] != shape[0]:
            continue
        if shared_rows(value, trained) is not None:
            continue
        found.append((name, label_name))
    return found[0] if len(found) == 1 else None


def with_held_out(source: str, call: ast.Call, pair: tuple[str, str]) -> str | None:
    """The fit call with ``validation_data=(x_test, y_test)``."""
    if call.lineno != call.end_lineno:
        return None
    written = ast.get_source_segment(source, call)
    keyword = next((k for k in call.keywords if k.arg == "validation_data"), None)
    if written is None or keyword is None or keyword.value.end_col_offset is None:
        return None
    raw = written.encode("utf-8")
    start = keyword.value.col_offset - call.col_offset
    end = keyword.value.end_col_offset - call.col_offset
    return (raw[:start] + f"({pair[0]}, {pair[1]})".encode() + raw[end:]).decode("utf-8")
