"""The study tools in Jupyter Notebook 7 (``jupyter notebook``), as a learner uses them.

Notebook 7 keeps the notebook as the page's only main widget: the course, and the study
tools opened from it, are tabs of the bottom panel. The Memory Deck opens from the course
tab's toolbar and from the palette, a card is flipped with Space and rated with the key 3,
and after a reload the deck's counts show the rating was kept by the server. A module's quiz
opens from the course tab; a revealed answer is rated with the keys 1/2/3. Match the Pairs
opens from the course tab and is played to the end; the Concept Constellation opens from it,
draws its graph at a usable size, shows the rated term's mastery and what a rating in the
deck (its tab beside it) changed; a click on the star a search centred opens its
definition, whose link opens its section in the course tab.

On a second server, with the coach's findings feeding the deck (its default), the learner's
own notebook open: the print the coach flags in a tf.function makes its cards due, the deck
saying where it was met; a rating survives a restart of the server on the same study store
and port.

The server serves THIS checkout's build of the labextension (``JUPYTER_PATH`` first, checked
against the page's configuration) and keeps the learner's progress in a temporary store.
One server and one page for the module: the tests run in file order and build on each other.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.terms import get_terms, terms_for_section
from tests.conftest import COACH_TOUR
from tests.frontend.notebook_page import NOTEBOOK, new_page, wait_until_notebook_ready
from tests.frontend.study_pages import (
    BUILD,
    CoursePage,
    Servers,
    click_the_centred_term,
    deck_cards,
    details_show,
    served_build,
    served_study_server,
    study_root,
)
from tests.harness import NotebookServer

pytestmark = pytest.mark.browser

MODULE = "module-01"
MODULE_TERMS = [term for term in get_terms() if term.module_id == MODULE]
COURSE = f"#tfcoach-course-{MODULE}"
DECK = f"#tfcoach-memory-deck-{MODULE}"
WHOLE_DECK = "#tfcoach-memory-deck"
QUIZ = f"#tfcoach-quiz-{MODULE}"
MATCH = f"#tfcoach-match-{MODULE}"
VIEW = "#tfcoach-constellation"
DOWN = "#jp-down-stack"
PAGE_HEIGHT = 900


@pytest.fixture(scope="module")
def study_notebook_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotebookServer]:
    """Notebook 7 loading this checkout's labextension build, with a fresh study store."""

    def copy_the_tour(server: NotebookServer) -> None:
        shutil.copy(COACH_TOUR, server.notebook_dir / Path(COACH_TOUR).name)

    # The open notebook's findings would make terms due (tested elsewhere): off, the deck
    # starts with every term new, in course order.
    yield from served_study_server(
        tmp_path_factory,
        "study-notebook7",
        NotebookServer,
        copy_the_tour,
        study_from_findings=False,
    )


class StudyNotebook7:
    def __init__(
        self, page: Any, log: Any, server: NotebookServer, notebook: str = NOTEBOOK
    ) -> None:
        self.page = page
        self.log = log
        self.server = server
        self.notebook = notebook  # the notebook the page shows

    def open(self) -> None:
        self.page.goto(
            self.server.lab_url(f"notebooks/{self.notebook}"), wait_until="domcontentloaded"
        )
        wait_until_notebook_ready(self.page, self.notebook)
        self.page.wait_for_function(
            "() => window.jupyterapp.commands.hasCommand('tfcoach:open-memory-deck')",
            timeout=60_000,
        )

    def open_course(self) -> Any:
        self.page.evaluate(
            "(id) => window.jupyterapp.commands.execute('tfcoach:open-course', {module: id})",
            MODULE,
        )
        course = self.page.locator(f"{DOWN} {COURSE}")
        course.locator(".jp-tfcoach-course-toc-sections button").first.wait_for(timeout=10_000)
        return course

    def toolbar_button(self, label: str) -> Any:
        return self.page.locator(f"{COURSE} .jp-Toolbar .jp-ToolbarButtonComponent", has_text=label)

    def run_from_palette(self, label: str) -> None:
        """Notebook 7's command palette (Ctrl+Shift+C): find ``label`` and run it."""
        page = self.page
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Shift+C")
        search = page.locator(".lm-CommandPalette .lm-CommandPalette-input")
        search.wait_for(state="visible", timeout=5_000)
        search.fill(label)
        item = page.locator(".lm-CommandPalette-item", has_text=label).first
        item.wait_for(state="visible", timeout=5_000)
        item.click()

    def wait_for_text(self, selector: str, expected: str) -> None:
        self.page.wait_for_function(
            """([selector, expected]) => {
                 const node = document.querySelector(selector);
                 return node !== null && node.textContent.includes(expected);
               }""",
            arg=[selector, expected],
            timeout=15_000,
        )

    def assert_usable(self, selector: str) -> None:
        """In the bottom panel, under the notebook, at a readable height, fully on the page."""
        view = self.page.locator(f"{DOWN} {selector}")
        view.wait_for(state="visible", timeout=10_000)
        box = view.bounding_box()
        assert box is not None
        assert box["height"] >= 0.3 * PAGE_HEIGHT, box
        assert box["y"] >= 0 and box["y"] + box["height"] <= PAGE_HEIGHT + 1, box
        assert self.page.locator("#main-panel .jp-Notebook").is_visible()


