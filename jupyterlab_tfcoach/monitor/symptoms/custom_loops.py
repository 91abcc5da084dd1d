"""The custom-loop checks run after a completed cell: one parse, four readers.

``metric_resets`` (a Keras metric read every epoch, never reset there),
``epoch_accumulators`` (an epoch's mean from a sum overwritten or never reset),
``evaluation_loops`` (a loop over validation data that steps an optimizer) and
``training_mode`` (a model with Dropout/BatchNormalization called without
``training=True`` while a tape records, or with it outside any tape) read the same
parsed cell (``loop_structure``). A cell with no loop, no ``GradientTape`` and no
``training=True`` in its text costs a few substring tests; another is parsed once per
source (cached), then each check reads the names its pattern needs from the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms import (
    epoch_accumulators,
    evaluation_loops,
    metric_resets,
    training_mode,
)
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import MAX_CELL_CHARS, CellLoops

# Words a cell must hold for a check to have anything to read.
_LOOP_WORDS = ("for ", "while ")
_MODE_WORDS = ("GradientTape", "training=True")


class CustomLoopChecker:
    def __init__(self) -> None:
        self._cells = CellLoops()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if not source or len(source) > MAX_CELL_CHARS:
            return []
        loops = any(word in source for word in _LOOP_WORDS)
        modes = any(word in source for word in _MODE_WORDS)
        if not loops and not modes:
            return []
        cell = self._cells.parse(source)
        if cell is None:
            return []
        found: list[Note] = []
        checks = []
        if loops and cell.loops:
            checks += [metric_resets.notes, epoch_accumulators.notes, evaluation_loops.notes]
        if modes:
            checks.append(training_mode.notes)
        for check in checks:
            try:
                found.extend(check(cell, namespace))
            except Exception:
                pass  # a check left out rather than a report that fails
        return found
