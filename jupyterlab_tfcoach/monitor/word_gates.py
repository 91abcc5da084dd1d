"""Cheap substring tests in front of the regular expressions that gate the checks.

Most checks run only on a cell holding their words, tested with one regular expression
(``WANTED.search(source)``). An alternation such as ``length|\\bls\\b|bandwidth`` is tried
at every position of the cell (~20 us for a 16-line cell), and a cell is read by about a
hundred of them. ``WordGate`` reads, once, from the pattern's own syntax tree, literal
strings of which every match must hold at least one (``ls`` and ``bandwidth`` ... above);
a cell holding none of them cannot match, which ``str.__contains__`` tells in well under a
microsecond each. Otherwise the pattern itself searches, so the result is always the
pattern's own. Patterns with no such literals (a character class alone, a lookaround) and
text that is not ASCII (where a case-insensitive letter matches other letters: ``ſ`` and
``s``) always go to the pattern.
"""

from __future__ import annotations

import re
from re import _constants as codes  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]
from typing import Any

# More literals than this make the substring tests cost what the pattern does.
_MAX_LITERALS = 24
_ZERO_WIDTH = (codes.AT,)
_REPEATS = (codes.MAX_REPEAT, codes.MIN_REPEAT, codes.POSSESSIVE_REPEAT)


def _best(choices: list[frozenset[str]]) -> frozenset[str] | None:
    """Of several literal sets each of which every match must meet, the one that rules
    out most: the longest shortest literal, then the fewest literals."""
    if not choices:
        return None
    return max(choices, key=lambda found: (min(len(w) for w in found), -len(found)))


def _required(items: Any) -> frozenset[str] | None:
    """Literals every match of the sequence ``items`` holds at least one of, or None."""
    choices: list[frozenset[str]] = []
    run: list[str] = []

    def end_run() -> None:
        if run:
            choices.append(frozenset({"".join(run)}))
            run.clear()

    for op, argument in items:
        if op is codes.LITERAL:
            run.append(chr(argument))
            continue
        if op in _ZERO_WIDTH:
            continue  # a boundary or an anchor matches no text: the run goes on
        end_run()
        found: frozenset[str] | None = None
        if op is codes.SUBPATTERN:
            found = _required(argument[-1])
        elif op is codes.ATOMIC_GROUP:
            found = _required(argument)
        elif op is codes.BRANCH:
            branches = [_required(branch) for branch in argument[1]]
            if all(b is not None for b in branches):
                found = frozenset().union(*branches)  # type: ignore[arg-type]
        elif op in _REPEATS and argument[0] >= 1:
            found = _required(argument[2])
        if found is not None and len(found) <= _MAX_LITERALS:
            choices.append(found)
    end_run()
    return _best(choices)


def required_literals(pattern: re.Pattern[str]) -> tuple[frozenset[str], bool] | None:
    """Literals of which every match of ``pattern`` holds one, and whether they must be
    looked for in lower case (the pattern ignores case somewhere); None when the pattern
    has none."""
    if not isinstance(pattern.pattern, str):
        return None
    try:
        tree = parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return None
    found = _required(list(tree))
    # A letter outside ASCII may match an ASCII one when case is ignored (``K``, ``k``).
    if not found or any(not word or not word.isascii() for word in found):
        return None
    folded = bool(pattern.flags & re.IGNORECASE) or "(?i" in pattern.pattern
    return (frozenset(w.lower() for w in found) if folded else found), folded


class WordGate:
    """A compiled pattern whose ``search`` first asks whether the text holds any literal
    every match needs; every other method is the pattern's own."""

    __slots__ = ("_folded", "_literals", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        required = required_literals(pattern)
        self._literals: tuple[str, ...] = tuple(sorted(required[0])) if required else ()
        self._folded = required[1] if required else False

    def could_match(self, text: str) -> bool:
        """False only when no match is possible (no required literal in ``text``)."""
        if not self._literals or not text.isascii():
            return True
        haystack = text.lower() if self._folded else text
        return any(word in haystack for word in self._literals)

    def search(self, text: str, *args: Any) -> re.Match[str] | None:
        if not args and type(text) is str and not self.could_match(text):
            return None
        return self.pattern.search(text, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pattern, name)


def word_gate(pattern: str | re.Pattern[str] | WordGate, flags: int = 0) -> WordGate:
    """``re.compile`` for a gate pattern, with the substring tests in front of ``search``
    (a compiled pattern or a gate is taken as it is)."""
    if isinstance(pattern, WordGate):
        return pattern
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, flags)
    return WordGate(compiled)
