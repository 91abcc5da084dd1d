"""The shapes the study tools take in: request bodies of the study routes and the progress
document of export/import (``schema/study-progress.schema.json``, ``schema/study-api.schema.json``,
``docs/rest.md``). Checked here, in plain Python, because the schema files are not part of the
installed package; ``tests/study/test_store.py`` checks that the schema and these checks agree.

Every check raises :class:`BodyError` naming the field at fault (``cards[2].fsrs.due: ...``),
so a bad import or request is a clear 400 and changes nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from jupyterlab_tfcoach.course import MODULE_NUMBERING, module_id_now
from jupyterlab_tfcoach.study.scheduler import CardState, parse_time

# Format ``tfcoach.study-progress/<n + 1>`` was written in the course's module numbering
# ``n`` (``course.MODULES_RENUMBERED``): the same fields, its scores' module ids those of
# that numbering (read in, they are carried over to today's). /1 was written before the
# modules were put in reading order, /2 before the Keras module was split in two.
PROGRESS_FORMATS = {
    f"tfcoach.study-progress/{numbering + 1}": numbering
    for numbering in range(MODULE_NUMBERING + 1)
}
PROGRESS_FORMAT = f"tfcoach.study-progress/{MODULE_NUMBERING + 1}"
ID_PATTERN = re.compile(r"[a-z0-9-]{1,80}")
# The times the schema's "time" takes (Python's fromisoformat also takes other spellings).
TIME_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})")
MAX_TEXT = 1000  # a quiz question or answer
MAX_SOURCE = 4096  # a file's path or a notebook's name (PATH_MAX)
MAX_ANSWERS = 200
MAX_SECONDS = 24 * 3600.0
MAX_COUNT = 1_000_000

Check = Callable[[Any, str], Any]


class BodyError(ValueError):
    """A request body or a progress document that is not what the study tools take."""


def term_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise BodyError(
            f"{where} must be an id of 1 to 80 characters a-z, 0-9 and '-', not {_shown(value)}"
        )
    return value


def integer(low: int, high: int) -> Check:
    def check(value: Any, where: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise BodyError(f"{where} must be an integer from {low} to {high}, not {_shown(value)}")
        return value

    return check


def number(low: float, high: float) -> Check:
    def check(value: Any, where: str) -> float:
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
            or not low <= value <= high
        ):
            raise BodyError(
                f"{where} must be a number from {low:g} to {high:g}, not {_shown(value)}"
            )
        return float(value)

    return check


def text(limit: int) -> Check:
    def check(value: Any, where: str) -> str:
        if not isinstance(value, str) or not 1 <= len(value) <= limit or "\x00" in value:
            raise BodyError(f"{where} must be a string of 1 to {limit} characters (no NUL)")
        return value

    return check


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise BodyError(f"{where} must be true or false, not {_shown(value)}")
    return value


def confirmed(value: Any, where: str) -> bool:
    if value is not True:
        raise BodyError(f"{where} must be true: this replaces or erases the saved progress")
    return True


def time(value: Any, where: str) -> datetime:
    try:
        if not isinstance(value, str) or not TIME_PATTERN.fullmatch(value):
            raise ValueError(value)
        return parse_time(value)
    except ValueError:
        raise BodyError(
            f"{where} must be an ISO 8601 time with a UTC offset "
            f"(2026-01-31T09:00:00+00:00), not {_shown(value)}"
        ) from None


def nullable(check: Check) -> Check:
    def nullable_check(value: Any, where: str) -> Any:
        return None if value is None else check(value, where)

    return nullable_check


def list_of(check: Check, limit: int) -> Check:
    def list_check(value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise BodyError(f"{where} must be a list")
        if len(value) > limit:
            raise BodyError(f"{where} has {len(value)} items, over the limit of {limit}")
        return [check(item, f"{where}[{index}]") for index, item in enumerate(value)]

    return list_check


def obj(fields: dict[str, Check], optional: dict[str, Check] | None = None) -> Check:
    """An object with exactly these keys (``optional`` ones may be absent: None)."""
    optional = optional or {}

    def object_check(value: Any, where: str) -> dict[str, Any]:
        prefix = f"{where}." if where else ""
        if not isinstance(value, dict):
            expected = ", ".join(f'"{key}"' for key in fields)
            raise BodyError(f"{where or 'the body'} must be a JSON object with {expected}")
        unknown = sorted(set(value) - set(fields) - set(optional))
        if unknown:
            raise BodyError(f"{prefix}{unknown[0]} is not a field here")
        checked: dict[str, Any] = {}
        for key, check in fields.items():
            if key not in value:
                raise BodyError(f"{prefix}{key} is missing")
            checked[key] = check(value[key], f"{prefix}{key}")
        for key, check in optional.items():
            checked[key] = check(value[key], f"{prefix}{key}") if key in value else None
        return checked

    return object_check


def card_state(value: Any, where: str) -> CardState:
    shape = obj(
        {
            "state": text(20),
            "step": nullable(integer(0, 1000)),
            "stability": nullable(number(0, 1e9)),
            "difficulty": nullable(number(1, 10)),
            "due": time,
            "last_review": nullable(time),
        }
    )
    fields = shape(value, where)
    try:
        state = CardState(**fields)
        state.check()
    except ValueError as error:
        raise BodyError(f"{where}: {error}") from None
    return state


def _quiz_answer(value: Any, where: str) -> dict[str, Any]:
    return obj({"question": text(MAX_TEXT), "answer": text(MAX_TEXT), "correct": boolean})(
        value, where
    )


REVIEW_BODY = obj({"term": term_id, "rating": integer(1, 4)})
MATCH_FIELDS: dict[str, Check] = {
    "module": term_id,
    "seconds": number(0, MAX_SECONDS),
    "mismatches": integer(0, MAX_COUNT),
    "score": integer(0, MAX_COUNT),
}
MATCH_BODY = obj(MATCH_FIELDS)
QUIZ_FIELDS: dict[str, Check] = {
    "module": term_id,
    "score": integer(0, 1000),
    "total": integer(1, 1000),
    "answers": list_of(_quiz_answer, MAX_ANSWERS),
}
QUIZ_BODY = obj(QUIZ_FIELDS)
MET_FIELDS: dict[str, Check] = {
    "term": term_id,
    "source": text(MAX_SOURCE),
    "cell": nullable(integer(0, MAX_COUNT)),
    "line": nullable(integer(1, 10 * MAX_COUNT)),
}
MET_BODY = obj(MET_FIELDS)
RESET_BODY = obj({"confirm": confirmed})

_CARD_ENTRY = obj({"term": term_id, "reviews": integer(0, 10 * MAX_COUNT), "fsrs": card_state})
_REVIEW_ENTRY = obj({"term": term_id, "rating": integer(1, 4), "reviewed_at": time})
_MATCH_ENTRY = obj({**MATCH_FIELDS, "played_at": time})
_QUIZ_ENTRY = obj({**QUIZ_FIELDS, "taken_at": time})
_MET_ENTRY = obj({**MET_FIELDS, "met_at": time})
MAX_ROWS = 200_000


def progress_document(value: Any, where: str) -> dict[str, Any]:
    """A checked progress document (the export's shape): its rows, times as datetimes."""
    if isinstance(value, dict) and value.get("format") not in PROGRESS_FORMATS:
        older = " or ".join(repr(name) for name in reversed(PROGRESS_FORMATS))
        raise BodyError(
            f"{where}.format must be {older} (a document exported by tfcoach), "
            f"not {_shown(value.get('format'))}"
        )
    document = obj(
        {
            "format": text(100),
            "exported_at": time,
            "cards": list_of(_CARD_ENTRY, MAX_ROWS),
            "reviews": list_of(_REVIEW_ENTRY, MAX_ROWS),
            "match_scores": list_of(_MATCH_ENTRY, MAX_ROWS),
            "quiz_scores": list_of(_QUIZ_ENTRY, MAX_ROWS),
            "met": list_of(_MET_ENTRY, MAX_ROWS),
        }
    )(value, where)
    seen: set[str] = set()
    for index, card in enumerate(document["cards"]):
        if card["term"] in seen:
            raise BodyError(f"{where}.cards[{index}].term {card['term']!r} appears twice")
        seen.add(card["term"])
    for index, quiz in enumerate(document["quiz_scores"]):
        _check_quiz_total(quiz, f"{where}.quiz_scores[{index}]")
    numbering = PROGRESS_FORMATS[document["format"]]
    if numbering != MODULE_NUMBERING:
        # Its module ids name the modules as they were numbered then.
        for score in (*document["match_scores"], *document["quiz_scores"]):
            score["module"] = module_id_now(score["module"], numbering)
        document["format"] = PROGRESS_FORMAT
    return document


IMPORT_BODY = obj({"progress": progress_document, "confirm": confirmed})


def quiz_body(value: Any, where: str) -> dict[str, Any]:
    quiz = QUIZ_BODY(value, where)
    _check_quiz_total(quiz, where)
    return quiz


def _check_quiz_total(quiz: dict[str, Any], where: str) -> None:
    prefix = f"{where}." if where else ""
    if quiz["score"] > quiz["total"]:
        raise BodyError(f"{prefix}score ({quiz['score']}) is more than total ({quiz['total']})")


def _shown(value: Any, limit: int = 60) -> str:
    """A value for an error message, short (a body may be a megabyte)."""
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
