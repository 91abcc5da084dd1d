"""Whether an argument meets the shape its documentation states (issue #25).

A quoted requirement such as "Shape is `[..., M, M]`", "A 1-D tensor", "4-D Tensor of
shape `[batch, height, width, channels]` or 3-D Tensor of shape `[height, width,
channels]`" is checked against the argument's shape, and the sizes its letters take are
shared across the arguments of one call (``indices`` "`[N, ndims]`" and ``values``
"`[N]`" must agree on ``N``). Each quote gets a verdict: ``VIOLATED`` (a rank outside
the stated ones, a fixed size that differs, one letter with two sizes), ``MET`` (every
sentence states a shape and the argument has it: nothing to tell), or ``OPEN`` (a
requirement that cannot be checked from shapes: sorted values, a sum). Only the text and
shapes are read; nothing is computed from values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

VIOLATED = "violated"
MET = "met"
OPEN = "open"

Shape = tuple[int | None, ...]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")
_PATTERN = re.compile(r"`[\[(]([^`\[\]()]*)[\])]`")
_RANK = re.compile(r"\b(\d)-D\b")
_LETTER = re.compile(r"^[A-Za-z_]\w*$")
# Words of a shape the documentation leaves open.
_OPEN_DIMS = frozenset({"None", "batch", "batch_size"})


@dataclass
class ShapeCheck:
    """The sizes the documentation's letters took, across one call's arguments."""

    sizes: dict[str, tuple[int, str]] = field(default_factory=dict)  # letter -> (size, source)
    conflicts: dict[str, list[str]] = field(default_factory=dict)  # source -> notes
    partners: set[str] = field(default_factory=set)  # sources whose sizes were refuted later

    def verdict(self, quote: str, shape: Shape | None, source: str) -> str:
        """``VIOLATED``, ``MET`` or ``OPEN`` for ``quote`` and the argument's shape."""
        if shape is None:
            return OPEN
        verdicts = [self._sentence(s, shape, source) for s in _SENTENCE_END.split(quote) if s]
        if VIOLATED in verdicts:
            return VIOLATED
        return MET if verdicts and all(v == MET for v in verdicts) else OPEN

    def explained(self, quote: str, source: str) -> str | None:
        """What the check found, for the entry: a letter with two sizes, or the sizes the
        quote's letters took from another argument (```nvals` is 6 here, from
        `flat_scores```)."""
        notes = list(self.conflicts.get(source, []))
        for letter in re.findall(r"`(\w+)`", quote):
            known = self.sizes.get(letter)
            if known is not None and known[1] != source and len(notes) < 3:
                note = f"`{letter}` is {known[0]} here, from `{known[1]}`"
                if note not in notes:
                    notes.append(note)
        return "; ".join(notes) if notes else None

    def _sentence(self, sentence: str, shape: Shape, source: str) -> str:
        patterns = [
            [part.strip() for part in found.group(1).split(",") if part.strip()]
            for found in _PATTERN.finditer(sentence)
        ]
        ranks = {int(found.group(1)) for found in _RANK.finditer(sentence)}
        patterns = [p for p in patterns if p and all(_is_dim(part) for part in p)]
        if not patterns and not ranks:
            return OPEN
        if ranks and len(shape) not in ranks and not _has_ellipsis(patterns):
            return VIOLATED
        if not patterns:
            return MET
        if len(patterns) == 1:
            return self._bind(patterns[0], shape, source)
        # Alternatives ("4-D ... or 3-D ..."): met when one fits, letters not kept.
        fits = [_fits(pattern, shape) for pattern in patterns]
        return MET if any(fits) else VIOLATED

    def _bind(self, pattern: list[str], shape: Shape, source: str) -> str:
        pairs = _aligned(pattern, shape)
        if pairs is None:
            self.conflicts.setdefault(source, []).append(
                f"the documentation's shape has {_count(pattern)} axes, `{source}` has {len(shape)}"
            )
            return VIOLATED
        verdict = MET
        local: dict[str, int] = {}
        for part, size in pairs:
            if size is None or part in _OPEN_DIMS:
                continue
            if part.isdigit():
                if int(part) != size:
                    verdict = VIOLATED
                continue
            if part in local and local[part] != size:
                self.conflicts.setdefault(source, []).append(
                    f"`{part}` would be both {local[part]} and {size} in `{source}`"
                )
                verdict = VIOLATED
                continue
            local[part] = size
            known = self.sizes.get(part)
            if known is not None and known[1] != source and known[0] != size:
                self.conflicts.setdefault(source, []).append(
                    f"`{part}` is {known[0]} in `{known[1]}` but {size} in `{source}`"
                )
                self.partners.add(known[1])
                verdict = VIOLATED
            elif known is None:
                self.sizes[part] = (size, source)
        return verdict


def _is_dim(part: str) -> bool:
    return part in ("...", "…") or part.isdigit() or bool(_LETTER.match(part))


def _has_ellipsis(patterns: list[list[str]]) -> bool:
    return any("..." in pattern for pattern in patterns)


def _count(pattern: list[str]) -> str:
    fixed = len([part for part in pattern if part != "..."])
    return f"at least {fixed}" if "..." in pattern else str(fixed)


def _aligned(pattern: list[str], shape: Shape) -> list[tuple[str, int | None]] | None:
    """The pattern's parts paired with the shape's sizes (an ellipsis takes any number of
    leading axes); None when the ranks cannot agree."""
    if "..." in pattern:
        at = pattern.index("...")
        head, tail = pattern[:at], pattern[at + 1 :]
        if len(shape) < len(head) + len(tail):
            return None
        return list(zip(head, shape[: len(head)], strict=True)) + list(
            zip(tail, shape[len(shape) - len(tail) :], strict=True)
        )
    if len(pattern) != len(shape):
        return None
    return list(zip(pattern, shape, strict=True))


def _fits(pattern: list[str], shape: Shape) -> bool:
    pairs = _aligned(pattern, shape)
    if pairs is None:
        return False
    local: dict[str, int] = {}
    for part, size in pairs:
        if size is None or part in _OPEN_DIMS:
            continue
        if part.isdigit():
            if int(part) != size:
                return False
        elif local.setdefault(part, size) != size:
            return False
    return True
