"""Source locations as users read them: notebook cells by their ``In[n]`` label.

IPython compiles each cell under a generated file name and remembers which
execution count it belongs to (``shell.compile._filename_map``); tracebacks show
those as ``Cell In[3], line 2`` and so do we.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any


class CellLocator:
    """Maps code file names to cells of the shell that runs them."""

    def __init__(self, shell: Any | None) -> None:
        self._shell = shell
        self._cell_token = 0

    def cell_files(self) -> dict[str, int]:
        try:
            files = self._shell.compile._filename_map  # type: ignore[union-attr]
        except Exception:
            return {}
        return files if type(files) is dict else {}

    def begin_cell(self) -> None:
        """Call from ``pre_run_cell``: a new token for the cell about to run."""
        self._cell_token += 1

    def cell_token(self) -> int:
        """Distinguishes cell runs (IPython's counter is already incremented during a cell
        and not incremented at all for cells run without history)."""
        return self._cell_token

    def describe(self, filename: str, line: int) -> str:
        """``Cell In[3], line 2`` for a notebook cell, else ``path:line``."""
        number = self.cell_files().get(filename)
        if number is not None:
            return f"Cell In[{number}], line {line}"
        return f"{filename}:{line}"

    def call_site(self, frame: FrameType | None) -> str | None:
        """The cell line that started the call running in ``frame``.

        The outermost frame that belongs to a cell is the line the user ran;
        inner cell frames are helpers defined in earlier cells. Only called when
        something traced, so walking the stack costs nothing per call.
        """
        files = self.cell_files()
        if not files:
            return None
        outermost: tuple[str, int] | None = None
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename in files:
                outermost = (filename, frame.f_lineno)
            frame = frame.f_back
        if outermost is None:
            return None
        filename, line = outermost
        # The running cell was compiled last, so it has the highest number.
        if files.get(filename) == max(files.values()):
            return f"line {line}"
        return self.describe(filename, line)


def caller_frame(depth: int) -> FrameType | None:
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None
