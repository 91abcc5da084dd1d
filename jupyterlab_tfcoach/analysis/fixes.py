"""Applying a fix's edits to text (for tests, and for adapters that fix files)."""

from __future__ import annotations

from collections.abc import Iterable

from jupyterlab_tfcoach.analysis.findings import Edit
from jupyterlab_tfcoach.analysis.positions import split_lines


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with non-overlapping edits applied; lines are joined back with ``\\n``."""
    lines = split_lines(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    flat = "\n".join(lines) + "\n"

    def offset(line: int, column: int) -> int:
        return offsets[line - 1] + column - 1

    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        start = offset(edit.line, edit.column)
        end = offset(edit.end_line, edit.end_column)
        flat = flat[:start] + edit.new_text + flat[end:]
    return flat
