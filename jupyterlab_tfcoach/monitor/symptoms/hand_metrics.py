"""Predictions and metrics computed by hand, checked after each completed cell.

Runs the checks that read a cell's own expressions and the values their names hold
(``cell_reading``): a probability threshold on raw scores (``threshold_scores``), a
class picked over the wrong axis or labels in the wrong format (``class_axis``), and an
accuracy averaged in an integer dtype (``integer_mean``). A cell without the words they
look for costs one regular-expression search; a cell seen before, one dictionary lookup
for its parsed source, then a few namespace reads per candidate expression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, CellReader
from jupyterlab_tfcoach.monitor.symptoms.class_axis import class_axis_notes
from jupyterlab_tfcoach.monitor.symptoms.integer_mean import integer_mean_notes
from jupyterlab_tfcoach.monitor.symptoms.threshold_scores import threshold_notes

_CHECKS: tuple[Callable[[CellCode, dict[str, Any]], list[Note]], ...] = (
    threshold_notes,
    class_axis_notes,
    integer_mean_notes,
)


class HandMetricChecker:
    """The cell's hand-written predictions and metrics, read after the cell."""

    def __init__(self) -> None:
        self._reader = CellReader()

    def notes(self, source: str, namespace: dict[str, Any]) -> list[Note]:
        code = self._reader.read(source)
        if code is None:
            return []
        notes: list[Note] = []
        for check in _CHECKS:
            try:
                notes.extend(check(code, namespace))
            except Exception:
                continue
        return notes
