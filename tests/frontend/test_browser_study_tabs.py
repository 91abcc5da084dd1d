"""Study tools as JupyterLab tabs (headless Chromium, this checkout's build, served as
``study_pages.py`` serves it, with this module's own study store and workspace).

A tool opened twice (a double click on its course button, its command run twice at once)
has one tab; opened again later, that tab comes to the front. Open study tabs come back
after a reload, as JupyterLab's own panels do (its layout restorer). An open Concept
Constellation shows what changed in the learner's deck: a card rated in the Memory Deck
(at once when both are in view, else when it is shown again) and cards the coach's findings
made due. A rating survives a restart of the server on the same study store.

The tests run in file order and build on each other (one server, one page).
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.course.terms import get_terms, terms_for_section
from tests.frontend.study_pages import Servers, StudyPage, open_lab, study_page_session, study_root
from tests.harness import LabServer

pytestmark = pytest.mark.browser

MODULE = "module-01"
MODULE_TERMS = [term for term in get_terms() if term.module_id == MODULE]
ALL_TERMS = get_terms()
DECK = f"#tfcoach-memory-deck-{MODULE}"
MATCH = f"#tfcoach-match-{MODULE}"
VIEW = "#tfcoach-constellation"
# What the static rules find in these cells (TFC002, a print in a tf.function) makes the
# terms of the section "side-effects" due (server/study_feed.py).
PRINT_IN_FUNCTION = [
    "import tensorflow as tf",
    "@tf.function\ndef damp(level):\n    print('damping', level)\n    return level * 0.5\n",
]
MET = terms_for_section("side-effects")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    # The findings' feed is on (its default): the constellation test uses it.
    servers = Servers(study_root(tmp_path_factory, "study-tabs"))
    try:
        yield servers
    finally:
        servers.current.stop()


@pytest.fixture(scope="module")
def tabs_page(browser: Any, servers: Servers) -> Iterator[StudyPage]:
    yield from study_page_session(browser, servers.current)


def run(page: Any, command: str, module: str | None = None, times: int = 1) -> None:
    """Run a command `times` at once (as quick launches do), and wait for them all."""
    page.evaluate(
        """([command, module, times]) => Promise.all([...Array(times)].map(() =>
             window.jupyterapp.commands.execute(command, module ? {module} : {})))""",
        [command, module, times],
    )


def count(page: Any, selector: str) -> int:
    found: int = page.evaluate("(s) => document.querySelectorAll(s).length", selector)
    return found


def tabs(page: Any, label: str) -> int:
    found: int = page.evaluate(
        """(label) => [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab')]
             .filter(tab => tab.textContent.trim() === label).length""",
        label,
    )
    return found


def current_id(page: Any) -> str:
    found: str = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return found


def wait_for_text(page: Any, selector: str, expected: str) -> None:
    page.wait_for_function(
        """([selector, expected]) => {
             const node = document.querySelector(selector);
             return node !== null && node.textContent.includes(expected);
           }""",
        arg=[selector, expected],
        timeout=30_000,
    )


def mastery(term_id: str) -> str:
    """The list entry of a term in the Constellation (its name and its mastery)."""
    return f"{VIEW} .jp-tfcoach-constellation-list li[data-term='{term_id}']"


def test_a_tool_opened_twice_has_one_tab(tabs_page: StudyPage) -> None:
    page = tabs_page.page
    course = tabs_page.open_module(MODULE)
    tabs_page.toolbar_button(MODULE, "Memory Deck").dblclick()
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-card", MODULE_TERMS[0].term)
    page.wait_for_timeout(1_000)  # time for a second tab to come
    assert count(page, DECK) == 1
    assert tabs(page, f"Memory Deck: {MODULE}") == 1

    run(page, "tfcoach:open-match-pairs", MODULE, times=2)
    run(page, "tfcoach:open-constellation", times=3)
    page.locator(f"{VIEW} .jp-tfcoach-constellation-canvas[data-mode]").wait_for(
        state="attached", timeout=30_000
    )
    page.locator(f"{MATCH} .jp-tfcoach-match-tile").first.wait_for(state="attached")
    page.wait_for_timeout(1_000)
    assert count(page, MATCH) == 1 and count(page, VIEW) == 1
    assert tabs(page, f"Match the Pairs: {MODULE}") == 1
    assert tabs(page, "Concept Constellation") == 1

    # Opened again later: the same tab, brought to the front.
    page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", f"tfcoach-course-{MODULE}")
    assert course.is_visible()
    tabs_page.toolbar_button(MODULE, "Memory Deck").click()
    page.locator(DECK).wait_for(state="visible", timeout=10_000)
    assert current_id(page) == DECK[1:]
    assert count(page, DECK) == 1
    assert tabs_page.log.errors() == []


def saved_workspace(server: LabServer) -> dict[str, Any]:
    with urllib.request.urlopen(server.api_url("lab/api/workspaces/default"), timeout=30) as answer:
        data: dict[str, Any] = json.loads(answer.read())["data"]
    return data


def wait_until_saved(server: LabServer, names: list[str], current: str | None = None) -> None:
    """Until the workspace on the server keeps these study tabs in its layout (and
    ``current`` as the main area's current tab)."""
    deadline = time.monotonic() + 30
    while True:
        data = saved_workspace(server)
        restorer = data.get("layout-restorer:data", {})
        layout = json.dumps(restorer)
        front = (restorer.get("main") or {}).get("current")
        if all(name in data and name in layout for name in names) and current in {None, front}:
            return
        assert time.monotonic() < deadline, sorted(data)
        time.sleep(0.2)


def test_open_study_tabs_come_back_after_a_reload(tabs_page: StudyPage) -> None:
    page = tabs_page.page
    wait_until_saved(
        tabs_page.server,
        [
            f"tfcoach-study-deck:{MODULE}",
            f"tfcoach-study-match:{MODULE}",
            "tfcoach-study-constellation:all",
        ],
        current=f"tfcoach-study-deck:{MODULE}",
    )
    page.reload(wait_until="domcontentloaded")
    open_lab(page, tabs_page.server)
    # No command run: the tabs come back with the page, the deck in front as before.
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-card", MODULE_TERMS[0].term)
    assert page.locator(DECK).is_visible()
    assert tabs(page, f"Memory Deck: {MODULE}") == 1
    assert tabs(page, f"Match the Pairs: {MODULE}") == 1
    assert tabs(page, "Concept Constellation") == 1
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Match the Pairs").click()
    tiles = page.locator(f"{MATCH} .jp-tfcoach-match-term")
    tiles.first.wait_for(state="visible", timeout=15_000)
    assert tiles.count() == 6
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Concept Constellation").click()
    page.locator(f"{VIEW} .jp-tfcoach-constellation-canvas[data-mode]").wait_for(
        state="visible", timeout=30_000
    )
    assert count(page, f"{VIEW} .jp-tfcoach-constellation-list button[data-term]") == len(ALL_TERMS)
    # A restored tab is the tool's tab: its command brings it to the front, no second one.
    run(page, "tfcoach:open-match-pairs", MODULE)
    page.locator(MATCH).wait_for(state="visible", timeout=10_000)
    assert count(page, MATCH) == 1 and tabs(page, f"Match the Pairs: {MODULE}") == 1
    assert tabs_page.log.errors() == []


def analyze(server: LabServer, path: str) -> list[str]:
    request = urllib.request.Request(
        server.api_url("tfcoach/api/analyze"),
        data=json.dumps({"cells": PRINT_IN_FUNCTION, "path": path}).encode(),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return [finding["code"] for finding in json.loads(response.read())["findings"]]


def due_now(server: LabServer, terms: list[str]) -> bool:
    url = server.api_url("tfcoach/api/study/deck") + "&terms=" + ",".join(terms)
    with urllib.request.urlopen(url, timeout=30) as response:
        return all(card["due_now"] for card in json.loads(response.read())["cards"])


def test_the_constellation_shows_what_changed_in_the_deck(tabs_page: StudyPage) -> None:
    page = tabs_page.page
    first, second = MODULE_TERMS[0], MODULE_TERMS[1]
    run(page, "tfcoach:open-constellation")
    wait_for_text(page, mastery(first.id), "(not studied yet)")

    # Rated in the deck, the Constellation hidden behind it: shown again, it has the rating.
    run(page, "tfcoach:open-memory-deck", MODULE)
    page.locator(DECK).wait_for(state="visible", timeout=10_000)
    assert page.locator(VIEW).is_hidden()
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-card", first.term)
    page.keyboard.press("Space")
    page.keyboard.press("3")
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-session", "1 rated")
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Concept Constellation").click()
    wait_for_text(page, mastery(first.id), "(learning)")

    # Both in view (the deck split beside it): a rating shows at once, and in the definition.
    page.locator(f"{VIEW} .jp-tfcoach-constellation-list button[data-term='{second.id}']").click()
    wait_for_text(page, f"{VIEW} .jp-tfcoach-constellation-meta", "not studied yet")
    page.evaluate(
        """([deck, view]) => {
             const app = window.jupyterapp;
             const widget = [...app.shell.widgets('main')].find(w => w.id === deck);
             app.shell.add(widget, 'main', {mode: 'split-right', ref: view});
           }""",
        [DECK[1:], VIEW[1:]],
    )
    page.locator(DECK).wait_for(state="visible", timeout=10_000)
    assert page.locator(VIEW).is_visible()
    page.locator(f"{DECK} .jp-tfcoach-deck-card").click()
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-card", second.definition)
    page.locator(f"{DECK} button[data-rating='3']").click()
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-session", "2 rated")
    wait_for_text(page, mastery(second.id), "(learning)")
    wait_for_text(page, f"{VIEW} .jp-tfcoach-constellation-meta", "learning")

    # The coach's findings make cards due on the server: shown again, the Constellation says so.
    assert MET and analyze(tabs_page.server, "lessons/damping.ipynb") == ["TFC002"]
    deadline = time.monotonic() + 10
    while not due_now(tabs_page.server, [term.id for term in MET]):  # the feed's thread
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert "(not studied yet)" in page.locator(mastery(MET[0].id)).inner_text()
    # The match board, in the Constellation's tab area, in front of it; then the Constellation.
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Match the Pairs").click()
    page.locator(MATCH).wait_for(state="visible", timeout=10_000)
    assert page.locator(VIEW).is_hidden()
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="Concept Constellation").click()
    wait_for_text(page, mastery(MET[0].id), "(due for review now)")
    assert tabs_page.log.errors() == []


def test_a_rating_survives_a_server_restart(tabs_page: StudyPage, servers: Servers) -> None:
    page = tabs_page.page
    run(page, "tfcoach:open-memory-deck", MODULE)
    counts = f"{DECK} .jp-tfcoach-deck-counts"
    wait_for_text(page, counts, f"New: {len(MODULE_TERMS) - 2}")
    assert "Learning: 2" in page.locator(counts).inner_text()
    third = MODULE_TERMS[2]
    wait_for_text(page, f"{DECK} .jp-tfcoach-deck-card", third.term)
    page.locator(f"{DECK} .jp-tfcoach-deck-card").click()
    page.locator(f"{DECK} button[data-rating='4']").click()  # easy: into review at once
    wait_for_text(page, counts, f"New: {len(MODULE_TERMS) - 3}")
    saved = page.locator(counts).inner_text()
    wait_until_saved(tabs_page.server, [f"tfcoach-study-deck:{MODULE}"])

    server = servers.restart()  # same study store, same address
    assert server.url == tabs_page.server.url
    page.reload(wait_until="domcontentloaded")
    open_lab(page, server)
    wait_for_text(page, counts, f"New: {len(MODULE_TERMS) - 3}")  # the restored deck
    assert page.locator(counts).inner_text() == saved
    run(page, "tfcoach:open-constellation")
    page.locator(VIEW).wait_for(state="visible", timeout=10_000)
    wait_for_text(page, mastery(third.id), "(remembered (in review))")
    errors = tabs_page.log.errors()
    # The page saw its server go away while it was stopped (and said so); nothing else.
    assert [text for text in errors if "ERR_CONNECTION_REFUSED" not in text] == [], errors
