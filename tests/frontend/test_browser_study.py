"""The Memory Deck in JupyterLab, as a learner uses it (headless Chromium).

Opened with one click from a course tab (its code loaded only then), a card flipped with
Space and rated with the key 3, the rating kept by the server: after a reload the deck's
counts and its next card show it. Its cards open their section in the course tab; the Help
menu and the command palette open it too.

The server serves THIS checkout's build of the labextension (``JUPYTER_PATH`` first, checked
against the page's configuration) and keeps the learner's progress in a temporary store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.terms import get_terms
from tests.frontend.study_pages import (
    BUILD,
    DECK,
    StudyPage,
    deck_text,
    open_lab,
    served_build,
    study_page_session,
)
from tests.frontend.study_pages import wait_for_deck_text as wait_for_text
from tests.harness import LabServer

pytestmark = pytest.mark.browser

MODULE = "module-01"
MODULE_TERMS = [term for term in get_terms() if term.module_id == MODULE]


@pytest.fixture(scope="module")
def study_page(browser: Any, study_server: LabServer) -> Iterator[StudyPage]:
    yield from study_page_session(browser, study_server)


def test_the_page_runs_this_checkouts_build(study_page: StudyPage) -> None:
    entries = [path.name for path in (BUILD / "static").glob("remoteEntry.*.js")]
    assert served_build(study_page.page) == f"static/{entries[0]}", entries


def test_a_rating_from_the_keyboard_is_kept_after_a_reload(study_page: StudyPage) -> None:
    page = study_page.page
    tab = study_page.open_module(MODULE)
    assert not [url for url in study_page.requested if "study_deck" in url]  # not loaded yet

    study_page.toolbar_button(MODULE, "Memory Deck").click()  # one click from the course
    wait_for_text(page, ".jp-tfcoach-deck-card", MODULE_TERMS[0].term)
    assert [url for url in study_page.requested if "study_deck" in url]  # its own chunk, now
    wait_for_text(page, ".jp-tfcoach-deck-counts", f"New: {len(MODULE_TERMS)}")
    assert "Due today: 0" in deck_text(page, ".jp-tfcoach-deck-counts")
    assert tab.is_hidden()
    card = page.locator(f"{DECK} .jp-tfcoach-deck-card")
    front = card.bounding_box()
    rate_good = page.locator(f"{DECK} button[data-rating='3']")
    assert rate_good.is_disabled()  # nothing to rate before the definition is seen

    page.keyboard.press("Space")  # the card has the focus: no click needed
    wait_for_text(page, ".jp-tfcoach-deck-card", MODULE_TERMS[0].definition)
    assert card.bounding_box() == front  # no layout jump on flip
    assert rate_good.is_enabled()
    assert page.locator(f"{DECK} .jp-tfcoach-deck-section").is_visible()

    page.keyboard.press("3")
    wait_for_text(page, ".jp-tfcoach-deck-session", "1 rated, 1 good or easy")
    wait_for_text(page, ".jp-tfcoach-deck-card", MODULE_TERMS[1].term)
    wait_for_text(page, ".jp-tfcoach-deck-counts", f"New: {len(MODULE_TERMS) - 1}")
    assert "Learning: 1" in deck_text(page, ".jp-tfcoach-deck-counts")

    page.reload(wait_until="domcontentloaded")
    open_lab(page, study_page.server)
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        MODULE,
    )
    wait_for_text(page, ".jp-tfcoach-deck-counts", f"New: {len(MODULE_TERMS) - 1}")
    counts = deck_text(page, ".jp-tfcoach-deck-counts")
    assert "Learning: 1" in counts
    # The rated term waits for its learning step: the next new term comes first.
    wait_for_text(page, ".jp-tfcoach-deck-card", MODULE_TERMS[1].term)
    assert "0 rated" in deck_text(page, ".jp-tfcoach-deck-session")  # a new session
    assert study_page.log.errors() == []


def test_a_card_opens_its_section_in_the_course_tab(study_page: StudyPage) -> None:
    page = study_page.page
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        MODULE,
    )
    card = page.locator(f"{DECK} .jp-tfcoach-deck-card")
    card.wait_for(state="visible", timeout=10_000)
    shown = card.inner_text()
    term = next(term for term in MODULE_TERMS if term.term in shown)
    card.click()  # a click flips it too
    wait_for_text(page, ".jp-tfcoach-deck-card", term.definition)
    page.locator(f"{DECK} .jp-tfcoach-deck-section").click()
    section = next(s for s in get_course().sections if s.id == term.section_id)
    study_page.wait_for_heading_at_top(MODULE, section.title)


def test_the_help_menu_and_the_palette_open_the_whole_deck(study_page: StudyPage) -> None:
    page = study_page.page
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Help").click()
    page.locator(".lm-Menu-itemLabel", has_text="TF Coach: Memory Deck").click()
    whole = page.locator("#tfcoach-memory-deck")
    whole.wait_for(state="visible", timeout=10_000)
    # Every term of the course, one of them rated in the test above.
    page.wait_for_function(
        """(expected) => {
             const node = document.querySelector('#tfcoach-memory-deck .jp-tfcoach-deck-counts');
             return node !== null && node.textContent.includes(expected);
           }""",
        arg=f"New: {len(get_terms()) - 1}",
        timeout=15_000,
    )
    page.evaluate("() => window.jupyterapp.shell.currentWidget.close()")
    whole.wait_for(state="detached", timeout=10_000)
    study_page.run_from_palette("TF Coach: Memory Deck")
    whole.wait_for(state="visible", timeout=10_000)
    assert study_page.log.errors() == []


def test_a_match_board_is_played_to_the_end_by_clicking(study_page: StudyPage) -> None:
    page = study_page.page
    study_page.open_module(MODULE)
    study_page.toolbar_button(MODULE, "Match the Pairs").click()
    board = page.locator(f"#tfcoach-match-{MODULE}")
    tiles = board.locator(".jp-tfcoach-match-tile")
    tiles.first.wait_for(state="visible", timeout=15_000)
    assert "no game yet" in board.locator(".jp-tfcoach-match-best").inner_text()
    terms = board.locator(".jp-tfcoach-match-term")
    ids = [terms.nth(i).get_attribute("data-term") for i in range(terms.count())]
    assert len(ids) == 6 and len(set(ids)) == 6
    by_id = {term.id: term for term in MODULE_TERMS}
    assert {terms.nth(i).inner_text() for i in range(6)} == {by_id[i].term for i in ids}

    def definition(term_id: str | None) -> Any:
        return board.locator(f".jp-tfcoach-match-definition[data-term='{term_id}']")

    # One mismatch first: shown on both tiles and counted.
    terms.nth(0).click()
    definition(ids[1]).click()
    assert "jp-mod-mismatch" in (definition(ids[1]).get_attribute("class") or "")
    assert "Mismatches: 1" in board.locator(".jp-tfcoach-match-status").inner_text()
    for index, term_id in enumerate(ids):
        definition(term_id).click()  # definition first works as well as term first
        terms.nth(index).click()
        assert terms.nth(index).is_disabled()
    status = board.locator(".jp-tfcoach-match-status")
    page.wait_for_function(
        "(node) => node.textContent.includes('A new best!')", arg=status.element_handle()
    )
    text = status.inner_text()
    assert "with 1 mismatch:" in text
    best = board.locator(".jp-tfcoach-match-best").inner_text()
    assert best.startswith("Best: ") and "1 mismatch)" in best
    # Saved on the server: a new board (another tab) shows the same best.
    page.evaluate("() => window.jupyterapp.shell.currentWidget.close()")
    board.wait_for(state="detached", timeout=10_000)
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-match-pairs', {module: id})",
        MODULE,
    )
    page.wait_for_function(
        """([selector, best]) => {
             const node = document.querySelector(selector);
             return node !== null && node.textContent === best;
           }""",
        arg=[f"#tfcoach-match-{MODULE} .jp-tfcoach-match-best", best],
        timeout=15_000,
    )
    assert study_page.log.errors() == []
