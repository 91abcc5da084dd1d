"""The Memory Deck's setting and progress buttons (headless Chromium, this checkout's build,
served as ``study_pages.py`` serves it, with this module's own study store).

``deckDefinitionFirst``, saved through JupyterLab's own settings API, turns the cards round:
the definition first, the term on flip. The deck's "Export progress" downloads the
``GET study/export`` document; "Reset progress" asks first (JupyterLab's dialog: Cancel keeps
everything) and then makes every card new; "Import progress" refuses a bad file with the
server's message, as text, and, once confirmed, brings the exported progress back.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_tfcoach.course.terms import get_terms
from tests.frontend.notebook_page import new_page
from tests.frontend.study_pages import BUILD, DECK, deck_text, open_lab, served_build
from tests.frontend.study_pages import wait_for_deck_text as wait_for_text
from tests.harness import LabServer

pytestmark = pytest.mark.browser

TURNED_MODULE = "module-04"
TURNED_TERMS = [term for term in get_terms() if term.module_id == TURNED_MODULE]
MODULE = "module-02"
MODULE_TERMS = [term for term in get_terms() if term.module_id == MODULE]


def put_lab_setting(server: LabServer, value: dict[str, Any]) -> None:
    """Save the coach's settings as JupyterLab's settings editor does (its settings API)."""
    request = urllib.request.Request(
        server.api_url("lab/api/settings/jupyterlab_tfcoach:plugin"),
        data=json.dumps({"raw": json.dumps(value)}).encode(),
        method="PUT",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 204


def server_card(server: LabServer, term: str) -> dict[str, Any]:
    url = server.api_url("tfcoach/api/study/deck") + "&terms=" + term
    with urllib.request.urlopen(url, timeout=30) as response:
        card: dict[str, Any] = json.loads(response.read())["cards"][0]
    return card


@pytest.fixture
def page_and_log(browser: Any, study_server: LabServer) -> Iterator[tuple[Any, Any]]:
    context, page, log = new_page(browser)
    try:
        yield page, log
    finally:
        context.close()


def open_deck(page: Any, server: LabServer, module: str) -> None:
    open_lab(page, server)
    entries = [path.name for path in (BUILD / "static").glob("remoteEntry.*.js")]
    assert served_build(page) == f"static/{entries[0]}", entries
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        module,
    )
    page.locator(f"#tfcoach-memory-deck-{module}").wait_for(state="visible", timeout=15_000)


def card_parts(page: Any) -> tuple[str, str]:
    face: str = page.locator(f"{DECK} .jp-tfcoach-deck-face").first.inner_text()
    card: str = page.locator(f"{DECK} .jp-tfcoach-deck-card").first.inner_text()
    return face, card


def test_the_definition_first_setting_turns_the_cards_round(
    page_and_log: tuple[Any, Any],
    study_server: LabServer,
) -> None:
    page, log = page_and_log
    first = TURNED_TERMS[0]
    put_lab_setting(study_server, {"deckDefinitionFirst": True})
    try:
        open_deck(page, study_server, TURNED_MODULE)
        wait_for_text(page, ".jp-tfcoach-deck-card", first.definition)
        face, card = card_parts(page)
        assert face == "Definition"
        assert first.term not in card.replace(first.definition, "")
        page.keyboard.press("Space")
        wait_for_text(page, ".jp-tfcoach-deck-term", first.term)  # the term on flip
        assert page.locator(f"{DECK} button[data-rating='3']").is_enabled()
    finally:
        put_lab_setting(study_server, {})
    # The setting off (its default): the term first again.
    page.reload(wait_until="domcontentloaded")
    open_deck(page, study_server, TURNED_MODULE)
    wait_for_text(page, ".jp-tfcoach-deck-term", first.term)
    face, card = card_parts(page)
    assert face == "Term" and first.definition not in card
    assert log.errors() == []


def confirm(page: Any, title: str, button: str) -> None:
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(state="visible", timeout=10_000)
    assert title in dialog.inner_text()
    dialog.locator(".jp-Dialog-button", has_text=button).click()
    dialog.wait_for(state="detached", timeout=10_000)


def test_export_reset_and_import_progress(
    page_and_log: tuple[Any, Any],
    study_server: LabServer,
    tmp_path: Path,
) -> None:
    page, log = page_and_log
    first = MODULE_TERMS[0]
    total = len(MODULE_TERMS)
    open_deck(page, study_server, MODULE)
    wait_for_text(page, ".jp-tfcoach-deck-card", first.term)
    page.keyboard.press("Space")
    page.keyboard.press("3")
    wait_for_text(page, ".jp-tfcoach-deck-counts", f"New: {total - 1}")
    assert "Learning: 1" in deck_text(page, ".jp-tfcoach-deck-counts")

    # Export: the server's document, as a file.
    with page.expect_download() as download:
        page.locator(f"{DECK} .jp-tfcoach-deck-export").click()
    exported = tmp_path / download.value.suggested_filename
    assert exported.name == "tfcoach-study-progress.json"
    download.value.save_as(exported)
    document = json.loads(exported.read_text())
    assert document["format"] == "tfcoach.study-progress/3"
    assert [card["term"] for card in document["cards"]] == [first.id]

    # Reset, cancelled: nothing changes.
    page.locator(f"{DECK} .jp-tfcoach-deck-reset").click()
    confirm(page, "Reset progress?", "Cancel")
    page.wait_for_timeout(500)
    assert "Learning: 1" in deck_text(page, ".jp-tfcoach-deck-counts")
    assert server_card(study_server, first.id)["state"] == "learning"

    # Reset, confirmed: every card new.
    page.locator(f"{DECK} .jp-tfcoach-deck-reset").click()
    confirm(page, "Reset progress?", "Reset")
    wait_for_text(page, ".jp-tfcoach-deck-counts", f"New: {total} ")
    assert "Learning: 0" in deck_text(page, ".jp-tfcoach-deck-counts")
    assert server_card(study_server, first.id)["state"] == "new"
    wait_for_text(page, ".jp-tfcoach-deck-card", first.term)

    # A refused file: the server's message, as text; nothing changes.
    bad = json.loads(json.dumps(document))
    bad["cards"][0]["fsrs"]["state"] = "<b>sleeping</b>"
    refused = tmp_path / "refused.json"
    refused.write_text(json.dumps(bad))
    page.locator(f"{DECK} .jp-tfcoach-deck-import-file").set_input_files(str(refused))
    confirm(page, "Import progress?", "Import")
    wait_for_text(page, ".jp-tfcoach-deck-progress-status", "The file was refused: ")
    status = page.locator(f"{DECK} .jp-tfcoach-deck-progress-status")
    assert "progress.cards[0].fsrs: state must be one of" in status.inner_text()
    assert "'<b>sleeping</b>'" in status.inner_text()  # the markup stays text
    assert status.locator("b").count() == 0
    assert server_card(study_server, first.id)["state"] == "new"

    # The exported file, confirmed: the rated card's state is back.
    page.locator(f"{DECK} .jp-tfcoach-deck-import-file").set_input_files(str(exported))
    confirm(page, "Import progress?", "Import")
    wait_for_text(page, ".jp-tfcoach-deck-progress-status", "Progress imported")
    wait_for_text(page, ".jp-tfcoach-deck-counts", "Learning: 1")
    assert f"New: {total - 1}" in deck_text(page, ".jp-tfcoach-deck-counts")
    card = server_card(study_server, first.id)
    assert card["state"] == "learning" and card["reviews"] == 1
    # The browser logs the refused import's answer; nothing else went wrong.
    refusal = "the server responded with a status of 400"
    assert [text for text in log.errors() if refusal not in text] == []
    assert len(log.errors(refusal)) == 1


MATCH_MODULE = "module-03"
MATCH_TERMS = [term for term in get_terms() if term.module_id == MATCH_MODULE]


def study_post(server: LabServer, route: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        server.api_url(f"tfcoach/api/study/{route}"), data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def make_due(server: LabServer, terms: list[str]) -> None:
    """Only `terms` studied, and due now: rated, exported, their due dates moved back, imported."""
    study_post(server, "reset", {"confirm": True})
    for term in terms:
        study_post(server, "review", {"term": term, "rating": 3})
    with urllib.request.urlopen(server.api_url("tfcoach/api/study/export"), timeout=30) as answer:
        document = json.loads(answer.read())
    now = datetime.now(UTC)
    for card in document["cards"]:
        card["fsrs"]["due"] = (now - timedelta(days=1)).isoformat()
        card["fsrs"]["last_review"] = (now - timedelta(days=2)).isoformat()
    study_post(server, "import", {"progress": document, "confirm": True})
    assert all(server_card(server, term)["due_now"] for term in terms)


def board_terms(page: Any) -> set[str]:
    tiles = page.locator(f"#tfcoach-match-{MATCH_MODULE} .jp-tfcoach-match-term")
    return {tiles.nth(i).get_attribute("data-term") for i in range(tiles.count())}


def wait_for_source(page: Any, expected: str) -> None:
    page.wait_for_function(
        """([selector, expected]) => {
             const node = document.querySelector(selector);
             return node !== null && node.textContent.includes(expected);
           }""",
        arg=[f"#tfcoach-match-{MATCH_MODULE} .jp-tfcoach-match-source", expected],
        timeout=15_000,
    )


def test_match_the_pairs_deals_from_the_learners_due_cards(
    page_and_log: tuple[Any, Any],
    study_server: LabServer,
) -> None:
    page, log = page_and_log
    due = [term.id for term in MATCH_TERMS[-8:-1]]  # 7 due, not the module's first terms
    make_due(study_server, due)
    open_lab(page, study_server)
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-match-pairs', {module: id})",
        MATCH_MODULE,
    )
    board = f"#tfcoach-match-{MATCH_MODULE}"
    page.locator(f"{board} .jp-tfcoach-match-term").first.wait_for(timeout=15_000)
    assert page.locator(f"{board} .jp-tfcoach-match-source").inner_text() == ""

    page.locator(f"{board} .jp-tfcoach-match-due").check()
    wait_for_source(page, "Dealt from your 7 due cards.")
    for _deal in range(3):  # every board: six of the seven due
        terms = board_terms(page)
        assert len(terms) == 6 and terms <= set(due), terms
        page.locator(f"{board} button", has_text="New board").click()
        page.wait_for_timeout(300)

    # Fewer than six due: those and others of the module, and it says so.
    few = due[:2]
    make_due(study_server, few)
    page.locator(f"{board} button", has_text="New board").click()
    wait_for_source(page, "Only 2 cards due (6 needed): dealt with 4 more of the module's terms.")
    terms = board_terms(page)
    assert len(terms) == 6 and set(few) <= terms, terms

    # Unchecked: the module's terms, no note.
    page.locator(f"{board} .jp-tfcoach-match-due").uncheck()
    wait_for_source(page, "")
    assert page.locator(f"{board} .jp-tfcoach-match-source").inner_text() == ""
    study_post(study_server, "reset", {"confirm": True})
    assert log.errors() == []
