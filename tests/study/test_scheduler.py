"""When a card is due after each rating: the ``fsrs`` library (FSRS-6) with its documented
defaults, fuzzing off. Expected times are computed here from the FSRS-6 formulas and the
default parameters as the library documents them, not by calling the scheduler again."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import fsrs
import pytest

from jupyterlab_tfcoach.study import scheduler

# py-fsrs 6.x README / fsrs.scheduler: the default FSRS-6 parameters w0..w20, desired
# retention 0.9, learning steps (1 min, 10 min), relearning steps (10 min).
W = (
    0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
    1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
)  # fmt: skip
RETENTION = 0.9
DECAY = -W[20]
FACTOR = 0.9 ** (1 / DECAY) - 1
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4


def interval_days(stability: float) -> int:
    """FSRS-6: I = S / FACTOR * (r^(1/DECAY) - 1), whole days, at least 1."""
    return max(1, round(stability / FACTOR * (RETENTION ** (1 / DECAY) - 1)))


def initial_difficulty(rating: int) -> float:
    return min(max(W[4] - math.exp(W[5] * (rating - 1)) + 1, 1.0), 10.0)


def next_difficulty(difficulty: float, rating: int) -> float:
    damped = difficulty + (10 - difficulty) * (-W[6] * (rating - 3)) / 9
    easy = W[4] - math.exp(W[5] * 3) + 1  # D0(Easy), unclamped, the mean-reversion target
    return min(max(W[7] * easy + (1 - W[7]) * damped, 1.0), 10.0)


def test_the_library_is_the_documented_fsrs_6() -> None:
    # The version pyproject.toml asks for, and the parameters this file's expectations use.
    assert fsrs.Scheduler().parameters == W
    assert scheduler.SCHEDULER.desired_retention == RETENTION
    assert scheduler.SCHEDULER.enable_fuzzing is False


@pytest.mark.parametrize(
    ("rating", "state", "after"),
    [
        (AGAIN, "learning", timedelta(minutes=1)),  # back to the first learning step
        (HARD, "learning", timedelta(minutes=5.5)),  # halfway between the two steps
        (GOOD, "learning", timedelta(minutes=10)),  # the second learning step
        (EASY, "review", timedelta(days=interval_days(W[3]))),  # S0(Easy) = w3: 8 days
    ],
)
def test_a_new_card_is_due_as_the_documented_defaults_say(
    rating: int, state: str, after: timedelta
) -> None:
    card = scheduler.review(scheduler.new_card(START), rating, START)
    assert card.state == state
    assert card.due == START + after
    assert card.last_review == START
    assert card.stability == pytest.approx(W[rating - 1])
    assert card.difficulty == pytest.approx(initial_difficulty(rating))


def test_good_twice_the_same_day_then_good_after_its_interval() -> None:
    first = scheduler.review(scheduler.new_card(START), GOOD, START)
    second_at = START + timedelta(minutes=10)
    second = scheduler.review(first, GOOD, second_at)
    # Same-day review: S' = S * max(e^(w17 * w18) * S^-w19, 1) (Good: rating - 3 = 0).
    stability = W[2] * max(math.exp(W[17] * W[18]) * W[2] ** -W[19], 1.0)
    difficulty = next_difficulty(initial_difficulty(GOOD), GOOD)
    assert second.state == "review"
    assert second.stability == pytest.approx(stability)
    assert second.due == second_at + timedelta(days=interval_days(stability))

    third_at = second.due
    third = scheduler.review(second, GOOD, third_at)
    elapsed = (third_at - second_at).days
    retrievability = (1 + FACTOR * elapsed / stability) ** DECAY
    recalled = stability * (
        1
        + math.exp(W[8])
        * (11 - difficulty)
        * stability ** -W[9]
        * (math.exp((1 - retrievability) * W[10]) - 1)
    )
    assert third.state == "review"
    assert third.stability == pytest.approx(recalled)
    assert third.due == third_at + timedelta(days=interval_days(recalled))
    assert third.due - third_at > second.due - second_at  # remembered: a longer interval


def test_again_on_a_review_card_sends_it_to_relearning_for_ten_minutes() -> None:
    known = scheduler.review(scheduler.new_card(START), EASY, START)
    lapse_at = known.due
    lapsed = scheduler.review(known, AGAIN, lapse_at)
    assert lapsed.state == "relearning"
    assert lapsed.due == lapse_at + timedelta(minutes=10)


@pytest.mark.parametrize("rating", [0, 5, -1])
def test_a_rating_outside_1_to_4_is_refused(rating: int) -> None:
    with pytest.raises(ValueError, match="rating must be 1"):
        scheduler.review(scheduler.new_card(START), rating, START)


def test_a_card_state_round_trips_through_its_json() -> None:
    card = scheduler.review(scheduler.new_card(START), GOOD, START)
    assert scheduler.CardState.from_json(card.to_json()) == card


@pytest.mark.parametrize(
    ("offset_minutes", "end_utc"),
    [
        (0, datetime(2026, 3, 3, 0, 0, tzinfo=UTC)),
        (120, datetime(2026, 3, 2, 22, 0, tzinfo=UTC)),  # UTC+2: 11:00 local
        (-600, datetime(2026, 3, 2, 10, 0, tzinfo=UTC)),  # UTC-10: 23:00 on the 1st
    ],
)
def test_the_learners_day_ends_at_their_midnight(offset_minutes: int, end_utc: datetime) -> None:
    assert scheduler.end_of_day(START, offset_minutes) == end_utc
