"""A learner's study progress in one SQLite file: card states (FSRS), the review log,
match-the-pairs and quiz scores, and the terms met in the learner's own code.

Where: ``jupyter_data_dir()/tfcoach/study.sqlite3`` (per user, as Jupyter keeps its other
state; on JupyterHub each user's own data folder), or ``c.TfCoach.study_db_path``.

Schema: ``PRAGMA user_version`` is the schema version; :data:`MIGRATIONS` are applied in
order, each in its own ``BEGIN IMMEDIATE`` transaction with the version bump, so a file is
always at one version. Version 1: ``cards``, ``reviews``, ``match_scores``, ``met``;
version 2 adds ``quiz_scores``; version 3 carries the scores' module ids over to the
course's renumbering into reading order, version 4 to the split of the Keras module
(``course.MODULES_RENUMBERED``, one migration per renumbering). A file of a newer
version (a newer tfcoach wrote it) is refused, never changed.

Concurrency: every operation opens its own connection (the server runs them in threads),
in WAL mode with a busy timeout; a write is one ``BEGIN IMMEDIATE`` transaction that reads
the card, schedules it and writes it back, so two tabs rating at once both count.

Damage: a file SQLite cannot open or read (not a database, corrupt, or still locked when
the busy timeout runs out while it is being opened) is renamed
``study.sqlite3.corrupt-<UTC time>`` (with its ``-wal``/``-shm`` beside it), a warning is
logged and a new store started. Nothing is ever deleted: reset and import delete rows, not
files. The store never follows a link that leads out of its folder (the file itself, or
its ``-wal``/``-shm``/``-journal``): such a store is refused with an error saying so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from jupyterlab_tfcoach.course import MODULES_RENUMBERED, Renumbering
from jupyterlab_tfcoach.study.progress import PROGRESS_FORMAT
from jupyterlab_tfcoach.study.scheduler import (
    CardState,
    end_of_day,
    iso,
    new_card,
    review,
    utc_now,
)

DB_NAME = "study.sqlite3"
SIDE_FILES = ("-wal", "-shm", "-journal")
DEFAULT_BUSY_TIMEOUT_S = 5.0
RECENT_SCORES = 50

# SQLite's primary result codes (sqlite3.h) that mean the file itself is unusable.
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
_SQLITE_CORRUPT, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 14, 26
_DAMAGED = {_SQLITE_CORRUPT, _SQLITE_NOTADB}
_UNOPENABLE = _DAMAGED | {_SQLITE_CANTOPEN, _SQLITE_BUSY, _SQLITE_LOCKED}

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Migration:
    version: int
    what: str
    sql: str


def _renumbered(table: str, renumbering: Renumbering) -> str:
    """The statement that moves ``table``'s module ids to their numbers after ``renumbering``."""
    moves = renumbering.moves
    cases = " ".join(f"WHEN '{old}' THEN '{new}'" for old, new in moves.items())
    olds = ", ".join(f"'{old}'" for old in moves)
    return f"UPDATE {table} SET module = CASE module {cases} END WHERE module IN ({olds});\n"


