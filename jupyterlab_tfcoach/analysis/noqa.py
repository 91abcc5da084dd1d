"""``# noqa`` comments: which findings a line suppresses (ruff/flake8 spelling)."""

from __future__ import annotations

import re

from jupyterlab_tfcoach.analysis.lexing import comment_start

# A bare "noqa" comment, or "noqa: TFC001, TFC002" (ruff/flake8 spelling, any case).
_NOQA = re.compile(r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def noqa_codes(line: str) -> frozenset[str] | None:
    """None: no noqa; empty set: bare ``# noqa`` (everything); else the codes listed."""
    if "noqa" not in line.lower():
        return None
    start = comment_start(line)
    if start < 0:
        return None
    match = _NOQA.search(line, start)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(code.upper() for code in re.split(r"[\s,]+", codes) if code)


def is_suppressed(line: str, code: str) -> bool:
    codes = noqa_codes(line)
    return codes is not None and (not codes or code in codes)
