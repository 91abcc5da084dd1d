"""When a study card is due next: the FSRS algorithm, as the maintained ``fsrs`` library
(py-fsrs 6.x, the reference implementation of FSRS-6 by the Open Spaced Repetition
project) computes it. Nothing here reimplements the algorithm: this module only converts
between the library's ``Card`` and the plain dictionaries the store keeps.

One scheduler for every learner, with the library's documented defaults (its 21
``DEFAULT_PARAMETERS``, desired retention 0.9, learning steps of 1 and 10 minutes, one
relearning step of 10 minutes) except fuzzing, which is off: a deck of about a hundred
course terms gains nothing from spreading reviews over neighbouring days, and a learner (and
a test) sees the same due date for the same answers.

Ratings are the library's: 1 Again, 2 Hard, 3 Good, 4 Easy. Times are UTC and timezone-aware
(the library refuses others).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fsrs import Card, Rating, Scheduler, State

RATINGS = {1: "again", 2: "hard", 3: "good", 4: "easy"}
STATE_NAMES = {State.Learning: "learning", State.Review: "review", State.Relearning: "relearning"}
STATES_BY_NAME = {name: state for state, name in STATE_NAMES.items()}
# The library's card id is an int it never reads while scheduling; the store keys cards by
# term id, so every serialized card carries this one.
CARD_ID = 1

SCHEDULER = Scheduler(enable_fuzzing=False)


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """One spelling for every stored time (UTC, microseconds): strings compare as times."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(text: str) -> datetime:
    """A stored or imported ISO 8601 time with a UTC offset, as UTC; ``ValueError`` else."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no UTC offset")
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class CardState:
    """A card's FSRS memory state, as the store keeps it (``fsrs`` field names)."""

    state: str  # learning, review, relearning
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "step": self.step,
            "stability": self.stability,
            "difficulty": self.difficulty,
            "due": iso(self.due),
            "last_review": iso(self.last_review) if self.last_review else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CardState:
        """From :meth:`to_json`'s shape; ``ValueError``/``KeyError``/``TypeError`` if it is
        not one the library can schedule (checked by building the library's card)."""
        state = cls(
            state=str(data["state"]),
            step=data["step"],
            stability=data["stability"],
            difficulty=data["difficulty"],
            due=parse_time(data["due"]),
            last_review=parse_time(data["last_review"]) if data["last_review"] else None,
        )
        state.check()
        return state

    def check(self) -> None:
        """``ValueError`` for a state the library's scheduler would fail on."""
        if self.state not in STATES_BY_NAME:
            raise ValueError(f"state must be one of {sorted(STATES_BY_NAME)}, not {self.state!r}")
        in_steps = self.state in ("learning", "relearning")
        if in_steps != isinstance(self.step, int) or isinstance(self.step, bool):
            raise ValueError(
                f"a {self.state} card needs step to be {'an int' if in_steps else 'null'}"
            )
        if self.step is not None and self.step < 0:
            raise ValueError("step must not be negative")
        reviewed = self.stability is not None
        if reviewed != (self.difficulty is not None):
            raise ValueError("stability and difficulty are both numbers or both null")
        if self.state != "learning" and not reviewed:
            raise ValueError(f"a {self.state} card needs stability and difficulty")
        if self.stability is not None and not self.stability > 0:
            raise ValueError("stability must be positive")
        if self.difficulty is not None and not 1 <= self.difficulty <= 10:
            raise ValueError("difficulty must be between 1 and 10")

    def to_card(self) -> Card:
        return Card(
            card_id=CARD_ID,
            state=STATES_BY_NAME[self.state],
            step=self.step,
            stability=self.stability,
            difficulty=self.difficulty,
            due=self.due,
            last_review=self.last_review,
        )

    @classmethod
    def from_card(cls, card: Card) -> CardState:
        return cls(
            state=STATE_NAMES[card.state],
            step=card.step,
            stability=card.stability,
            difficulty=card.difficulty,
            due=card.due,
            last_review=card.last_review,
        )


def new_card(now: datetime) -> CardState:
    """A card never reviewed: due ``now``."""
    return CardState.from_card(Card(card_id=CARD_ID, due=now))


def review(card: CardState, rating: int, now: datetime) -> CardState:
    """The card after the learner rated it ``rating`` (1-4) at ``now``."""
    if rating not in RATINGS:
        raise ValueError(f"rating must be 1 (again), 2 (hard), 3 (good) or 4 (easy), not {rating}")
    reviewed, _log = SCHEDULER.review_card(card.to_card(), Rating(rating), review_datetime=now)
    return CardState.from_card(reviewed)


def end_of_day(now: datetime, utc_offset_minutes: int) -> datetime:
    """The end of the learner's day (their clock is UTC + ``utc_offset_minutes``), in UTC:
    a card due before it is due today."""
    offset = timedelta(minutes=utc_offset_minutes)
    local = now.astimezone(UTC) + offset
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return midnight - offset
