"""``GET tfcoach/api/study/quiz-questions`` (docs/rest.md) through a real jupyter_server:
a module's review questions for the course tab's quiz, authenticated, in the documented
shape; a missing, malformed or unknown module is an error with a message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.utils import url_path_join

from jupyterlab_tfcoach.course.quiz import quiz_questions
from tests.harness import on_server_loop
from tests.server.test_server_routes import Fetch, expect_error
from tests.server.test_server_study_routes import STUDY
from tests.study.schemas import problems


@pytest.fixture
def tfcoach_config(tmp_path: Path) -> dict[str, Any]:
    return {"study_db_path": str(tmp_path / "study.sqlite3")}


@pytest.fixture
def raw_fetch(http_server_client: Any, jp_base_url: str) -> Fetch:
    def fetch(*parts: str, **kwargs: Any) -> Any:
        kwargs.setdefault("raise_error", False)
        return http_server_client.fetch(url_path_join(jp_base_url, *parts), **kwargs)

    return fetch


@on_server_loop
async def test_a_module_quiz_is_its_review_questions(jp_fetch: Fetch) -> None:
    response = await jp_fetch(*STUDY, "quiz-questions", params={"module": "module-02"})
    assert response.code == 200
    answer = json.loads(response.body)
    assert problems(answer, "quizQuestionsAnswer") == []
    assert answer["module"] == "module-02"
    assert answer["questions"] == [q.to_json() for q in quiz_questions("module-02")]
    assert len(answer["questions"]) >= 5


@on_server_loop
async def test_the_quiz_needs_the_token(raw_fetch: Fetch, tmp_path: Path) -> None:
    for headers in ({}, {"Authorization": "token not-the-token"}):
        response = await raw_fetch(*STUDY, "quiz-questions?module=module-01", headers=headers)
        assert response.code == 403, response.body
        assert b"<" not in response.body
    assert not (tmp_path / "study.sqlite3").exists()


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "module is required"),
        ({"module": "Module 1"}, 400, "module must be an id"),
        ({"module": "module-99"}, 404, "no course module 'module-99'"),
    ],
)
@on_server_loop
async def test_a_quiz_of_no_module_is_an_error(
    jp_fetch: Fetch, params: dict[str, str], status: int, message: str
) -> None:
    body = await expect_error(jp_fetch, status, *STUDY, "quiz-questions", params=params)
    assert message in body["message"]
