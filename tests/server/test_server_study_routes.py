"""The study routes (``tfcoach/api/study/...``, docs/rest.md "Study progress") through a real
jupyter_server (pytest-jupyter, under its ``/a%40b/`` base URL), on a store file per test."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from jupyter_core.paths import jupyter_data_dir
from jupyter_server.utils import url_path_join
from tornado.httpclient import HTTPResponse

from jupyterlab_tfcoach.server.extension import TfCoach, study_store
from jupyterlab_tfcoach.server.handlers import MAX_ANALYZE_BYTES
from jupyterlab_tfcoach.server.study_routes import SETTINGS_STUDY_STORE
from tests.harness import on_server_loop
from tests.server.test_server_routes import Fetch, expect_error
from tests.study.schemas import problems

STUDY = ("tfcoach", "api", "study")


@pytest.fixture
def study_db(tmp_path: Path) -> Path:
    return tmp_path / "hub-home" / "learner" / "study.sqlite3"


@pytest.fixture
def tfcoach_config(study_db: Path) -> dict[str, Any]:
    return {"study_db_path": str(study_db)}


@pytest.fixture
def raw_fetch(http_server_client: Any, jp_base_url: str) -> Fetch:
    """A request under the base URL with no token, never raising on HTTP errors."""

    def fetch(*parts: str, **kwargs: Any) -> Awaitable[HTTPResponse]:
        kwargs.setdefault("raise_error", False)
        kwargs.setdefault("request_timeout", 20)
        return http_server_client.fetch(url_path_join(jp_base_url, *parts), **kwargs)

    return fetch


async def get(fetch: Fetch, route: str, **params: str) -> dict[str, Any]:
    response = await fetch(*STUDY, route, params=params or None)
    assert response.code == 200
    answer: dict[str, Any] = json.loads(response.body)
    return answer


async def post(fetch: Fetch, route: str, payload: Any) -> dict[str, Any]:
    response = await fetch(*STUDY, route, method="POST", body=json.dumps(payload))
    assert response.code == 200
    answer: dict[str, Any] = json.loads(response.body)
    return answer


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "deck", None),
    ("POST", "review", {"term": "loss-reduction", "rating": 3}),
    ("GET", "match", None),
    ("POST", "match", {"module": "module-01", "seconds": 20, "mismatches": 0, "score": 100}),
    ("GET", "quiz", None),
    ("POST", "quiz", {"module": "module-01", "score": 1, "total": 1, "answers": []}),
    ("POST", "met", {"term": "loss-reduction", "source": "a.py", "cell": None, "line": 3}),
    ("GET", "export", None),
    ("POST", "reset", {"confirm": True}),
]


@pytest.mark.parametrize(("method", "route", "payload"), ROUTES)
@on_server_loop
async def test_every_study_route_needs_the_token(
    jp_fetch: Fetch, raw_fetch: Fetch, method: str, route: str, payload: Any, study_db: Path
) -> None:
    if payload is not None:
        assert problems(payload, f"{route}Request") == []  # the documented shape
    body = json.dumps(payload) if payload is not None else None
    for headers in ({}, {"Authorization": "token not-the-token"}):
        response = await raw_fetch(*STUDY, route, method=method, body=body, headers=headers)
        assert response.code == 403, (headers, response.body)
        assert b"<" not in response.body
    assert not study_db.exists()  # refused before the store was touched
    response = await jp_fetch(*STUDY, route, method=method, body=body, raise_error=False)
    assert response.code == 200, response.body


@on_server_loop
async def test_a_rating_with_a_login_cookie_needs_xsrf(jp_fetch: Fetch, raw_fetch: Fetch) -> None:
    response = await jp_fetch(*STUDY, "deck")
    login = SimpleCookie()
    for header in response.headers.get_list("Set-Cookie"):
        login.load(header)
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in login.items())
    body = json.dumps({"term": "keras-layers", "rating": 4})
    refused = await raw_fetch(
        *STUDY, "review", method="POST", body=body, headers={"Cookie": cookie}
    )
    assert refused.code == 403
    assert (await get(jp_fetch, "deck", terms="keras-layers"))["cards"][0]["state"] == "new"
    headers = {"Cookie": f"{cookie}; _xsrf=5eed", "X-XSRFToken": "5eed"}
    accepted = await raw_fetch(*STUDY, "review", method="POST", body=body, headers=headers)
    assert accepted.code == 200, accepted.body


def noon_offset() -> str:
    """A learner's UTC offset (in minutes) that puts their clock near noon now, so that a
    card due in ten minutes is due today whatever the hour in UTC (near UTC midnight it
    would not be, for a learner in UTC)."""
    now = datetime.now(UTC)
    minutes = now.hour * 60 + now.minute
    return str((12 * 60 - minutes + 12 * 60) % (24 * 60) - 12 * 60)


@on_server_loop
async def test_a_rating_is_saved_scheduled_and_survives_a_restart(
    jp_fetch: Fetch, jp_serverapp: Any, study_db: Path
) -> None:
    offset = noon_offset()
    deck = await get(
        jp_fetch, "deck", terms="tape-watch,variable-trainable", utc_offset_minutes=offset
    )
    assert problems(deck, "deckAnswer") == []
    assert (deck["new"], deck["due_now"], deck["due_today"]) == (2, 0, 0)

    answer = await post(jp_fetch, "review", {"term": "tape-watch", "rating": 3})
    assert problems(answer, "cardAnswer") == []
    card = answer["card"]
    # A new card rated Good waits for FSRS's second learning step: 10 minutes.
    assert card["state"] == "learning" and card["reviews"] == 1 and not card["due_now"]
    assert when(card["due"]) - when(card["last_review"]) == timedelta(minutes=10)
    assert study_db.is_file()

    # The server extension starts again: a new store on the same file.
    old_store = jp_serverapp.web_app.settings[SETTINGS_STUDY_STORE]
    new_store = study_store(TfCoach(parent=jp_serverapp))
    assert new_store is not old_store and new_store.path == study_db
    jp_serverapp.web_app.settings[SETTINGS_STUDY_STORE] = new_store
    deck = await get(
        jp_fetch, "deck", terms="tape-watch,variable-trainable", utc_offset_minutes=offset
    )
    assert deck["cards"][0] == {**card, "due_now": False}
    assert (deck["new"], deck["due_now"], deck["due_today"]) == (1, 0, 1)
    every = await get(jp_fetch, "deck")  # without terms: every card studied
    assert [c["term"] for c in every["cards"]] == ["tape-watch"]


@on_server_loop
async def test_the_default_store_is_in_the_jupyter_data_folder(jp_serverapp: Any) -> None:
    store = study_store(TfCoach(parent=jp_serverapp, study_db_path=None))
    assert store.path == Path(jupyter_data_dir()) / "tfcoach" / "study.sqlite3"


@on_server_loop
async def test_met_in_code_makes_the_term_due_now(jp_fetch: Fetch) -> None:
    await post(jp_fetch, "review", {"term": "dataset-cache", "rating": 4})  # Easy: days away
    deck = await get(jp_fetch, "deck", terms="dataset-cache")
    assert deck["due_now"] == 0 and deck["cards"][0]["state"] == "review"
    met = {"term": "dataset-cache", "source": "pipelines/load.ipynb", "cell": 2, "line": 5}
    answer = await post(jp_fetch, "met", met)
    assert problems(answer, "cardAnswer") == []
    assert answer["card"]["due_now"] and answer["card"]["state"] == "review"
    assert answer["card"]["met"]["count"] == 1
    assert answer["card"]["met"]["last"]["source"] == "pipelines/load.ipynb"
    deck = await get(jp_fetch, "deck", terms="dataset-cache")
    assert (deck["due_now"], deck["due_today"]) == (1, 1)


@on_server_loop
async def test_match_and_quiz_scores_keep_the_best(jp_fetch: Fetch) -> None:
    first = {"module": "module-05", "seconds": 48.0, "mismatches": 4, "score": 60}
    better = {"module": "module-05", "seconds": 39.5, "mismatches": 1, "score": 90}
    worse = {"module": "module-05", "seconds": 70.0, "mismatches": 9, "score": 20}
    answers = [await post(jp_fetch, "match", game) for game in (first, better, worse)]
    for answer in answers:
        assert problems(answer, "matchAnswer") == []
    assert [a["new_best"] for a in answers] == [True, True, False]
    assert answers[2]["best"]["score"] == 90
    listing = await get(jp_fetch, "match", module="module-05")
    assert problems(listing, "matchScoresAnswer") == []
    assert [s["score"] for s in listing["scores"]] == [20, 90, 60]  # newest first
    assert listing["best"]["module-05"]["seconds"] == 39.5

    quiz = {
        "module": "module-05",
        "score": 2,
        "total": 4,
        "answers": [{"question": "Which op copies?", "answer": "tf.identity", "correct": True}],
    }
    saved = await post(jp_fetch, "quiz", quiz)
    assert problems(saved, "quizAnswer") == []
    await post(jp_fetch, "quiz", {**quiz, "score": 3})
    quizzes = await get(jp_fetch, "quiz")
    assert problems(quizzes, "quizScoresAnswer") == []
    assert [q["score"] for q in quizzes["quizzes"]] == [3, 2]
    assert quizzes["best"]["module-05"]["score"] == 3
    assert quizzes["quizzes"][1]["answers"] == quiz["answers"]


@on_server_loop
async def test_export_import_and_reset(jp_fetch: Fetch) -> None:
    await post(jp_fetch, "review", {"term": "graph-mode", "rating": 2})
    await post(
        jp_fetch, "match", {"module": "module-02", "seconds": 30, "mismatches": 2, "score": 70}
    )
    response = await jp_fetch(*STUDY, "export")
    assert "attachment" in response.headers["Content-Disposition"]
    exported = json.loads(response.body)
    assert problems(exported, "exportAnswer") == []
    assert [c["term"] for c in exported["cards"]] == ["graph-mode"]

    # Reset needs its confirmation, then empties the store.
    await expect_error(jp_fetch, 400, *STUDY, "reset", method="POST", body="{}")
    assert (await get(jp_fetch, "deck"))["cards"] != []
    reset = await post(jp_fetch, "reset", {"confirm": True})
    assert problems(reset, "resetAnswer") == []
    assert reset["deleted"]["cards"] == 1 and reset["deleted"]["match_scores"] == 1
    assert (await get(jp_fetch, "deck"))["cards"] == []

    # Importing the export brings everything back.
    body = {"progress": exported, "confirm": True}
    assert problems(body, "importRequest") == []
    imported = await post(jp_fetch, "import", body)
    assert problems(imported, "importAnswer") == []
    assert imported["imported"]["cards"] == 1 and imported["imported"]["reviews"] == 1
    again = json.loads((await jp_fetch(*STUDY, "export")).body)
    assert {**again, "exported_at": None} == {**exported, "exported_at": None}


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("review", b"not json", "not valid JSON"),
    ("review", b"\xff\xfe", "not UTF-8"),
    ("review", [], "must be a JSON object"),
    ("review", {"term": "tape-watch"}, "rating is missing"),
    ("review", {"term": "tape-watch", "rating": 5}, "rating must be an integer from 1 to 4"),
    ("review", {"term": "tape-watch", "rating": True}, "rating must be an integer"),
    ("review", {"term": "../etc/passwd", "rating": 3}, "term must be an id"),
    ("review", {"term": "x" * 81, "rating": 3}, "term must be an id of 1 to 80"),
    ("review", {"term": "ok", "rating": 3, "extra": 1}, "extra is not a field"),
    ("match", {"module": "m", "seconds": -2, "mismatches": 0, "score": 1}, "seconds must be"),
    ("quiz", {"module": "m", "score": 5, "total": 4, "answers": []}, "score (5) is more"),
    ("met", {"term": "t", "source": "", "cell": None, "line": None}, "source must be a string"),
    ("reset", {"confirm": "yes"}, "confirm must be true"),
    ("import", {"progress": {"format": "anki"}, "confirm": True}, "progress.format must be"),
]


@pytest.mark.parametrize(("route", "payload", "message"), BAD_BODIES)
@on_server_loop
async def test_a_malformed_body_is_a_400_that_says_why_and_changes_nothing(
    jp_fetch: Fetch, route: str, payload: Any, message: str
) -> None:
    if not isinstance(payload, bytes) and "(5) is more" not in message:
        # The schema refuses it too (JSON Schema cannot compare score with total).
        assert problems(payload, f"{route}Request") != []
    await post(jp_fetch, "review", {"term": "kept", "rating": 3})
    before = json.loads((await jp_fetch(*STUDY, "export")).body)
    body = payload if isinstance(payload, bytes) else json.dumps(payload)
    error = await expect_error(jp_fetch, 400, *STUDY, route, method="POST", body=body)
    assert message in error["message"]
    after = json.loads((await jp_fetch(*STUDY, "export")).body)
    assert {**after, "exported_at": None} == {**before, "exported_at": None}


@pytest.mark.parametrize(
    ("route", "params", "message"),
    [
        ("deck", {"terms": "ok,Not-Ok"}, "terms[1] must be an id"),
        ("deck", {"terms": ",".join(f"t{i}" for i in range(2001))}, "over the limit of 2000"),
        ("deck", {"utc_offset_minutes": "noon"}, "utc_offset_minutes must be an integer"),
        ("deck", {"utc_offset_minutes": "900"}, "from -840 to 840"),
        ("match", {"module": "Module 1"}, "module must be an id"),
        ("quiz", {"module": ""}, "module must be an id"),
    ],
)
@on_server_loop
async def test_a_bad_query_is_a_400(
    jp_fetch: Fetch, route: str, params: dict[str, str], message: str
) -> None:
    error = await expect_error(jp_fetch, 400, *STUDY, route, params=params)
    assert message in error["message"]


@on_server_loop
async def test_an_import_over_1_mib_is_refused_before_it_is_read(jp_fetch: Fetch) -> None:
    await post(jp_fetch, "review", {"term": "kept", "rating": 3})
    over = b"{" + b" " * MAX_ANALYZE_BYTES + b"}"
    error = await expect_error(jp_fetch, 413, *STUDY, "import", method="POST", body=over)
    assert "over the limit" in error["message"]
    assert [c["term"] for c in (await get(jp_fetch, "deck"))["cards"]] == ["kept"]


@on_server_loop
async def test_a_store_behind_a_link_out_of_its_folder_is_a_503_that_says_why(
    jp_fetch: Fetch, study_db: Path, tmp_path: Path
) -> None:
    study_db.parent.mkdir(parents=True)
    study_db.symlink_to(tmp_path / "shared-volume.sqlite3")
    error = await expect_error(jp_fetch, 503, *STUDY, "deck")
    assert "never follows a link out of its folder" in error["message"]
    assert not (tmp_path / "shared-volume.sqlite3").exists()


@on_server_loop
async def test_a_damaged_store_is_moved_aside_and_study_goes_on(
    jp_fetch: Fetch, study_db: Path
) -> None:
    study_db.parent.mkdir(parents=True)
    study_db.write_bytes(b"\x00garbage" * 64)
    answer = await post(jp_fetch, "review", {"term": "fresh-start", "rating": 3})
    assert answer["card"]["reviews"] == 1
    [aside] = study_db.parent.glob("study.sqlite3.corrupt-*")
    assert aside.read_bytes() == b"\x00garbage" * 64
