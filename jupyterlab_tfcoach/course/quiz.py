"""The course's review questions as a quiz: each module's ``## Review`` section.

A module ends with ``## Review``: questions, each a folded HTML block

    <details><summary>The question, Markdown on one line</summary>

    The model answer, Markdown paragraphs.

    </details>

(folded so that a reader of the course thinks before looking). The quiz of the course tab
(``GET tfcoach/api/study/quiz-questions?module=<id>``) shows the question, lets the learner
answer, then reveals this answer. Both stay Markdown text: the browser shows them as text
(code spans as code), never as HTML.

A Review section that does not parse (a ``<details>`` without its ``<summary>`` or its
closing tag, a question or answer left empty, text between questions) is an error naming the
module and the question, caught by the course tests, never a question silently lost.

This module imports only the standard library (the course API's rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from jupyterlab_tfcoach.course import get_course

_REVIEW_HEADING = re.compile(r"^## Review[ \t]*$", re.MULTILINE)
_NEXT_HEADING = re.compile(r"^#{1,2} ", re.MULTILINE)
_QUESTION = re.compile(
    r"<details>\s*<summary>(?P<question>.*?)</summary>(?P<answer>.*?)</details>", re.DOTALL
)


@dataclass(frozen=True)
class QuizQuestion:
    question: str
    answer: str

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer}


class QuizError(ValueError):
    """A Review section that is not a list of folded questions (the message says where)."""


def review_section(markdown: str) -> str | None:
    """The text of the ``## Review`` section (up to the next heading of level 1 or 2)."""
    heading = _REVIEW_HEADING.search(markdown)
    if heading is None:
        return None
    rest = markdown[heading.end() :]
    following = _NEXT_HEADING.search(rest)
    return rest[: following.start()] if following else rest


def parse_review(markdown: str, where: str = "the module") -> tuple[QuizQuestion, ...]:
    """The questions of a module's Markdown, in order (none without a Review section)."""
    section = review_section(markdown)
    if section is None:
        return ()
    questions: list[QuizQuestion] = []
    position = 0
    for match in _QUESTION.finditer(section):
        _nothing_between(section[position : match.start()], where, len(questions))
        number = len(questions) + 1
        question = " ".join(match["question"].split())
        answer = match["answer"].strip()
        if "<details>" in match["answer"] or "<summary>" in match["answer"]:
            raise QuizError(f"{where}, review question {number}: its </details> is missing")
        if not question:
            raise QuizError(f"{where}, review question {number}: the question is empty")
        if not answer:
            raise QuizError(f"{where}, review question {number} ({question!r}): no answer")
        questions.append(QuizQuestion(question, answer))
        position = match.end()
    _nothing_between(section[position:], where, len(questions))
    return tuple(questions)


def _nothing_between(text: str, where: str, count: int) -> None:
    stray = text.strip()
    if stray:
        raise QuizError(
            f"{where}, review section after question {count}: text outside a "
            f"<details><summary>question</summary> answer </details> block: {stray[:60]!r}"
        )


@cache
def quiz_questions(module_id: str) -> tuple[QuizQuestion, ...]:
    """A course module's review questions (``UnknownModuleError`` for an unknown id)."""
    module = get_course().module(module_id)
    return parse_review(module.markdown, module_id)
