"""The study store (``jupyterlab_tfcoach/study/store.py``): one SQLite file per learner,
schema-versioned, safe with two writers, never losing a file it cannot read."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jupyterlab_tfcoach.study import StoreUnavailableError, StudyStore
from jupyterlab_tfcoach.study.progress import IMPORT_BODY, BodyError, progress_document
from jupyterlab_tfcoach.study.scheduler import iso, new_card, review
from jupyterlab_tfcoach.study.store import SCHEMA_VERSION, migrate
from tests.study.schemas import API_SCHEMA, PROGRESS_SCHEMA, problems

NOW = datetime(2026, 5, 11, 8, 30, tzinfo=UTC)
GOOD = 3


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "learner" / "tfcoach" / "study.sqlite3"


@pytest.fixture
def store(db_path: Path) -> StudyStore:
    return StudyStore(db_path)


def user_version(path: Path) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute("PRAGMA user_version").fetchone()[0])
    finally:
        connection.close()


def aside_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("study.sqlite3.corrupt-*"))


# ------------------------------------------------------------------ the file and its schema


def test_a_new_store_is_one_private_file_at_the_latest_schema(
    store: StudyStore, db_path: Path
) -> None:
    assert store.deck(["eager-vs-graph"], NOW)["new"] == 1  # reading creates it
    assert db_path.is_file()
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700
    assert user_version(db_path) == SCHEMA_VERSION == 4
    connection = sqlite3.connect(db_path)
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
    connection.close()
    assert {"cards", "reviews", "match_scores", "quiz_scores", "met"} <= tables
    assert journal == "wal"


def test_a_version_1_file_is_migrated_to_the_latest_keeping_its_rows(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    connection = sqlite3.connect(db_path, isolation_level=None)
    assert migrate(connection, target=1) == 1
    card = review(new_card(NOW), GOOD, NOW)
    connection.execute(
        "INSERT INTO cards (term, fsrs, due, last_review, reviews) VALUES (?, ?, ?, ?, 1)",
        ("shape-mismatch", json.dumps(card.to_json()), iso(card.due), iso(NOW)),
    )
    connection.execute(
        "INSERT INTO reviews (term, rating, reviewed_at) VALUES ('shape-mismatch', 3, ?)",
        (iso(NOW),),
    )
    connection.execute(
        "INSERT INTO match_scores (module, seconds, mismatches, score, played_at) "
        "VALUES ('module-03', 31.5, 2, 84, ?)",
        (iso(NOW),),
    )
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    connection.close()
    assert "quiz_scores" not in tables and user_version(db_path) == 1

    store = StudyStore(db_path)
    deck = store.deck(["shape-mismatch"], NOW)
    assert deck["cards"][0]["state"] == "learning"
    assert deck["cards"][0]["reviews"] == 1
    assert deck["cards"][0]["due"] == iso(NOW + timedelta(minutes=10))
    assert store.match_scores("module-03")["best"]["module-03"]["score"] == 84
    assert user_version(db_path) == SCHEMA_VERSION
    saved = store.record_quiz("module-03", 4, 5, [], NOW)  # the version 2 table works
    assert saved["best"] == {"score": 4, "total": 5, "taken_at": iso(NOW)}
    exported = store.export(NOW)
    assert len(exported["reviews"]) == 1 and len(exported["match_scores"]) == 1


def test_a_version_2_file_keeps_each_score_on_its_module_after_the_renumbering(
    db_path: Path,
) -> None:
    """The course's modules were renumbered into reading order (issue #28): the Keras
    module went from module-05 to module-06, numerics from 06 to 07, tf.data from 07 to
    05; then the Keras module was split in two (its first half keeps module-06) and
    numerics went on to 08. A learner's scores follow their module, so the study tab shows
    each best score on the module it was earned on, not on the module that took its number."""
    db_path.parent.mkdir(parents=True)
    connection = sqlite3.connect(db_path, isolation_level=None)
    assert migrate(connection, target=2) == 2
    for module, score in (
        ("module-04", 70),
        ("module-05", 55),
        ("module-06", 66),
        ("module-07", 77),
    ):
        connection.execute(
            "INSERT INTO match_scores (module, seconds, mismatches, score, played_at) "
            "VALUES (?, 30.0, 1, ?, ?)",
            (module, score, iso(NOW)),
        )
        connection.execute(
            "INSERT INTO quiz_scores (module, score, total, answers, taken_at) "
            "VALUES (?, ?, 100, '[]', ?)",
            (module, score, iso(NOW)),
        )
    connection.close()

    store = StudyStore(db_path)
    matches = store.match_scores()["best"]
    quizzes = store.quiz_scores()["best"]
    assert user_version(db_path) == SCHEMA_VERSION
    # Keras (was module-05) 55, numerics (was module-06) 66, tf.data (was module-07) 77;
    # nothing lands on module-07, the training half of the Keras module, new since.
    expected = {"module-04": 70, "module-05": 77, "module-06": 55, "module-08": 66}
    assert {module: best["score"] for module, best in matches.items()} == expected
    assert {module: best["score"] for module, best in quizzes.items()} == expected
    # Opened again, nothing moves twice.
    assert StudyStore(db_path).match_scores()["best"]["module-05"]["score"] == 77


def test_a_version_3_file_moves_numerics_from_module_07_to_module_08(db_path: Path) -> None:
    """Schema 3 stored the modules in reading order, when module-07 was numerics and
    module-06 the whole Keras module. The Keras module was then split in two (issue #28):
    models and layers kept module-06, training with fit is the new module-07, numerics is
    module-08. A numerics score must not land on the new module-07."""
    db_path.parent.mkdir(parents=True)
    connection = sqlite3.connect(db_path, isolation_level=None)
    assert migrate(connection, target=3) == 3
    for module, score in (("module-05", 50), ("module-06", 60), ("module-07", 70)):
        connection.execute(
            "INSERT INTO match_scores (module, seconds, mismatches, score, played_at) "
            "VALUES (?, 30.0, 1, ?, ?)",
            (module, score, iso(NOW)),
        )
        connection.execute(
            "INSERT INTO quiz_scores (module, score, total, answers, taken_at) "
            "VALUES (?, ?, 100, '[]', ?)",
            (module, score, iso(NOW)),
        )
    connection.close()
    assert user_version(db_path) == 3

    store = StudyStore(db_path)
    expected = {"module-05": 50, "module-06": 60, "module-08": 70}
    assert {m: best["score"] for m, best in store.match_scores()["best"].items()} == expected
    assert {m: best["score"] for m, best in store.quiz_scores()["best"].items()} == expected
    assert user_version(db_path) == SCHEMA_VERSION == 4
    # A score of the new module-07 stays there, and opening again moves nothing.
    store.record_match("module-07", 20.0, 0, 90, NOW)
    again = StudyStore(db_path).match_scores()["best"]
    assert {m: best["score"] for m, best in again.items()} == {**expected, "module-07": 90}


def test_a_file_of_a_newer_schema_is_refused_and_left_alone(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    connection = sqlite3.connect(db_path)
    connection.execute("PRAGMA user_version = 9")
    connection.close()
    before = db_path.read_bytes()
    with pytest.raises(StoreUnavailableError, match="newer tfcoach"):
        StudyStore(db_path).deck(None, NOW)
    assert db_path.read_bytes() == before
    assert aside_files(db_path.parent) == []


# ------------------------------------------------------------------ two writers


def test_two_tabs_rating_at_once_lose_no_rating(db_path: Path) -> None:
    # Two stores on one file (two servers, or two tabs' requests in threads), 4 threads
    # each rating the same card 15 times: every rating is counted and logged.
    stores = [StudyStore(db_path, busy_timeout_s=30), StudyStore(db_path, busy_timeout_s=30)]
    stores[0].deck(None, NOW)  # created once, so both threads race on writes, not creation
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def rate(store: StudyStore, rating: int) -> None:
        try:
            start.wait()
            for _ in range(15):
                store.review("variable-reuse", rating)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [
        threading.Thread(target=rate, args=(stores[index % 2], 1 + index % 4)) for index in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    card = stores[1].deck(["variable-reuse"])["cards"][0]
    assert card["reviews"] == 60
    exported = stores[0].export()
    assert len(exported["reviews"]) == 60
    assert sorted({r["rating"] for r in exported["reviews"]}) == [1, 2, 3, 4]


# ------------------------------------------------------------------ damage


def test_a_file_that_is_not_a_database_is_moved_aside_and_a_new_store_started(
    store: StudyStore, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db_path.parent.mkdir(parents=True)
    garbage = b"my notes, not SQLite\n" * 300
    db_path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING):
        card = store.review("dataset-shuffle", GOOD, NOW)
    assert card["reviews"] == 1  # the rating went into a new store
    [aside] = aside_files(db_path.parent)
    assert aside.read_bytes() == garbage  # moved, never deleted
    assert user_version(db_path) == SCHEMA_VERSION
    assert "moved to" in caplog.text and aside.name in caplog.text


def test_a_corrupt_database_is_moved_aside(store: StudyStore, db_path: Path) -> None:
    store.record_match("module-02", 10.0, 1, 1, NOW)
    connection = sqlite3.connect(db_path)
    with connection:
        connection.executemany(
            "INSERT INTO met (term, source, cell, line, met_at) VALUES ('t', ?, 0, 1, '')",
            [(f"notebook-{index}.ipynb" * 20,) for index in range(300)],
        )
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    data = bytearray(db_path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[page_size : page_size * 3] = b"\xa5" * (page_size * 2)  # pages 2 and 3 overwritten
    damaged = bytes(data)
    db_path.write_bytes(damaged)

    fresh = StudyStore(db_path)  # a server started on the damaged file
    assert fresh.match_scores("module-02") == {"scores": [], "best": {}}
    asides = aside_files(db_path.parent)
    assert [path.read_bytes() for path in asides if not path.name.endswith(("-wal", "-shm"))] == [
        damaged
    ]


def test_a_file_damaged_while_the_server_runs_is_moved_aside_on_the_next_request(
    store: StudyStore, db_path: Path
) -> None:
    assert store.review("optimizer-state", GOOD, NOW)["reviews"] == 1
    db_path.write_bytes(b"overwritten by a sync tool" * 100)
    card = store.review("optimizer-state", GOOD, NOW)
    assert card["reviews"] == 1  # a new store: the old progress is in the moved file
    [aside] = [p for p in aside_files(db_path.parent) if not p.name.endswith(("-wal", "-shm"))]
    assert aside.read_bytes() == b"overwritten by a sync tool" * 100
    assert store.deck(None, NOW)["cards"][0]["term"] == "optimizer-state"


def test_a_store_locked_past_the_busy_timeout_is_moved_aside(db_path: Path) -> None:
    # Another program wrote a (rollback-journal) file, then took an exclusive lock and
    # never lets go.
    db_path.parent.mkdir(parents=True)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("CREATE TABLE theirs (x)")
    holder.execute("INSERT INTO theirs VALUES ('committed')")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO theirs VALUES ('never committed')")
    try:
        store = StudyStore(db_path, busy_timeout_s=0.2)
        assert store.review("keras-compile", GOOD, NOW)["reviews"] == 1
        assert store.deck(None, NOW)["cards"][0]["term"] == "keras-compile"
        asides = aside_files(db_path.parent)
        # The journal moved with its file: left behind, it would be rolled back into the
        # new store.
        assert [path.name.endswith("-journal") for path in asides] == [False, True]
        assert not Path(f"{db_path}-journal").exists()
    finally:
        with contextlib.suppress(sqlite3.Error):
            holder.execute("COMMIT")  # its journal moved: the stuck transaction fails
        holder.close()
    check = sqlite3.connect(asides[0])
    assert check.execute("SELECT x FROM theirs").fetchall() == [("committed",)]
    check.close()


def test_a_link_out_of_the_folder_is_never_followed(tmp_path: Path, db_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    db_path.parent.mkdir(parents=True)
    target = outside / "someone-elses.sqlite3"
    db_path.symlink_to(target)  # a dangling link: sqlite would create the target
    store = StudyStore(db_path)
    with pytest.raises(StoreUnavailableError, match="never follows a link out of its folder"):
        store.review("tensor-dtype", GOOD, NOW)
    assert not target.exists()
    assert db_path.is_symlink() and aside_files(db_path.parent) == []

    target.write_bytes(b"not ours")  # an existing target is not read or moved either
    with pytest.raises(StoreUnavailableError):
        store.deck(None, NOW)
    assert target.read_bytes() == b"not ours"

    db_path.unlink()  # the link, which the test made
    wal_target = outside / "wal"
    Path(f"{db_path}-wal").symlink_to(wal_target)
    with pytest.raises(StoreUnavailableError, match="-wal is a link"):
        StudyStore(db_path).deck(None, NOW)
    assert not wal_target.exists()


def test_a_link_inside_the_folder_is_used(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    real = db_path.parent / "progress-real.sqlite3"
    db_path.symlink_to(real.name)
    StudyStore(db_path).review("tf-function", GOOD, NOW)
    assert user_version(real) == SCHEMA_VERSION


# ------------------------------------------------------------------ export, import, reset


def fill(store: StudyStore) -> None:
    store.review("gradient-tape", GOOD, NOW)
    store.review("gradient-tape", GOOD, NOW + timedelta(minutes=11))
    store.review("retracing", 1, NOW)
    store.mark_met("numpy-in-graph", "experiments/train.ipynb", 4, 2, NOW)
    store.record_match("module-04", 55.25, 3, 61, NOW)
    store.record_quiz(
        "module-04",
        2,
        3,
        [{"question": "What does tf.function trace?", "answer": "Python", "correct": False}],
        NOW,
    )


def test_export_is_a_versioned_document_the_schema_accepts(store: StudyStore) -> None:
    fill(store)
    document = store.export(NOW)
    assert problems(document) == []
    assert document["format"] == "tfcoach.study-progress/3"
    assert [card["term"] for card in document["cards"]] == [
        "gradient-tape",
        "numpy-in-graph",
        "retracing",
    ]
    assert len(document["reviews"]) == 3
    assert document["met"][0]["source"] == "experiments/train.ipynb"


def test_import_replaces_the_progress_with_the_document(store: StudyStore, tmp_path: Path) -> None:
    fill(store)
    document = store.export(NOW)
    other = StudyStore(tmp_path / "other" / "study.sqlite3")
    other.review("keras-fit", GOOD, NOW)  # replaced
    body = IMPORT_BODY({"progress": json.loads(json.dumps(document)), "confirm": True}, "")
    counts = other.import_progress(body["progress"])
    assert counts == {"cards": 3, "reviews": 3, "match_scores": 1, "quiz_scores": 1, "met": 1}
    assert other.export(NOW) == document
    assert (
        other.deck(["gradient-tape"], NOW)["cards"] == store.deck(["gradient-tape"], NOW)["cards"]
    )


def test_a_document_exported_before_the_renumbering_keeps_its_scores_modules(
    store: StudyStore, tmp_path: Path
) -> None:
    """A ``tfcoach.study-progress/1`` file was exported when tf.data was module-07, Keras
    module-05 and numerics module-06: imported now, each score lands on its module (Keras on
    module-06, the first of its two halves; numerics on module-08)."""
    fill(store)
    document = json.loads(json.dumps(store.export(NOW)))
    document["format"] = "tfcoach.study-progress/1"
    played = document["match_scores"][0]
    document["match_scores"] = [
        {**played, "module": module, "score": score}
        for module, score in (
            ("module-04", 40),
            ("module-05", 50),
            ("module-06", 60),
            ("module-07", 70),
        )
    ]
    document["quiz_scores"][0]["module"] = "module-07"
    assert problems(document) == []  # the schema takes the older format too
    body = IMPORT_BODY({"progress": document, "confirm": True}, "")
    other = StudyStore(tmp_path / "other" / "study.sqlite3")
    other.import_progress(body["progress"])
    best = other.match_scores()["best"]
    assert {module: b["score"] for module, b in best.items()} == {
        "module-04": 40,
        "module-05": 70,
        "module-06": 50,
        "module-08": 60,
    }
    assert list(other.quiz_scores()["best"]) == ["module-05"]
    # Exported again, it is a document of today's format with today's ids.
    again = other.export(NOW)
    assert again["format"] == "tfcoach.study-progress/3"
    assert sorted(score["module"] for score in again["match_scores"]) == [
        "module-04",
        "module-05",
        "module-06",
        "module-08",
    ]
    assert again["quiz_scores"][0]["module"] == "module-05"


def test_a_document_exported_before_the_keras_split_keeps_its_scores_modules(
    store: StudyStore, tmp_path: Path
) -> None:
    """A ``tfcoach.study-progress/2`` file was exported when module-07 was numerics and
    module-06 the whole Keras module: imported now, numerics lands on module-08 (the same
    id means tf.data in a /1 file, so the format decides), Keras stays on module-06."""
    fill(store)
    document = json.loads(json.dumps(store.export(NOW)))
    document["format"] = "tfcoach.study-progress/2"
    played = document["match_scores"][0]
    document["match_scores"] = [
        {**played, "module": module, "score": score}
        for module, score in (("module-05", 50), ("module-06", 60), ("module-07", 70))
    ]
    document["quiz_scores"][0]["module"] = "module-07"
    assert problems(document) == []  # the schema takes the /2 format too
    body = IMPORT_BODY({"progress": document, "confirm": True}, "")
    other = StudyStore(tmp_path / "other" / "study.sqlite3")
    other.import_progress(body["progress"])
    best = other.match_scores()["best"]
    assert {module: b["score"] for module, b in best.items()} == {
        "module-05": 50,
        "module-06": 60,
        "module-08": 70,
    }
    assert list(other.quiz_scores()["best"]) == ["module-08"]
    assert other.export(NOW)["format"] == "tfcoach.study-progress/3"


BAD_DOCUMENTS: list[tuple[str, Any, str]] = [
    ("not an object", [], "must be a JSON object"),
    (
        "another format",
        {"format": "anki/2"},
        "format must be 'tfcoach.study-progress/3' or 'tfcoach.study-progress/2' or "
        "'tfcoach.study-progress/1'",
    ),
    ("a field missing", "drop:met", "met is missing"),
    ("an unknown field", "add:notes", "notes is not a field"),
    ("a term id with capitals", "card:term=Gradient-Tape", "cards[0].term must be an id"),
    ("a due time without offset", "card:fsrs.due=2026-05-11T08:30:00", "cards[0].fsrs.due"),
    ("a state fsrs lacks", "card:fsrs.state=mastered", "cards[0].fsrs: state must be"),
    ("a rating of 5", "review:rating=5", "reviews[0].rating must be an integer from 1 to 4"),
    ("a quiz score over its total", "quiz:score=9", "quiz_scores[0].score (9) is more"),
    ("a negative time", "match:seconds=-1", "match_scores[0].seconds must be a number"),
    ("a term listed twice", "twice", "appears twice"),
]


def spoiled(document: dict[str, Any], how: Any) -> Any:
    if not isinstance(how, str):
        return how
    document = json.loads(json.dumps(document))
    kind, _, change = how.partition(":")
    if kind == "drop":
        del document[change]
    elif kind == "add":
        document[change] = []
    elif kind == "twice":
        document["cards"].append(document["cards"][0])
    else:
        table = {"card": "cards", "review": "reviews", "quiz": "quiz_scores"}.get(
            kind, "match_scores"
        )
        field, _, value = change.partition("=")
        row = document[table][0]
        *parents, last = field.split(".")
        for parent in parents:
            row = row[parent]
        row[last] = int(value) if value.lstrip("-").isdigit() else value
    return document


@pytest.mark.parametrize(
    ("what", "how", "message"), BAD_DOCUMENTS, ids=[b[0] for b in BAD_DOCUMENTS]
)
def test_a_bad_import_is_a_clear_error_and_changes_nothing(
    store: StudyStore, what: str, how: Any, message: str
) -> None:
    fill(store)
    before = store.export(NOW)
    document = spoiled(before, how)
    with pytest.raises(BodyError) as caught:
        IMPORT_BODY({"progress": document, "confirm": True}, "")
    assert message in str(caught.value)
    assert store.export(NOW) == before
    # The schema refuses it too, but for what JSON Schema cannot say (the schema's
    # description says the server checks it).
    if what not in ("a term listed twice", "a quiz score over its total"):
        assert problems(document) != []


def test_import_and_reset_need_an_explicit_confirmation(store: StudyStore) -> None:
    fill(store)
    document = store.export(NOW)
    for confirm in ({}, {"confirm": False}, {"confirm": "yes"}):
        with pytest.raises(BodyError, match="confirm"):
            IMPORT_BODY({"progress": document, **confirm}, "")


def test_reset_deletes_every_row_and_keeps_the_file(store: StudyStore, db_path: Path) -> None:
    fill(store)
    assert store.reset() == {
        "cards": 3,
        "reviews": 3,
        "match_scores": 1,
        "quiz_scores": 1,
        "met": 1,
    }
    assert db_path.is_file()
    empty = store.export(NOW)
    assert [empty[key] for key in ("cards", "reviews", "match_scores", "quiz_scores", "met")] == [
        [],
        [],
        [],
        [],
        [],
    ]
    assert store.deck(["gradient-tape"], NOW)["new"] == 1


def test_the_schemas_are_valid_and_the_example_is_a_document_the_server_imports() -> None:
    Draft202012Validator.check_schema(PROGRESS_SCHEMA)
    Draft202012Validator.check_schema(API_SCHEMA)
    for example in PROGRESS_SCHEMA["examples"]:
        assert problems(example) == []
        progress_document(example, "progress")


# ------------------------------------------------------------------ the deck


def test_met_in_code_makes_a_term_due_now_and_keeps_its_memory(store: StudyStore) -> None:
    known = store.review("batch-shuffle", 4, NOW)  # Easy: due in 8 days
    assert known["state"] == "review" and not known["due_now"]
    later = NOW + timedelta(days=1)
    met = store.mark_met("batch-shuffle", "pipeline.py", None, 17, later)
    assert met["due"] == iso(later) and met["due_now"]
    assert met["state"] == "review" and met["reviews"] == 1
    assert met["met"] == {
        "count": 1,
        "last": {"source": "pipeline.py", "cell": None, "line": 17, "met_at": iso(later)},
    }
    deck = store.deck(["batch-shuffle", "never-seen"], later)
    assert (deck["new"], deck["due_now"], deck["due_today"]) == (1, 1, 1)


def test_due_today_counts_until_the_learners_midnight(store: StudyStore) -> None:
    evening = datetime(2026, 5, 11, 20, 0, tzinfo=UTC)
    store.review("soon", GOOD, evening)  # due 20:10 UTC
    card = store.review("tomorrow", 4, evening)  # Easy: days away
    assert card["state"] == "review"
    deck = store.deck(["soon", "tomorrow", "untouched"], evening, utc_offset_minutes=0)
    assert (deck["new"], deck["due_now"], deck["due_today"]) == (1, 0, 1)
    # At UTC-1 it is 19:00 local; at UTC+4 it is already 00:00 tomorrow: "soon" is
    # due later that day either way, "tomorrow" never today.
    for offset in (-60, 240):
        counted = store.deck(["soon", "tomorrow"], evening, utc_offset_minutes=offset)
        assert counted["due_today"] == 1
    late = store.deck(["soon"], evening, utc_offset_minutes=230)  # 23:50 local
    assert late["due_today"] == 0  # due 00:00 local tomorrow
    assert os.path.exists(store.path)
