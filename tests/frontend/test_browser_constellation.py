"""The Concept Constellation and a module's quiz in JupyterLab, as a learner uses them
(headless Chromium).

Opened with one click from a course tab (its code and its graph library loaded only then);
every term is a node and an entry of the list beside it; a search brings a term into view
and opens its definition; a click on the canvas opens the term under it (in the mode the
browser can draw: 3D with WebGL, then the 2D view too; a page without WebGL gets the 2D
view, the 3D library never fetched); the definition's link opens its section in the
course tab; a term rated in the Memory Deck shows its mastery. The Help menu and the palette
open it too.

A module's quiz, from its course tab: each review question, the learner's answer, the model
answer revealed, a self-rating; the finished score saved and shown as the best after a reload.

The server serves THIS checkout's build (see ``study_pages.py``) with a fresh store.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.quiz import quiz_questions
from jupyterlab_tfcoach.course.terms import get_terms
from tests.frontend.notebook_page import new_page
from tests.frontend.study_pages import (
    BUILD,
    StudyPage,
    click_the_centred_term,
    details_show,
    open_lab,
    served_build,
    served_study_server,
    study_page_session,
)
from tests.harness import LabServer

pytestmark = pytest.mark.browser

MODULE = "module-01"
ALL_TERMS = get_terms()
# A term of another module than the tab it is opened from, with a section in the course.
SEARCHED = next(term for term in ALL_TERMS if term.module_id == "module-03")
RATED = next(term for term in ALL_TERMS if term.module_id == "module-02")
VIEW = "#tfcoach-constellation"


@pytest.fixture(scope="module")
def constellation_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab loading this checkout's labextension build, with a fresh study store."""
    yield from served_study_server(tmp_path_factory, "constellation-lab")


@pytest.fixture(scope="module")
def constellation_page(browser: Any, constellation_server: LabServer) -> Iterator[StudyPage]:
    yield from study_page_session(browser, constellation_server)