def ours(errors: list[str]) -> list[str]:
    """Our errors (Notebook 7 itself logs one about a settings schema on some loads)."""
    return [error for error in errors if "tfcoach" in error.lower()]


@pytest.fixture(scope="module")
def nb7(browser: Any, study_notebook_server: NotebookServer) -> Iterator[StudyNotebook7]:
    context, page, log = new_page(browser)
    session = StudyNotebook7(page, log, study_notebook_server)
    try:
        session.open()
        yield session
    finally:
        context.close()


def test_it_is_notebook_7_running_this_checkouts_build(nb7: StudyNotebook7) -> None:
    assert nb7.page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    entries = [path.name for path in (BUILD / "static").glob("remoteEntry.*.js")]
    assert served_build(nb7.page) == f"static/{entries[0]}", entries


def test_deck_from_the_course_rated_by_keyboard_is_kept_after_a_reload(
    nb7: StudyNotebook7,
) -> None:
    page = nb7.page
    nb7.open_course()
    nb7.toolbar_button("Memory Deck").click()
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-card", MODULE_TERMS[0].term)
    nb7.assert_usable(DECK)
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-counts", f"New: {len(MODULE_TERMS)}")
    rate_good = page.locator(f"{DECK} button[data-rating='3']")
    assert rate_good.is_disabled()

    page.keyboard.press("Space")  # the card has the focus in the bottom panel too
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-card", MODULE_TERMS[0].definition)
    assert rate_good.is_enabled()
    rate_good.scroll_into_view_if_needed()
    assert rate_good.is_visible()
    page.keyboard.press("3")
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-session", "1 rated, 1 good or easy")
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-counts", f"New: {len(MODULE_TERMS) - 1}")
    # The notebook was not touched by the keys (Space, 3 are notebook shortcuts too).
    assert page.locator("#main-panel .jp-Notebook").is_visible()

    page.reload(wait_until="domcontentloaded")
    nb7.open()
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        MODULE,
    )
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-counts", f"New: {len(MODULE_TERMS) - 1}")
    assert "Learning: 1" in page.locator(f"{DECK} .jp-tfcoach-deck-counts").inner_text()
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-card", MODULE_TERMS[1].term)
    nb7.assert_usable(DECK)  # opened alone, the bottom panel makes room for it
    assert ours(nb7.log.errors()) == []


def test_the_help_menu_opens_the_whole_deck(nb7: StudyNotebook7) -> None:
    # Notebook 7 builds its menu bar from the same settings (jupyter.lab.menus) as JupyterLab.
    page = nb7.page
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Help").click()
    page.locator(".lm-Menu-itemLabel", has_text="TF Coach: Memory Deck").click()
    # Every term of the course, one of them rated in the test above.
    nb7.wait_for_text(f"{WHOLE_DECK} .jp-tfcoach-deck-counts", f"New: {len(get_terms()) - 1}")
    nb7.assert_usable(WHOLE_DECK)
    assert ours(nb7.log.errors()) == []


def test_the_palette_opens_the_whole_deck(nb7: StudyNotebook7) -> None:
    nb7.run_from_palette("TF Coach: Memory Deck")
    nb7.wait_for_text(f"{WHOLE_DECK} .jp-tfcoach-deck-counts", f"New: {len(get_terms()) - 1}")
    nb7.assert_usable(WHOLE_DECK)
    tab = nb7.page.locator(f"{DOWN} .lm-TabBar-tab", has_text="Memory Deck")
    assert tab.count() >= 1


