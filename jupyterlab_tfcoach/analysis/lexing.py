"""One line of Python, split into code, string literals and a comment: the one scanner
``# noqa`` and hover cards both use (a ``#`` or a name inside a string is not code).

Strings that start on an earlier line are not seen: a line inside a multi-line string
reads as code. That only makes a hover answer on text in such a string, never crash.
"""

from __future__ import annotations


def _scan(line: str) -> tuple[list[bool], int]:
    """For each character whether it is code, and where the comment starts (-1: none)."""
    mask = [True] * len(line)
    i, n = 0, len(line)
    while i < n:
        char = line[i]
        if char == "#":
            for j in range(i, n):
                mask[j] = False
            return mask, i
        if char in "'\"":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else char
            j = i + len(quote)
            while j < n and line[j : j + len(quote)] != quote:
                j += 2 if line[j] == "\\" else 1
            end = min(j + len(quote), n)
            for k in range(i, end):
                mask[k] = False
            i = end
            continue
        i += 1
    return mask, -1


def code_mask(line: str) -> list[bool]:
    """For each character: True when it is code (not inside a string or comment)."""
    return _scan(line)[0]


def comment_start(line: str) -> int:
    """Index of the ``#`` that starts the line's comment, -1 when there is none."""
    return _scan(line)[1]
