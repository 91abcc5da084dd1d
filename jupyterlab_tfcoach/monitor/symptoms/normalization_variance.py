"""A ``Normalization`` built with ``variance=`` a standard deviation.

``keras.layers.Normalization(mean=m, variance=v)`` computes ``(x - m) / sqrt(v)``. Given
the standard deviation ``s`` where it wants the variance ``s**2``, it divides by
``sqrt(s)`` instead of ``s``: inputs with a spread of 17 come out spread over about +-4
instead of +-1, and nothing raises.

After a cell that completed (a cell without ``variance=`` costs one substring test),
each top-level call ``N(data)`` of the cell is read where ``N`` holds a Keras
``Normalization`` built with ``variance=`` a number (its stored ``input_variance``, a
Python number, > 1) and ``data`` names (or writes, as a list or ``np.array([...])`` of
numbers) at least 3 values (at most a million): when the data's standard deviation ``s``
is within a factor of 1.5 of the variance given (``v`` looks like ``s``, not ``s**2``)
and the output's spread ``s / sqrt(v)`` is above 2, the note names the layer, the
variance and the data's spread; fix: the layer built with ``variance=`` the value squared.

Reads the data's spread only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, held_array, unwrap
from jupyterlab_tfcoach.monitor.syntax import held_at, parsed_source, reference_path

SECTION = "preprocessing-adapt"
MAX_VALUES = 1_000_000
MAX_CELL_CHARS = 50_000
_LAYER = ("keras.src.layers.preprocessing.normalization", "Normalization")


def _given_variance(layer: Any) -> float | None:
    if not any((c.__module__, c.__name__) == _LAYER for c in class_mro(layer)):
        return None
    variance = (instance_dict(layer) or {}).get("input_variance")
    if type(variance) not in (int, float) or variance <= 1:
        return None
    return float(variance)


def _values(node: ast.AST, namespace: Mapping[str, Any]) -> Any | None:
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    held = unwrap(node)
    if isinstance(held, ast.List | ast.Tuple):
        try:
            value: Any = numpy.array(ast.literal_eval(held), dtype="float64")
        except (ValueError, TypeError, SyntaxError, MemoryError):
            return None
    else:
        found, value = held_at(reference_path(held), namespace)  # type: ignore[arg-type]
        if not found:
            return None
        value = held_array(value, MAX_VALUES, NUMBERS)
        if value is None:
            return None
    if value.dtype.kind not in "iuf" or not 3 <= value.size <= MAX_VALUES:
        return None
    return value


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a Normalization whose given variance looks like a spread, if any."""
    if "variance=" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call) or len(node.args) != 1:
                continue
            path = reference_path(node.func)
            found, layer = held_at(path, namespace)  # type: ignore[arg-type]
            variance = _given_variance(layer) if found and path is not None else None
            if variance is None:
                continue
            values = _values(node.args[0], namespace)
            if values is None:
                continue
            spread = float(values.std())
            if not variance / 1.5 <= spread <= variance * 1.5 or spread / variance**0.5 <= 2:
                continue
            return [_note(".".join(path), variance, spread, node)]  # type: ignore[arg-type]
    return []


def _note(layer: str, variance: float, spread: float, call: ast.Call) -> Note:
    shown = f"{variance:g}"
    text = (
        f"`{layer}` was built with `variance={shown}`, but the data it scales on line "
        f"{call.lineno} of this cell has a standard deviation of {spread:.3g}: {shown} "
        f"looks like the spread itself, not its square. The layer divides by "
        f"sqrt({shown}) = {variance**0.5:.3g}, so its output spreads about "
        f"{spread / variance**0.5:.3g} times wider than standardised data should. Nothing "
        f"raises. Give the variance, the standard deviation squared: "
        f"`variance={shown} ** 2`."
    )
    return reports.note(text, SECTION)