def test_a_quiz_answer_is_revealed_and_rated_with_the_keys(nb7: StudyNotebook7) -> None:
    page = nb7.page
    nb7.open_course()
    nb7.toolbar_button("Quiz").click()
    progress = f"{QUIZ} .jp-tfcoach-quiz-progress"
    nb7.wait_for_text(progress, "Question 1 of ")
    nb7.assert_usable(QUIZ)
    total = int(page.locator(progress).inner_text().rsplit(" ", 1)[1])
    assert total >= 2

    answer = page.locator(f"{QUIZ} .jp-tfcoach-quiz-yours")
    answer.click()
    page.keyboard.type("1 layer, 2 weights")  # digits typed in the answer are text
    assert answer.input_value() == "1 layer, 2 weights"
    assert page.locator(progress).inner_text() == f"Question 1 of {total}"
    assert page.locator(f"{QUIZ} .jp-tfcoach-quiz-ratings").is_hidden()
    page.keyboard.press("3")  # before the reveal, 3 is just typed
    assert page.locator(progress).inner_text() == f"Question 1 of {total}"

    page.locator(f"{QUIZ} .jp-tfcoach-quiz-reveal").click()
    page.locator(f"{QUIZ} .jp-tfcoach-quiz-answer h3").wait_for(state="visible", timeout=5_000)
    assert page.locator(f"{QUIZ} .jp-tfcoach-quiz-ratings").is_visible()
    page.keyboard.press("1")  # right
    nb7.wait_for_text(progress, f"Question 2 of {total}")
    assert answer.input_value() == ""  # the next question starts empty

    page.locator(f"{QUIZ} .jp-tfcoach-quiz-reveal").click()
    page.locator(f"{QUIZ} .jp-tfcoach-quiz-answer h3").wait_for(state="visible", timeout=5_000)
    page.keyboard.press("2")  # partly
    nb7.wait_for_text(progress, f"Question 3 of {total}" if total > 2 else "answered")
    assert ours(nb7.log.errors()) == []


def test_match_the_pairs_from_the_course_is_played_to_the_end(nb7: StudyNotebook7) -> None:
    page = nb7.page
    nb7.open_course()
    nb7.toolbar_button("Match the Pairs").click()
    board = page.locator(f"{DOWN} {MATCH}")
    terms = board.locator(".jp-tfcoach-match-term")
    terms.first.wait_for(state="visible", timeout=15_000)
    nb7.assert_usable(MATCH)
    assert "no game yet" in board.locator(".jp-tfcoach-match-best").inner_text()
    ids = [terms.nth(i).get_attribute("data-term") for i in range(terms.count())]
    assert len(ids) == 6 and len(set(ids)) == 6
    for index, term_id in enumerate(ids):
        terms.nth(index).click()
        board.locator(f".jp-tfcoach-match-definition[data-term='{term_id}']").click()
        assert terms.nth(index).is_disabled()
    nb7.wait_for_text(f"{MATCH} .jp-tfcoach-match-status", "A new best!")
    assert "with 0 mismatches:" in board.locator(".jp-tfcoach-match-status").inner_text()
    assert "0 mismatches)" in board.locator(".jp-tfcoach-match-best").inner_text()
    assert page.locator("#main-panel .jp-Notebook").is_visible()
    assert ours(nb7.log.errors()) == []


def test_the_constellation_from_the_course_shows_the_learners_deck(nb7: StudyNotebook7) -> None:
    page = nb7.page
    first, second = MODULE_TERMS[0], MODULE_TERMS[1]
    nb7.open_course()
    nb7.toolbar_button("Constellation").click()
    view = page.locator(f"{DOWN} {VIEW}")
    canvas = view.locator(".jp-tfcoach-constellation-canvas[data-mode]")
    canvas.wait_for(state="visible", timeout=30_000)
    nb7.assert_usable(VIEW)
    box = canvas.bounding_box()
    assert box is not None and box["width"] >= 300 and box["height"] >= 150, box
    assert canvas.locator("canvas").count() >= 1
    terms = view.locator(".jp-tfcoach-constellation-list button[data-term]")
    assert terms.count() == len(get_terms())
    entry = f"{VIEW} .jp-tfcoach-constellation-list li[data-term='{{}}']"
    nb7.wait_for_text(entry.format(first.id), "(learning)")  # rated in the first test
    nb7.wait_for_text(entry.format(second.id), "(not studied yet)")

    # The search box has the focus: a term typed, Enter opens its definition.
    page.keyboard.type(second.term)
    page.keyboard.press("Enter")
    nb7.wait_for_text(f"{VIEW} .jp-tfcoach-constellation-details h3", second.term)
    assert second.definition in view.locator(".jp-tfcoach-constellation-details").inner_text()

    # Rated in the deck (its tab in the same panel), shown again: the Constellation has it.
    page.locator(f"{DOWN} .lm-TabBar-tab", has_text=f"Memory Deck: {MODULE}").click()
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-card", second.term)
    assert view.is_hidden()
    page.locator(f"{DECK} .jp-tfcoach-deck-card").click()
    page.locator(f"{DECK} button[data-rating='3']").click()
    nb7.wait_for_text(f"{DECK} .jp-tfcoach-deck-session", "1 rated")
    page.locator(f"{DOWN} .lm-TabBar-tab", has_text="Concept Constellation").click()
    view.wait_for(state="visible", timeout=10_000)
    nb7.wait_for_text(entry.format(second.id), "(learning)")
    nb7.wait_for_text(f"{VIEW} .jp-tfcoach-constellation-meta", "learning")
    assert ours(nb7.log.errors()) == []


