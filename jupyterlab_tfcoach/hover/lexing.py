"""Cheap, single-line lexing for hover: find the dotted name under the cursor
without parsing the file (works while the file has syntax errors)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.lexing import code_mask

_DOTTED = re.compile(r"[^\W\d]\w*(?:[ \t]*\.[ \t]*[^\W\d]\w*)*")


@dataclass(frozen=True)
class DottedName:
    """``parts`` up to and including the part under the cursor, with the code-point
    span [start, end) of that prefix on the line."""

    parts: tuple[str, ...]
    start: int
    end: int

    @property
    def text(self) -> str:
        return ".".join(self.parts)


def dotted_at(line: str, character: int) -> DottedName | None:
    """The dotted name whose identifier covers ``character`` (a code-point index)."""
    for match in _DOTTED.finditer(line):
        if match.start() > character:
            return None
        if match.end() < character:
            continue
        pieces: list[tuple[str, int, int]] = []
        for part in re.finditer(r"[^\W\d]\w*", match.group()):
            pieces.append((part.group(), match.start() + part.start(), match.start() + part.end()))
        for index, (_, start, end) in enumerate(pieces):
            if start <= character <= end:
                if not code_mask(line)[start]:
                    return None
                if match.start() > 0 and line[match.start() - 1] == ".":
                    return None  # attribute of a call result or subscript: not resolvable here
                return DottedName(tuple(p[0] for p in pieces[: index + 1]), match.start(), end)
        return None
    return None
