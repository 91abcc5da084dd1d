"""Source text by line; columns in ``ast``'s bytes, in code points, in a client's units.

``ast`` reports ``col_offset`` in UTF-8 *bytes*; findings use 1-based
*character* (code point) columns. Lines are split exactly as Python's
tokenizer counts them (``\\r\\n``, ``\\r`` or ``\\n``), not with
``str.splitlines``, which also breaks on form feeds and Unicode separators
and would shift every line number after them.

Clients count columns in code units of their own encoding: the browser (JavaScript
strings) and LSP clients by default in UTF-16, where a character outside the Basic
Multilingual Plane (an emoji) takes two units; an LSP client may negotiate UTF-8 or
UTF-32. ``code_points_to_units`` and ``units_to_code_points`` are the only conversions
between the two, for the Jupyter server's routes (UTF-16) and the language server (its
``PositionCodec.client_num_units`` as the counter) alike.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import NamedTuple

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines without their terminators; a trailing newline adds no extra line."""
    # Most files use ``\n`` only: ``str.split`` is several times faster than the regex.
    lines = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


# How many code units a string takes in a client's encoding.
UnitCounter = Callable[[str], int]


def utf16_units(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (the browser's string offsets, and LSP's
    default position encoding). A lone surrogate (JSON can carry one) is one unit, as in
    JavaScript."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def code_points_to_units(line: str, index: int, units: UnitCounter = utf16_units) -> int:
    """A 0-based code-point index on ``line`` -> the client's offset, in ``units``; an
    index past the end of the line is its end, a negative one its start."""
    return units(line[: max(index, 0)])


def units_to_code_points(line: str, offset: int, units: UnitCounter = utf16_units) -> int:
    """A client's 0-based offset on ``line``, in ``units`` -> a code-point index. An
    offset inside a character (between the halves of a surrogate pair) counts as the
    index after it; one past the end of the line is the line's end."""
    count = 0
    for index, char in enumerate(line):
        if count >= offset:
            return index
        count += units(char)
    return len(line)


class Range(NamedTuple):
    """1-based line, 1-based character column; ``end_column`` is one past the end.

    (A named tuple: one is made per finding, fix and hover, and it is cheap to build.)"""

    line: int
    column: int
    end_line: int
    end_column: int


class SourceLines:
    """The analysed text with fast position conversions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)

    def line_text(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1]
        return ""

    def char_column(self, lineno: int, byte_offset: int) -> int:
        """0-based character index on ``lineno`` of a 0-based UTF-8 byte offset."""
        line = self.line_text(lineno)
        if line.isascii():
            return byte_offset
        return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))

    def node_range(self, node: ast.AST) -> Range:
        lineno: int = node.lineno  # type: ignore[attr-defined]
        end_lineno: int = node.end_lineno or lineno  # type: ignore[attr-defined]
        end_col: int = node.end_col_offset  # type: ignore[attr-defined]
        if end_col is None:
            end_col = node.col_offset  # type: ignore[attr-defined]
        return Range(
            lineno,
            self.char_column(lineno, node.col_offset) + 1,  # type: ignore[attr-defined]
            end_lineno,
            self.char_column(end_lineno, end_col) + 1,
        )

    def span_range(self, start: ast.AST, end: ast.AST) -> Range:
        """From the start of ``start`` to the end of ``end``."""
        first = self.node_range(start)
        last = self.node_range(end)
        return Range(first.line, first.column, last.end_line, last.end_column)

    def segment(self, node: ast.AST) -> str:
        """The source text of a node (like ``ast.get_source_segment``, but cached lines)."""
        return self.range_text(self.node_range(node))

    def range_text(self, span: Range) -> str:
        if span.line == span.end_line:
            return self.line_text(span.line)[span.column - 1 : span.end_column - 1]
        parts = [self.line_text(span.line)[span.column - 1 :]]
        parts.extend(self.line_text(n) for n in range(span.line + 1, span.end_line))
        parts.append(self.line_text(span.end_line)[: span.end_column - 1])
        return "\n".join(parts)


def shorten(text: str, limit: int = 60) -> str:
    """One line of source for a message: first line only, elided past ``limit``."""
    first, _, rest = text.partition("\n")
    first = first.strip()
    if rest or len(first) > limit:
        return first[: limit - 3].rstrip() + "..." if len(first) > limit else first + " ..."
    return first