# A term of another module than the course tab opened above, with a section in the course.
SEARCHED = next(term for term in get_terms() if term.module_id == "module-03")


def test_a_centred_star_opens_its_definition_and_its_section(nb7: StudyNotebook7) -> None:
    page = nb7.page
    page.evaluate("() => window.jupyterapp.commands.execute('tfcoach:open-constellation')")
    view = page.locator(f"{DOWN} {VIEW}")
    canvas = view.locator(".jp-tfcoach-constellation-canvas[data-mode]")
    canvas.wait_for(state="visible", timeout=30_000)
    nb7.assert_usable(VIEW)
    search = view.locator(".jp-tfcoach-constellation-search")
    search.fill(SEARCHED.term)
    search.press("Enter")
    details_show(page, SEARCHED.term)

    # Brought to the centre of the canvas: a click there opens the term that is there.
    click_the_centred_term(page, SEARCHED.id)
    details_show(page, SEARCHED.term)
    details = view.locator(".jp-tfcoach-constellation-details")
    assert SEARCHED.definition in details.inner_text()
    if canvas.get_attribute("data-mode") == "3d":  # and in the 2D view, as without WebGL
        view.locator(".jp-tfcoach-constellation-mode", has_text="2D view").click()
        view.locator(".jp-tfcoach-constellation-canvas[data-mode='2d']").wait_for(
            state="visible", timeout=15_000
        )
        search.fill(SEARCHED.term)
        search.press("Enter")
        click_the_centred_term(page, SEARCHED.id)
        details_show(page, SEARCHED.term)

    # Its link opens the section in the module's course tab, beside it in the bottom panel.
    details.locator(".jp-tfcoach-deck-section").click()
    section = next(s for s in get_course().sections if s.id == SEARCHED.section_id)
    course = page.locator(f"{DOWN} #tfcoach-course-{section.module_id}")
    course.wait_for(state="visible", timeout=10_000)
    CoursePage(page, nb7.log, nb7.server).wait_for_heading_at_top(section.module_id, section.title)
    assert view.is_hidden()  # the course tab in front of it
    assert page.locator("#main-panel .jp-Notebook").is_visible()
    assert ours(nb7.log.errors()) == []


# The learner's own notebook: the coach's rules flag the print in its tf.function (TFC002,
# section "side-effects"), which makes that section's terms due (server/study_feed.py).
OWN_NOTEBOOK = "lessons/damping.ipynb"
OWN_CELLS = [
    "import tensorflow as tf",
    "@tf.function\ndef damp(level):\n    print('damping', level)\n    return level * 0.5\n",
]
MET = terms_for_section("side-effects")


@pytest.fixture(scope="module")
def own_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """Notebook 7 with this checkout's build, the findings' feed on (its default), a fresh
    study store and the learner's own notebook; stopped and started again on demand."""
    servers = Servers(study_root(tmp_path_factory, "study-notebook7-own"), NotebookServer)
    try:
        notebook = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell(source) for source in OWN_CELLS],
            # Its kernel named, as a saved notebook has it (else Notebook 7 asks for one).
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        )
        path = servers.current.notebook_dir / OWN_NOTEBOOK
        path.parent.mkdir(parents=True)
        nbformat.write(notebook, path)
        yield servers
    finally:
        servers.current.stop()


@pytest.fixture(scope="module")
def own(browser: Any, own_servers: Servers) -> Iterator[StudyNotebook7]:
    context, page, log = new_page(browser)
    session = StudyNotebook7(page, log, own_servers.current, OWN_NOTEBOOK)
    try:
        session.open()
        yield session
    finally:
        context.close()