def rate(server: LabServer, term_id: str, rating: int) -> None:
    """Rate a card as the Memory Deck does (``POST study/review``)."""
    request = urllib.request.Request(
        server.api_url("tfcoach/api/study/review"),
        data=json.dumps({"term": term_id, "rating": rating}).encode(),
        method="POST",
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def test_the_page_runs_this_checkouts_build(constellation_page: StudyPage) -> None:
    entries = [path.name for path in (BUILD / "static").glob("remoteEntry.*.js")]
    assert served_build(constellation_page.page) == f"static/{entries[0]}", entries


def test_the_graph_libraries_are_not_in_the_main_bundle() -> None:
    static = BUILD / "static"
    main = "".join(path.read_text() for path in static.glob("lib_index_js.*.js"))
    assert "study_constellation" in main  # the chunk is named there, loaded on demand
    assert "ForceGraph" not in main and "WebGLRenderer" not in main
    chunks = [path.name for path in static.glob("*force-graph*.js") if path.suffix == ".js"]
    assert any("3d-force-graph" in name for name in chunks), chunks
    assert any("_force-graph_dist" in name for name in chunks), chunks


def test_a_searched_term_opens_its_definition_and_its_section(
    constellation_page: StudyPage,
) -> None:
    page = constellation_page.page
    rate(constellation_page.server, RATED.id, 3)
    constellation_page.open_module(MODULE)
    assert not [url for url in constellation_page.requested if "constellation" in url]
    assert not [url for url in constellation_page.requested if "force-graph" in url]

    constellation_page.toolbar_button(MODULE, "Constellation").click()  # one click
    view = page.locator(VIEW)
    canvas = view.locator(".jp-tfcoach-constellation-canvas[data-mode]")
    canvas.wait_for(state="attached", timeout=30_000)
    mode = canvas.get_attribute("data-mode")
    assert mode in {"2d", "3d"}
    library = "3d-force-graph" if mode == "3d" else "_force-graph_dist"
    assert [url for url in constellation_page.requested if "study_constellation" in url]
    assert [url for url in constellation_page.requested if library in url]
    assert canvas.locator("canvas").count() >= 1
    # Every term in the accessible list, each a button; the rated one shows its mastery.
    buttons = view.locator(".jp-tfcoach-constellation-list button[data-term]")
    assert buttons.count() == len(ALL_TERMS)
    rated = view.locator(f".jp-tfcoach-constellation-list li[data-term='{RATED.id}']")
    assert "(learning)" in rated.inner_text()
    fresh = view.locator(f".jp-tfcoach-constellation-list li[data-term='{SEARCHED.id}']")
    assert "(not studied yet)" in fresh.inner_text()

    # The search box has the focus: type, Enter.
    page.keyboard.type(SEARCHED.term)
    assert fresh.is_visible()
    assert view.locator(".jp-tfcoach-constellation-list li[data-term]:visible").count() < len(
        ALL_TERMS
    )
    page.keyboard.press("Enter")
    details_show(page, SEARCHED.term)
    details = view.locator(".jp-tfcoach-constellation-details")
    assert SEARCHED.definition in details.inner_text()
    assert details.locator("script, img").count() == 0

    # Brought into view: a click on the canvas's centre opens the term that is there.
    click_the_centred_term(page, SEARCHED.id)
    details_show(page, SEARCHED.term)
    if mode == "3d":  # and the 2D view, which browsers without WebGL get, does the same
        view.locator(".jp-tfcoach-constellation-mode", has_text="2D view").click()
        view.locator(".jp-tfcoach-constellation-canvas[data-mode='2d']").wait_for(
            state="attached", timeout=15_000
        )
        search = view.locator(".jp-tfcoach-constellation-search")
        search.fill(SEARCHED.term)
        search.press("Enter")
        click_the_centred_term(page, SEARCHED.id)
        details_show(page, SEARCHED.term)

    details.locator(".jp-tfcoach-deck-section").click()
    section = next(s for s in get_course().sections if s.id == SEARCHED.section_id)
    constellation_page.wait_for_heading_at_top(section.module_id, section.title)
    assert constellation_page.log.errors() == []


def test_the_list_opens_a_definition_from_the_keyboard(constellation_page: StudyPage) -> None:
    page = constellation_page.page
    page.evaluate("() => window.jupyterapp.commands.execute('tfcoach:open-constellation')")
    view = page.locator(VIEW)
    button = view.locator(f".jp-tfcoach-constellation-list button[data-term='{RATED.id}']")
    button.focus()
    page.keyboard.press("Enter")
    details_show(page, RATED.term)
    assert page.evaluate("() => document.activeElement.tagName") == "H3"  # read out next
    assert "learning" in view.locator(".jp-tfcoach-constellation-meta").inner_text()
    # Its neighbours are buttons too: one of them opens the next definition.
    linked = view.locator(".jp-tfcoach-constellation-links button").first
    if linked.count():
        name = linked.inner_text()
        linked.focus()
        page.keyboard.press("Enter")
        details_show(page, name)


def test_the_help_menu_and_the_palette_open_it(constellation_page: StudyPage) -> None:
    page = constellation_page.page
    page.evaluate("() => window.jupyterapp.shell.currentWidget.close()")
    page.locator(VIEW).wait_for(state="detached", timeout=10_000)
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Help").click()
    page.locator(".lm-Menu-itemLabel", has_text="TF Coach: Concept Constellation").click()
    page.locator(f"{VIEW} .jp-tfcoach-constellation-canvas[data-mode]").wait_for(
        state="attached", timeout=30_000
    )
    page.evaluate("() => window.jupyterapp.shell.currentWidget.close()")
    page.locator(VIEW).wait_for(state="detached", timeout=10_000)
    constellation_page.run_from_palette("TF Coach: Concept Constellation")
    page.locator(VIEW).wait_for(state="visible", timeout=10_000)
    # Match the Pairs is in the Help menu as well.
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Help").click()
    page.locator(".lm-Menu-itemLabel", has_text="TF Coach: Match the Pairs").click()
    page.locator("#tfcoach-match-module-01 .jp-tfcoach-match-tile").first.wait_for(
        state="visible", timeout=15_000
    )
    assert constellation_page.log.errors() == []


def test_without_webgl_the_2d_view_is_drawn_and_works_the_same(
    browser: Any, constellation_server: LabServer
) -> None:
    context, page, log = new_page(browser)
    # A browser that cannot draw WebGL (as some VMs and remote desktops): no context.
    page.add_init_script(
        """(() => {
             const getContext = HTMLCanvasElement.prototype.getContext;
             HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
               return /webgl/i.test(String(kind)) ? null : getContext.call(this, kind, ...rest);
             };
           })()"""
    )
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    try:
        open_lab(page, constellation_server)
        page.evaluate("() => window.jupyterapp.commands.execute('tfcoach:open-constellation')")
        view = page.locator(VIEW)
        view.locator(".jp-tfcoach-constellation-canvas[data-mode='2d']").wait_for(
            state="attached", timeout=30_000
        )
        assert not [url for url in requested if "3d-force-graph" in url]  # never fetched
        assert view.locator(".jp-tfcoach-constellation-mode").is_disabled()
        term = next(t for t in ALL_TERMS if t.module_id == "module-04")
        search = view.locator(".jp-tfcoach-constellation-search")
        search.fill(term.term)
        search.press("Enter")
        details_show(page, term.term)
        click_the_centred_term(page, term.id)
        details_show(page, term.term)
        assert log.errors() == []
    finally:
        context.close()


QUIZ_MODULE = "module-02"


def test_a_quiz_is_answered_revealed_rated_and_its_score_kept(
    constellation_page: StudyPage,
) -> None:
    page = constellation_page.page
    questions = quiz_questions(QUIZ_MODULE)
    constellation_page.open_module(QUIZ_MODULE)
    constellation_page.toolbar_button(QUIZ_MODULE, "Quiz").click()  # one click
    quiz = page.locator(f"#tfcoach-quiz-{QUIZ_MODULE}")
    progress = quiz.locator(".jp-tfcoach-quiz-progress")
    progress.filter(has_text=f"Question 1 of {len(questions)}").wait_for(timeout=15_000)
    assert quiz.locator(".jp-tfcoach-quiz-best").inner_text() == "Best: no quiz taken yet"
    answer = quiz.locator(".jp-tfcoach-quiz-answer")
    ratings = ["right", "partly", "wrong"] + ["right"] * (len(questions) - 3)
    for index, (question, rating) in enumerate(zip(questions, ratings, strict=True)):
        progress.filter(has_text=f"Question {index + 1} of").wait_for(timeout=5_000)
        shown = quiz.locator(".jp-tfcoach-quiz-question").inner_text()
        assert shown == question.question.replace("`", "")  # code spans as <code>, as text
        assert answer.inner_text() == ""  # folded until revealed
        assert quiz.locator(".jp-tfcoach-quiz-ratings").is_hidden()
        if index == 0:
            page.keyboard.type("They are immutable")  # the answer box has the focus
        quiz.locator(".jp-tfcoach-quiz-reveal").click()
        first_line = question.answer.split("\n")[0].replace("`", "")
        assert first_line in answer.inner_text()
        quiz.locator(f".jp-tfcoach-quiz-ratings button[data-rating='{rating}']").click()
    right = ratings.count("right")
    result = quiz.locator(".jp-tfcoach-quiz-result")
    result.filter(has_text="Done:").wait_for(timeout=5_000)
    percent = round(100 * right / len(questions))
    assert f"{right} of {len(questions)} right ({percent}%), 1 partly" in result.inner_text()
    best = f"Best: {right} of {len(questions)} right ({percent}%)"
    quiz.locator(".jp-tfcoach-quiz-best", has_text=best).wait_for(timeout=10_000)

    page.reload(wait_until="domcontentloaded")
    open_lab(page, constellation_page.server)
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-quiz', {module: id})",
        QUIZ_MODULE,
    )
    page.locator(f"#tfcoach-quiz-{QUIZ_MODULE} .jp-tfcoach-quiz-best", has_text=best).wait_for(
        timeout=15_000
    )
    saved = json.loads(
        urllib.request.urlopen(
            constellation_page.server.api_url("tfcoach/api/study/quiz") + f"&module={QUIZ_MODULE}",
            timeout=10,
        ).read()
    )
    first = saved["quizzes"][0]["answers"][0]
    assert first == {
        "question": questions[0].question,
        "answer": "They are immutable",
        "correct": True,
    }
    assert saved["quizzes"][0]["answers"][1]["answer"] == "(answered in my head)"
    assert constellation_page.log.errors() == []
