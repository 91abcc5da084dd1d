"""Cheap, single-line lexing for hover: find the dotted name under the cursor
without parsing the file (works while the file has syntax errors)."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def code_mask(line: str) -> list[bool]:
    """For each character: True when it is code (not inside a string or comment).

    Strings that start on an earlier line are not seen; that only makes hover
    answer on text inside a multi-line string, never crash.
    """
    mask = [True] * len(line)
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == "#":
            for j in range(i, n):
                mask[j] = False
            break
        if ch in "'\"":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while j < n and line[j : j + len(quote)] != quote:
                j += 2 if line[j] == "\\" else 1
            end = min(j + len(quote), n)
            for k in range(i, end):
                mask[k] = False
            i = end
            continue
        i += 1
    return mask


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