def _renumbering(renumbering: Renumbering) -> str:
    return _renumbered("match_scores", renumbering) + _renumbered("quiz_scores", renumbering)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "cards, reviews, match-the-pairs scores, terms met in code",
        """
        CREATE TABLE cards (
            term TEXT PRIMARY KEY,
            fsrs TEXT NOT NULL,           -- CardState.to_json(): the library's card fields
            due TEXT NOT NULL,            -- ISO UTC, as in fsrs (indexed: due counts)
            last_review TEXT,
            reviews INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX cards_due ON cards (due);
        CREATE TABLE reviews (
            id INTEGER PRIMARY KEY,
            term TEXT NOT NULL,
            rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
            reviewed_at TEXT NOT NULL
        );
        CREATE TABLE match_scores (
            id INTEGER PRIMARY KEY,
            module TEXT NOT NULL,
            seconds REAL NOT NULL,
            mismatches INTEGER NOT NULL,
            score INTEGER NOT NULL,
            played_at TEXT NOT NULL
        );
        CREATE INDEX match_scores_module ON match_scores (module);
        CREATE TABLE met (
            id INTEGER PRIMARY KEY,
            term TEXT NOT NULL,
            source TEXT NOT NULL,
            cell INTEGER,
            line INTEGER,
            met_at TEXT NOT NULL
        );
        CREATE INDEX met_term ON met (term);
        """,
    ),
    Migration(
        2,
        "quiz scores",
        """
        CREATE TABLE quiz_scores (
            id INTEGER PRIMARY KEY,
            module TEXT NOT NULL,
            score INTEGER NOT NULL,
            total INTEGER NOT NULL,
            answers TEXT NOT NULL,        -- JSON list of {question, answer, correct}
            taken_at TEXT NOT NULL
        );
        CREATE INDEX quiz_scores_module ON quiz_scores (module);
        """,
    ),
    Migration(
        3,
        "the scores' modules renumbered into reading order (issue #28)",
        # One statement per table: every row moves from its old id at once, so a module
        # id that is both an old and a new one (module-05 -> 06, module-07 -> 05) is
        # renamed once, never twice.
        _renumbering(MODULES_RENUMBERED[0]),
    ),
    Migration(
        4,
        "the scores' modules renumbered after the Keras module's split (issue #28)",
        # Numerics, module-07 until now, is module-08; the Keras module's scores stay on
        # module-06, the first of its two halves.
        _renumbering(MODULES_RENUMBERED[1]),
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
TABLES = ("cards", "reviews", "match_scores", "quiz_scores", "met")


class StoreUnavailableError(RuntimeError):
    """The store cannot be used (a link out of its folder, a newer schema, a folder that
    cannot be written); the message says why and what to do."""


class StoreBusyError(RuntimeError):
    """Another writer held the store past the busy timeout: try again."""


def default_path() -> Path:
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "tfcoach" / DB_NAME


def migrate(connection: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply the migrations past the file's version up to ``target``; the version reached.
    ``connection`` must be in autocommit mode (``isolation_level=None``)."""
    version = _refuse_newer(connection)
    for migration in MIGRATIONS:
        if version < migration.version <= target:
            connection.execute("BEGIN IMMEDIATE")
            try:
                # Checked again inside the transaction: another process may have migrated.
                if connection.execute("PRAGMA user_version").fetchone()[0] < migration.version:
                    for statement in _statements(migration.sql):
                        connection.execute(statement)
                    connection.execute(f"PRAGMA user_version = {migration.version:d}")
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            version = migration.version
    return version


def _refuse_newer(connection: sqlite3.Connection) -> int:
    """The file's schema version; ``StoreUnavailableError`` if a newer tfcoach wrote it."""
    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreUnavailableError(
            f"the study store has schema version {version}, written by a newer tfcoach "
            f"(this one knows up to {SCHEMA_VERSION}): upgrade jupyterlab-tfcoach"
        )
    return version


def _statements(script: str) -> Iterable[str]:
    """``executescript`` would COMMIT the open transaction: statements one by one instead."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line.split("--", 1)[0] + "\n"
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""


class StudyStore:
    """One learner's progress file. Thread-safe; every method does blocking file I/O (the
    server calls them off its event loop)."""

    def __init__(self, path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> None:
        self.path = Path(os.path.abspath(os.path.expanduser(path)))
        self.folder = self.path.parent
        self.busy_timeout_s = busy_timeout_s
        self._ready = False
        self._opening = threading.Lock()
        self._generation = 0  # files moved aside so far: a damage is handled once

    # ------------------------------------------------------------------ opening, damage

    def _check_links(self) -> None:
        real_folder = os.path.realpath(self.folder)
        for name in (self.path.name, *(self.path.name + side for side in SIDE_FILES)):
            candidate = self.folder / name
            if os.path.islink(candidate):
                target = os.path.realpath(candidate)
                if os.path.dirname(target) != real_folder:
                    raise StoreUnavailableError(
                        f"{candidate} is a link to {target}, outside {self.folder}: the study "
                        "store never follows a link out of its folder; remove the link or set "
                        "c.TfCoach.study_db_path"
                    )

    def _connect(self) -> sqlite3.Connection:
        self._check_links()
        connection = sqlite3.connect(
            self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000):d}")
        return connection

    def _open(self) -> None:
        """Create or migrate the file once; a damaged or stuck one is moved aside first."""
        with self._opening:
            if self._ready:
                return
            try:
                self._prepare()
            except sqlite3.DatabaseError as error:
                if _code(error) not in _UNOPENABLE:
                    raise
                self._move_aside(error)
                self._prepare()
            self._ready = True

    def _prepare(self) -> None:
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
        except OSError as error:
            raise StoreUnavailableError(
                f"cannot create the study store's folder {self.folder}: {error}"
            ) from None
        self._check_links()
        if not os.path.lexists(self.path):
            # Created here, for this user only, never through a link (O_NOFOLLOW).
            try:
                os.close(
                    os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                )
            except FileExistsError:
                pass  # another process created it meanwhile
            except OSError as error:
                raise StoreUnavailableError(
                    f"cannot create the study store {self.path}: {error}"
                ) from None
        connection = self._connect()
        try:
            _refuse_newer(connection)  # before WAL mode, which rewrites the file's header
            connection.execute("PRAGMA journal_mode = WAL")
            check = connection.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
            migrate(connection)
        finally:
            connection.close()

    def _move_aside(self, error: BaseException) -> None:
        stamp = utc_now().strftime("%Y%m%dT%H%M%S%fZ")
        aside = f"{self.path.name}.corrupt-{stamp}"
        try:
            for side in ("", *SIDE_FILES):
                source = self.folder / (self.path.name + side)
                if os.path.lexists(source):
                    os.rename(source, self.folder / (aside + side))
        except OSError as rename_error:
            raise StoreUnavailableError(
                f"the study store {self.path} cannot be read ({error}) nor moved aside "
                f"({rename_error})"
            ) from None
        self._generation += 1
        log.warning(
            "tfcoach: the study store %s could not be read (%s); it was moved to %s and a new "
            "store started",
            self.path,
            error,
            self.folder / aside,
        )

    def _run(self, work: Callable[[sqlite3.Connection], T], write: bool) -> T:
        """``work`` in one transaction (``BEGIN IMMEDIATE`` for a write: the whole
        read-modify-write holds the write lock). A file damaged since it was opened is
        moved aside and the work done once on a new store."""
        for attempt in (1, 2):
            self._open()
            generation = self._generation
            try:
                connection = self._connect()
            except sqlite3.DatabaseError as error:
                if _code(error) not in _DAMAGED or attempt == 2:
                    raise
                self._damaged(error, generation)
                continue
            try:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                result = work(connection)
                connection.execute("COMMIT")
                return result
            except sqlite3.DatabaseError as error:
                _roll_back(connection)
                if _code(error) in (_SQLITE_BUSY, _SQLITE_LOCKED):
                    raise StoreBusyError(
                        f"the study store stayed locked by another writer for "
                        f"{self.busy_timeout_s:g} s; try again"
                    ) from None
                if _code(error) not in _DAMAGED or attempt == 2:
                    raise
                self._damaged(error, generation)
            except BaseException:
                _roll_back(connection)
                raise
            finally:
                connection.close()
        raise AssertionError("unreachable")

    def _damaged(self, error: sqlite3.DatabaseError, generation: int) -> None:
        """Move the damaged file aside, unless another thread already did since
        ``generation`` (then the file there now is the new store)."""
        with self._opening:
            if self._generation == generation:
                self._ready = False
                self._move_aside(error)

    # ------------------------------------------------------------------ cards

    def deck(
        self,
        terms: list[str] | None = None,
        now: datetime | None = None,
        utc_offset_minutes: int = 0,
    ) -> dict[str, Any]:
        """The cards of ``terms`` (in that order; a term never studied is ``new``), or of
        every term studied so far (by due time), with the counts a study tab shows."""
        now = now or utc_now()
        day_end = end_of_day(now, utc_offset_minutes)

        def read(connection: sqlite3.Connection) -> dict[str, Any]:
            rows = {row[0]: row for row in connection.execute(_CARD_ROWS)}
            met = _met_by_term(connection)
            order = (
                list(dict.fromkeys(terms))
                if terms is not None
                else sorted(rows, key=lambda term: (rows[term][2], term))
            )
            cards = [_card_json(term, rows.get(term), met.get(term), now) for term in order]
            return {
                "now": iso(now),
                "new": sum(card["state"] == "new" for card in cards),
                "due_now": sum(card["state"] != "new" and card["due_now"] for card in cards),
                "due_today": sum(
                    card["state"] != "new" and card["due"] < iso(day_end) for card in cards
                ),
                "cards": cards,
            }

        return self._run(read, write=False)

    def review(self, term: str, rating: int, now: datetime | None = None) -> dict[str, Any]:
        """Rate ``term`` (1 again ... 4 easy): its next due time, as the deck shows it."""
        now = now or utc_now()

        def write(connection: sqlite3.Connection) -> dict[str, Any]:
            row = connection.execute(_CARD_ROW, (term,)).fetchone()
            card = CardState.from_json(json.loads(row[1])) if row else new_card(now)
            reviewed = review(card, rating, now)
            reviews = (row[4] if row else 0) + 1
            _put_card(connection, term, reviewed, reviews)
            connection.execute(
                "INSERT INTO reviews (term, rating, reviewed_at) VALUES (?, ?, ?)",
                (term, rating, iso(now)),
            )
            met = _met_by_term(connection, term).get(term)
            stored = (term, json.dumps(reviewed.to_json()), iso(reviewed.due), None, reviews)
            return _card_json(term, stored, met, now)

        return self._run(write, write=True)

    def mark_met(
        self,
        term: str,
        source: str,
        cell: int | None,
        line: int | None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """The learner's code met the pitfall ``term`` names: note where, and make the
        card due now (its memory state kept; a term never studied gets a card)."""
        now = now or utc_now()

        def write(connection: sqlite3.Connection) -> dict[str, Any]:
            connection.execute(
                "INSERT INTO met (term, source, cell, line, met_at) VALUES (?, ?, ?, ?, ?)",
                (term, source, cell, line, iso(now)),
            )
            row = connection.execute(_CARD_ROW, (term,)).fetchone()
            card = CardState.from_json(json.loads(row[1])) if row else new_card(now)
            reviews = row[4] if row else 0
            if card.due > now or row is None:
                card = replace(card, due=now)
                _put_card(connection, term, card, reviews)
            met = _met_by_term(connection, term).get(term)
            stored = (term, json.dumps(card.to_json()), iso(card.due), None, reviews)
            return _card_json(term, stored, met, now)

        return self._run(write, write=True)

    # ------------------------------------------------------------------ scores

    def record_match(
        self, module: str, seconds: float, mismatches: int, score: int, now: datetime | None = None
    ) -> dict[str, Any]:
        played_at = iso(now or utc_now())

        def write(connection: sqlite3.Connection) -> dict[str, Any]:
            cursor = connection.execute(
                "INSERT INTO match_scores (module, seconds, mismatches, score, played_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (module, seconds, mismatches, score, played_at),
            )
            best = _best_matches(connection, module)[module]
            return {
                "score": _match_json((module, seconds, mismatches, score, played_at)),
                "best": best,
                "new_best": best["id"] == cursor.lastrowid,
            }

        answer = self._run(write, write=True)
        answer["best"].pop("id")
        return answer

    def match_scores(self, module: str | None = None) -> dict[str, Any]:
        def read(connection: sqlite3.Connection) -> dict[str, Any]:
            rows = connection.execute(
                "SELECT module, seconds, mismatches, score, played_at FROM match_scores "
                "WHERE ?1 IS NULL OR module = ?1 ORDER BY id DESC LIMIT ?2",
                (module, RECENT_SCORES),
            )
            best = _best_matches(connection, module)
            for row in best.values():
                row.pop("id")
            return {"scores": [_match_json(row) for row in rows], "best": best}

        return self._run(read, write=False)

    def record_quiz(
        self,
        module: str,
        score: int,
        total: int,
        answers: list[dict[str, Any]],
        now: datetime | None = None,
    ) -> dict[str, Any]:
        taken_at = iso(now or utc_now())
        row = (module, score, total, json.dumps(answers), taken_at)

        def write(connection: sqlite3.Connection) -> dict[str, Any]:
            connection.execute(
                "INSERT INTO quiz_scores (module, score, total, answers, taken_at) "
                "VALUES (?, ?, ?, ?, ?)",
                row,
            )
            return {"quiz": _quiz_json(row), "best": _best_quizzes(connection, module)[module]}

        return self._run(write, write=True)

    def quiz_scores(self, module: str | None = None) -> dict[str, Any]:
        def read(connection: sqlite3.Connection) -> dict[str, Any]:
            rows = connection.execute(
                "SELECT module, score, total, answers, taken_at FROM quiz_scores "
                "WHERE ?1 IS NULL OR module = ?1 ORDER BY id DESC LIMIT ?2",
                (module, RECENT_SCORES),
            )
            return {
                "quizzes": [_quiz_json(row) for row in rows],
                "best": _best_quizzes(connection, module),
            }

        return self._run(read, write=False)

    # ------------------------------------------------------------------ export, import, reset

    def export(self, now: datetime | None = None) -> dict[str, Any]:
        """Every row, as a ``tfcoach.study-progress/3`` document (oldest first)."""
        exported_at = iso(now or utc_now())

        def read(connection: sqlite3.Connection) -> dict[str, Any]:
            return {
                "format": PROGRESS_FORMAT,
                "exported_at": exported_at,
                "cards": [
                    {"term": term, "reviews": reviews, "fsrs": json.loads(fsrs)}
                    for term, fsrs, reviews in connection.execute(
                        "SELECT term, fsrs, reviews FROM cards ORDER BY term"
                    )
                ],
                "reviews": [
                    {"term": term, "rating": rating, "reviewed_at": at}
                    for term, rating, at in connection.execute(
                        "SELECT term, rating, reviewed_at FROM reviews ORDER BY id"
                    )
                ],
                "match_scores": [
                    _match_json(row)
                    for row in connection.execute(
                        "SELECT module, seconds, mismatches, score, played_at "
                        "FROM match_scores ORDER BY id"
                    )
                ],
                "quiz_scores": [
                    _quiz_json(row)
                    for row in connection.execute(
                        "SELECT module, score, total, answers, taken_at FROM quiz_scores "
                        "ORDER BY id"
                    )
                ],
                "met": [
                    {"term": t, "source": s, "cell": c, "line": ln, "met_at": at}
                    for t, s, c, ln, at in connection.execute(
                        "SELECT term, source, cell, line, met_at FROM met ORDER BY id"
                    )
                ],
            }

        return self._run(read, write=False)

    def import_progress(self, document: dict[str, Any]) -> dict[str, int]:
        """Replace all progress with a document :func:`progress.progress_document` checked
        (times as datetimes), in one transaction; the number of rows of each table."""

        def write(connection: sqlite3.Connection) -> dict[str, int]:
            _delete_all(connection)
            for card in document["cards"]:
                _put_card(connection, card["term"], card["fsrs"], card["reviews"])
            connection.executemany(
                "INSERT INTO reviews (term, rating, reviewed_at) VALUES (?, ?, ?)",
                [(r["term"], r["rating"], iso(r["reviewed_at"])) for r in document["reviews"]],
            )
            connection.executemany(
                "INSERT INTO match_scores (module, seconds, mismatches, score, played_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (m["module"], m["seconds"], m["mismatches"], m["score"], iso(m["played_at"]))
                    for m in document["match_scores"]
                ],
            )
            connection.executemany(
                "INSERT INTO quiz_scores (module, score, total, answers, taken_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        q["module"],
                        q["score"],
                        q["total"],
                        json.dumps(q["answers"]),
                        iso(q["taken_at"]),
                    )
                    for q in document["quiz_scores"]
                ],
            )
            connection.executemany(
                "INSERT INTO met (term, source, cell, line, met_at) VALUES (?, ?, ?, ?, ?)",
                [
                    (m["term"], m["source"], m["cell"], m["line"], iso(m["met_at"]))
                    for m in document["met"]
                ],
            )
            return _counts(connection)

        return self._run(write, write=True)

    def reset(self) -> dict[str, int]:
        """Delete every row (the file stays); the number of rows each table had."""

        def write(connection: sqlite3.Connection) -> dict[str, int]:
            counts = _counts(connection)
            _delete_all(connection)
            return counts

        return self._run(write, write=True)


_CARD_ROWS = "SELECT term, fsrs, due, last_review, reviews FROM cards"
_CARD_ROW = _CARD_ROWS + " WHERE term = ?"


def _code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        # quick_check's own finding, raised by _prepare
        return _SQLITE_CORRUPT if str(error).startswith("quick_check") else None
    return int(code) & 0xFF


def _roll_back(connection: sqlite3.Connection) -> None:
    """End a failed transaction; a damaged file may refuse even that (the error that
    matters is the one being handled)."""
    with contextlib.suppress(sqlite3.Error):
        if connection.in_transaction:
            connection.execute("ROLLBACK")


def _put_card(connection: sqlite3.Connection, term: str, card: CardState, reviews: int) -> None:
    connection.execute(
        "INSERT INTO cards (term, fsrs, due, last_review, reviews) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (term) DO UPDATE SET fsrs = excluded.fsrs, due = excluded.due, "
        "last_review = excluded.last_review, reviews = excluded.reviews",
        (
            term,
            json.dumps(card.to_json()),
            iso(card.due),
            iso(card.last_review) if card.last_review else None,
            reviews,
        ),
    )


def _card_json(
    term: str, row: tuple[Any, ...] | None, met: dict[str, Any] | None, now: datetime
) -> dict[str, Any]:
    met_json = met or {"count": 0, "last": None}
    if row is None:
        return {
            "term": term,
            "state": "new",
            "due": iso(now),
            "due_now": True,
            "last_review": None,
            "reviews": 0,
            "met": met_json,
        }
    fsrs = json.loads(row[1])
    return {
        "term": term,
        "state": fsrs["state"],
        "due": fsrs["due"],
        "due_now": fsrs["due"] <= iso(now),
        "last_review": fsrs["last_review"],
        "reviews": row[4],
        "met": met_json,
    }


def _met_by_term(connection: sqlite3.Connection, term: str | None = None) -> dict[str, Any]:
    """Per term: how often its pitfall was met in the learner's code, and the last place."""
    found: dict[str, Any] = {}
    for t, count, source, cell, line, at in connection.execute(
        "SELECT term, COUNT(*), source, cell, line, MAX(met_at) FROM met "
        "WHERE ?1 IS NULL OR term = ?1 GROUP BY term",
        (term,),
    ):
        found[t] = {
            "count": count,
            "last": {"source": source, "cell": cell, "line": line, "met_at": at},
        }
    return found


def _match_json(row: tuple[Any, ...]) -> dict[str, Any]:
    module, seconds, mismatches, score, played_at = row
    return {
        "module": module,
        "seconds": seconds,
        "mismatches": mismatches,
        "score": score,
        "played_at": played_at,
    }


def _best_matches(connection: sqlite3.Connection, module: str | None) -> dict[str, Any]:
    """Per module, the best game: the highest score, then the fastest, then the first."""
    best: dict[str, Any] = {}
    for row in connection.execute(
        "SELECT id, module, seconds, mismatches, score, played_at FROM match_scores "
        "WHERE ?1 IS NULL OR module = ?1 ORDER BY module, score DESC, seconds, id",
        (module,),
    ):
        if row[1] not in best:
            best[row[1]] = {**_match_json(row[1:]), "id": row[0]}
    return best


def _quiz_json(row: tuple[Any, ...]) -> dict[str, Any]:
    module, score, total, answers, taken_at = row
    return {
        "module": module,
        "score": score,
        "total": total,
        "answers": json.loads(answers),
        "taken_at": taken_at,
    }


def _best_quizzes(connection: sqlite3.Connection, module: str | None) -> dict[str, Any]:
    """Per module, the best quiz: the highest share right, then the first taken."""
    best: dict[str, Any] = {}
    for module_id, score, total, taken_at in connection.execute(
        "SELECT module, score, total, taken_at FROM quiz_scores "
        "WHERE ?1 IS NULL OR module = ?1 ORDER BY module, CAST(score AS REAL) / total DESC, id",
        (module,),
    ):
        best.setdefault(module_id, {"score": score, "total": total, "taken_at": taken_at})
    return best


def _counts(connection: sqlite3.Connection) -> dict[str, int]:
    return {
        table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES
    }


def _delete_all(connection: sqlite3.Connection) -> None:
    for table in TABLES:
        connection.execute(f"DELETE FROM {table}")
