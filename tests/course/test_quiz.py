"""The course's review questions as quizzes (``course/quiz.py``): every module has one of at
least five questions, each with its answer; a Review section that does not parse is an error
naming the question, never a question silently lost."""

from __future__ import annotations

import pytest

from jupyterlab_tfcoach.course import UnknownModuleError, get_course
from jupyterlab_tfcoach.course.quiz import QuizError, parse_review, quiz_questions

MODULE_IDS = [module.id for module in get_course().modules]


@pytest.mark.parametrize("module_id", MODULE_IDS)
def test_every_module_has_a_quiz_of_at_least_five_answered_questions(module_id: str) -> None:
    questions = quiz_questions(module_id)
    assert len(questions) >= 5
    markdown = get_course().module(module_id).markdown
    review = markdown[markdown.index("## Review") :]
    assert len(questions) == review.count("<details>")  # every folded question, none lost
    for question in questions:
        assert question.question and question.answer
        assert "<" + "summary>" not in question.question and "</details>" not in question.answer
        # What POST study/quiz takes back (study/progress.py: texts of 1 to 1000 characters).
        assert len(question.question) <= 1000 and len(question.answer) <= 1000
        assert question.question in review and question.answer in review


def test_a_question_keeps_its_markdown_on_one_line_and_its_answer_paragraphs() -> None:
    markdown = """# Module

## Something

<details><summary>Not a review question</summary>

No.

</details>

## Review

<details><summary>What does `tf.cast`
return?</summary>

A new tensor.

Of the new dtype.

</details>

<details><summary>Second?</summary>
Yes.
</details>

## Appendix

<details><summary>Not one either</summary>No.</details>
"""
    questions = parse_review(markdown)
    assert [q.to_json() for q in questions] == [
        {
            "question": "What does `tf.cast` return?",
            "answer": "A new tensor.\n\nOf the new dtype.",
        },
        {"question": "Second?", "answer": "Yes."},
    ]
    assert parse_review("# No review here\n") == ()


@pytest.mark.parametrize(
    ("review", "problem"),
    [
        ("<details><summary>Q?</summary>\n\n</details>", "question 1 ('Q?'): no answer"),
        ("<details><summary> </summary>A.</details>", "question 1: the question is empty"),
        (
            "<details><summary>Q?</summary>A.\n<details><summary>R?</summary>B.</details>",
            "question 1: its </details> is missing",
        ),
        (
            "<details><summary>Q?</summary>A.</details>\nA stray paragraph.",
            "after question 1: text outside",
        ),
    ],
)
def test_a_review_section_that_does_not_parse_names_the_question(review: str, problem: str) -> None:
    with pytest.raises(QuizError, match=r"module-xy, review") as caught:
        parse_review(f"# M\n\n## Review\n\n{review}\n", "module-xy")
    assert problem in str(caught.value)


def test_an_unknown_module_has_no_quiz() -> None:
    with pytest.raises(UnknownModuleError):
        quiz_questions("module-99")
