"""The study routes under ``tfcoach/api/study/`` (``docs/rest.md``, "Study progress"):
thin ``APIHandler`` s over the learner's :class:`~jupyterlab_tfcoach.study.StudyStore`.

Authentication, XSRF and the body's size (1 MiB) and JSON decoding are the other routes'
(``handlers.TfCoachHandler``); the shapes are checked by ``study/progress.py`` (a 400 naming
the field). Every store call does file I/O and may wait for another writer's lock (up to the
busy timeout): it runs in a thread, never on the event loop that serves every kernel.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.ioloop import IOLoop

from jupyterlab_tfcoach.course import UnknownModuleError
from jupyterlab_tfcoach.course.quiz import quiz_questions
from jupyterlab_tfcoach.course.terms import get_terms
from jupyterlab_tfcoach.server.handlers import BODY_REFUSED, TfCoachHandler
from jupyterlab_tfcoach.study import StoreBusyError, StoreUnavailableError, StudyStore
from jupyterlab_tfcoach.study.progress import (
    IMPORT_BODY,
    MATCH_BODY,
    MET_BODY,
    RESET_BODY,
    REVIEW_BODY,
    BodyError,
    Check,
    quiz_body,
    term_id,
)

SETTINGS_STUDY_STORE = "tfcoach_study_store"
MAX_DECK_TERMS = 2000
MAX_UTC_OFFSET_MINUTES = 14 * 60
T = TypeVar("T")


class _StudyHandler(TfCoachHandler):
    @property
    def store(self) -> StudyStore:
        store: StudyStore = self.settings[SETTINGS_STUDY_STORE]
        return store

    async def in_store(self, work: Callable[..., T], *args: Any) -> T | None:
        """``work(*args)`` in a thread; None once an error has been answered (503: the
        store cannot be used or stayed locked; the message says why)."""
        try:
            return await IOLoop.current().run_in_executor(None, work, *args)
        except (StoreUnavailableError, StoreBusyError) as error:
            self.json_error(503, str(error))
            return None

    async def checked_body(self, check: Check) -> Any:
        """The body, checked; ``BODY_REFUSED`` once a 400 (or 413) has been answered."""
        payload = await self.json_body()
        if payload is BODY_REFUSED:
            return BODY_REFUSED
        try:
            return check(payload, "")
        except BodyError as error:
            self.json_error(400, str(error))
            return BODY_REFUSED

    def module_argument(self) -> str | object | None:
        """The ``module`` query argument (None: every module), or ``BODY_REFUSED`` after a 400."""
        module = self.get_query_argument("module", None)
        if module is None:
            return None
        try:
            return term_id(module, "module")
        except BodyError as error:
            self.json_error(400, str(error))
            return BODY_REFUSED

    def answer(self, value: Any) -> None:
        self.finish(json.dumps(value))


class TermsHandler(_StudyHandler):
    """The course's terms (``course/terms.py``): packaged data, read once, no store."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.answer({"terms": [term.to_json() for term in get_terms()]})


class QuizQuestionsHandler(_StudyHandler):
    """A module's review questions and answers (``course/quiz.py``): packaged data, no store."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        module = self.module_argument()
        if module is BODY_REFUSED:
            return
        if module is None:
            self.json_error(400, "module is required: the id of a course module (module-01)")
            return
        module_id = str(module)
        try:
            questions = quiz_questions(module_id)
        except UnknownModuleError:
            self.json_error(404, f"no course module {module_id!r}")
            return
        self.answer({"module": module_id, "questions": [q.to_json() for q in questions]})


class DeckHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        try:
            terms = _terms(self.get_query_argument("terms", None))
            offset = _utc_offset(self.get_query_argument("utc_offset_minutes", "0"))
        except BodyError as error:
            self.json_error(400, str(error))
            return
        deck = await self.in_store(self.store.deck, terms, None, offset)
        if deck is not None:
            self.answer(deck)


class ReviewHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = await self.checked_body(REVIEW_BODY)
        if body is BODY_REFUSED:
            return
        card = await self.in_store(self.store.review, body["term"], body["rating"])
        if card is not None:
            self.answer({"card": card})


class MatchHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        module = self.module_argument()
        if module is BODY_REFUSED:
            return
        scores = await self.in_store(self.store.match_scores, module)
        if scores is not None:
            self.answer(scores)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = await self.checked_body(MATCH_BODY)
        if body is BODY_REFUSED:
            return
        saved = await self.in_store(
            self.store.record_match,
            body["module"],
            body["seconds"],
            body["mismatches"],
            body["score"],
        )
        if saved is not None:
            self.answer(saved)


class QuizHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        module = self.module_argument()
        if module is BODY_REFUSED:
            return
        scores = await self.in_store(self.store.quiz_scores, module)
        if scores is not None:
            self.answer(scores)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = await self.checked_body(quiz_body)
        if body is BODY_REFUSED:
            return
        saved = await self.in_store(
            self.store.record_quiz, body["module"], body["score"], body["total"], body["answers"]
        )
        if saved is not None:
            self.answer(saved)


class MetHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = await self.checked_body(MET_BODY)
        if body is BODY_REFUSED:
            return
        card = await self.in_store(
            self.store.mark_met, body["term"], body["source"], body["cell"], body["line"]
        )
        if card is not None:
            self.answer({"card": card})


class ExportHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        document = await self.in_store(self.store.export)
        if document is not None:
            self.set_header(
                "Content-Disposition", 'attachment; filename="tfcoach-study-progress.json"'
            )
            self.answer(document)


class ImportHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = await self.checked_body(IMPORT_BODY)
        if body is BODY_REFUSED:
            return
        counts = await self.in_store(self.store.import_progress, body["progress"])
        if counts is not None:
            self.answer({"imported": counts})


class ResetHandler(_StudyHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = await self.checked_body(RESET_BODY)
        if body is BODY_REFUSED:
            return
        counts = await self.in_store(self.store.reset)
        if counts is not None:
            self.answer({"deleted": counts})


def _terms(argument: str | None) -> list[str] | None:
    if argument is None:
        return None
    terms = [term for term in argument.split(",") if term] if argument else []
    if len(terms) > MAX_DECK_TERMS:
        raise BodyError(f"terms lists {len(terms)} ids, over the limit of {MAX_DECK_TERMS}")
    return [term_id(term, f"terms[{index}]") for index, term in enumerate(terms)]


def _utc_offset(argument: str) -> int:
    limit = MAX_UTC_OFFSET_MINUTES
    try:
        offset = int(argument)
    except ValueError:
        offset = limit + 1
    if not -limit <= offset <= limit:
        raise BodyError(
            f"utc_offset_minutes must be an integer from {-limit} to {limit} (the learner's "
            f"clock minus UTC, in minutes), not {argument[:20]!r}"
        )
    return offset


def study_handlers(base_url: str) -> list[tuple[str, type[APIHandler]]]:
    def route(name: str) -> str:
        return url_path_join(base_url, "tfcoach", "api", "study", name)

    return [
        (route("terms"), TermsHandler),
        (route("deck"), DeckHandler),
        (route("review"), ReviewHandler),
        (route("match"), MatchHandler),
        (route("quiz"), QuizHandler),
        (route("quiz-questions"), QuizQuestionsHandler),
        (route("met"), MetHandler),
        (route("export"), ExportHandler),
        (route("import"), ImportHandler),
        (route("reset"), ResetHandler),
    ]