def open_deck(session: StudyNotebook7, module: str) -> str:
    """The module's Memory Deck opened by its command, its first card shown: its selector."""
    session.page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        module,
    )
    deck = f"#tfcoach-memory-deck-{module}"
    session.page.wait_for_function(
        """(selector) => {
             const card = document.querySelector(selector + ' .jp-tfcoach-deck-card');
             return card !== null && card.textContent.trim() !== '';
           }""",
        arg=deck,
        timeout=15_000,
    )
    return deck


def test_a_pitfall_in_the_learners_notebook_makes_its_card_due(own: StudyNotebook7) -> None:
    page = own.page
    assert MET and len({term.module_id for term in MET}) == 1
    module = MET[0].module_id
    # The coach flagged the print in the notebook the learner has open.
    mark = (
        page.locator(".jp-Notebook .jp-CodeCell")
        .nth(1)
        .locator(".cm-lintRange.jp-tfcoach-mark-TFC002")
    )
    mark.first.wait_for(state="visible", timeout=30_000)
    terms = [term.id for term in MET]
    for _attempt in range(200):  # the feed writes in a thread, after the analysis answers
        if all(card["met"]["count"] for card in deck_cards(own.server, terms).values()):
            break
        page.wait_for_timeout(50)

    deck = open_deck(own, module)
    own.assert_usable(deck)
    card = page.locator(f"{DOWN} {deck} .jp-tfcoach-deck-card")
    assert any(term.term in card.inner_text() for term in MET)  # the due cards come first
    own.wait_for_text(f"{deck} .jp-tfcoach-deck-counts", f"Due today: {len(MET)}")
    met = page.locator(f"{deck} .jp-tfcoach-deck-met")
    own.wait_for_text(f"{deck} .jp-tfcoach-deck-met", "You met this in ")
    assert met.is_visible()
    assert met.inner_text() == f"You met this in {OWN_NOTEBOOK}, code cell 2, line 3."
    assert met.locator("code").inner_text() == OWN_NOTEBOOK

    # Rated, the next due card says it too; then the new cards, never met: no such line.
    page.locator(f"{deck} .jp-tfcoach-deck-card").click()
    page.locator(f"{deck} button[data-rating='3']").click()
    own.wait_for_text(f"{deck} .jp-tfcoach-deck-session", "1 rated")
    assert any(term.term in card.inner_text() for term in MET)
    assert met.inner_text() == f"You met this in {OWN_NOTEBOOK}, code cell 2, line 3."
    page.locator(f"{deck} .jp-tfcoach-deck-card").click()
    page.locator(f"{deck} button[data-rating='3']").click()
    own.wait_for_text(f"{deck} .jp-tfcoach-deck-session", "2 rated")
    assert not any(term.term in card.inner_text() for term in MET)
    assert met.inner_text() == "" and not met.is_visible()
    assert ours(own.log.errors()) == []


def test_a_rating_survives_a_server_restart(own: StudyNotebook7, own_servers: Servers) -> None:
    page = own.page
    deck = open_deck(own, MODULE)
    counts = f"{deck} .jp-tfcoach-deck-counts"
    own.wait_for_text(counts, f"New: {len(MODULE_TERMS)} ")
    own.wait_for_text(f"{deck} .jp-tfcoach-deck-card", MODULE_TERMS[0].term)
    page.locator(f"{deck} .jp-tfcoach-deck-card").click()
    page.locator(f"{deck} button[data-rating='4']").click()  # easy: into review at once
    own.wait_for_text(counts, f"New: {len(MODULE_TERMS) - 1} ")
    saved = page.locator(counts).inner_text()
    assert "Review: 1" in saved

    own.server = own_servers.restart()  # same study store, same address
    page.reload(wait_until="domcontentloaded")
    own.open()
    open_deck(own, MODULE)
    own.wait_for_text(counts, f"New: {len(MODULE_TERMS) - 1} ")
    assert page.locator(counts).inner_text() == saved
    # The rated card waits for its review: the next new term comes first.
    own.wait_for_text(f"{deck} .jp-tfcoach-deck-card", MODULE_TERMS[1].term)
    own.assert_usable(deck)
    errors = ours(own.log.errors())
    # The page saw its server go away while it was stopped (and said so); nothing else.
    assert [text for text in errors if "ERR_CONNECTION_REFUSED" not in text] == [], errors
