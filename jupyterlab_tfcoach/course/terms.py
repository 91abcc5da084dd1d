"""The course's terms as data: what the study tools (Memory Deck, Match the Pairs) show.

Each module has one file ``terms/<module-id>.json``: a list of terms
``{"id", "term", "definition", "section", "prerequisites", "see_also"}``. ``definition`` is
one or two sentences in our own words; ``section`` is the id of the course section that
teaches the term (section ids are stable across regroupings of the modules, so a term names
its section, never a module); ``prerequisites`` and ``see_also`` are term ids of any module.

A term's id is also its card id in the learner's study progress (``study/``, the same
``[a-z0-9-]{1,80}`` rule), so ids are never renamed. :func:`terms_for_section` is the link
from a rule or an error explanation (which name a section) to the cards that become due
when the learner meets the pitfall (``POST tfcoach/api/study/met``).

This module imports only the standard library (the course API's rule).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

TERMS_DIR = Path(__file__).parent / "terms"


@dataclass(frozen=True)
class Term:
    id: str
    module_id: str  # the file it comes from
    term: str
    definition: str
    section_id: str
    prerequisites: tuple[str, ...]
    see_also: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The term as ``GET tfcoach/api/study/terms`` answers it (docs/rest.md)."""
        return {
            "id": self.id,
            "module": self.module_id,
            "term": self.term,
            "definition": self.definition,
            "section": self.section_id,
            "prerequisites": list(self.prerequisites),
            "see_also": list(self.see_also),
        }


class TermsError(ValueError):
    """A terms file that is not a list of terms (the message names the file and the field)."""


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TermsError(f"{where} must be a list of term ids")
    return tuple(value)


def _parse_term(entry: Any, module_id: str, where: str) -> Term:
    if not isinstance(entry, dict):
        raise TermsError(f"{where} must be an object")
    for key in ("id", "term", "definition", "section"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise TermsError(f"{where}.{key} must be a non-empty string")
    unknown = set(entry) - {"id", "term", "definition", "section", "prerequisites", "see_also"}
    if unknown:
        raise TermsError(f"{where} has unknown fields: {', '.join(sorted(unknown))}")
    return Term(
        id=entry["id"],
        module_id=module_id,
        term=entry["term"],
        definition=entry["definition"],
        section_id=entry["section"],
        prerequisites=_strings(entry.get("prerequisites", []), f"{where}.prerequisites"),
        see_also=_strings(entry.get("see_also", []), f"{where}.see_also"),
    )


def load_terms(directory: Path = TERMS_DIR) -> tuple[Term, ...]:
    """Every term of every ``<module-id>.json`` in ``directory``, in module then file order.

    Checks the shape only; that ids are unique and every link resolves is the course's
    test (``tests/course/test_terms.py``), as for section ids.
    """
    terms: list[Term] = []
    for path in sorted(directory.glob("*.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(entries, list):
            raise TermsError(f"{path.name} must hold a list of terms")
        terms.extend(
            _parse_term(entry, path.stem, f"{path.name}[{index}]")
            for index, entry in enumerate(entries)
        )
    return tuple(terms)


@lru_cache(maxsize=1)
def get_terms() -> tuple[Term, ...]:
    return load_terms()


def terms_for_section(section_id: str) -> tuple[Term, ...]:
    """The terms a section teaches, in file order (empty for a section without terms)."""
    return tuple(term for term in get_terms() if term.section_id == section_id)
