"""The Memory Deck says why a card is due when the coach met its pitfall in the learner's
code (headless Chromium, this checkout's build, as ``study_pages.py`` serves it).

The server's study feed records the place (``server/study_feed.py``): here the static rules,
through ``POST tfcoach/api/analyze`` for a notebook path, find a print inside a tf.function
(TFC002, section ``side-effects``). The deck opened for that module shows the due card first,
with "You met this in `<path>`, code cell 2, line 3." (the path as code, text nodes only); a
deck of cards never met shows no such line. The learner's ``studyFromFindings``, saved through
JupyterLab's own settings API, turns it off.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.course.terms import terms_for_section
from tests.frontend.notebook_page import new_page
from tests.frontend.study_pages import BUILD, DECK, deck_cards, open_lab, served_build
from tests.frontend.study_pages import wait_for_deck_text as wait_for_text
from tests.harness import LabServer

pytestmark = pytest.mark.browser

NOTEBOOK = "lessons/<b>damping</b>.ipynb"  # markup in a name stays text
CELLS = [
    "import tensorflow as tf",
    "@tf.function\ndef damp(level):\n    print('damping', level)\n    return level * 0.5\n",
]
MET = terms_for_section("side-effects")
UNMET_MODULE = "module-01"


def analyze(server: LabServer, path: str = NOTEBOOK) -> dict[str, Any]:
    request = urllib.request.Request(
        server.api_url("tfcoach/api/analyze"),
        data=json.dumps({"cells": CELLS, "path": path}).encode(),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


@pytest.fixture(scope="module")
def met_page(browser: Any, study_server: LabServer) -> Iterator[tuple[Any, Any]]:
    context, page, log = new_page(browser)
    try:
        open_lab(page, study_server)
        yield page, log
    finally:
        context.close()


def test_the_deck_says_where_the_coach_met_the_cards_pitfall(
    met_page: tuple[Any, Any],
    study_server: LabServer,
) -> None:
    page, log = met_page
    entries = [path.name for path in (BUILD / "static").glob("remoteEntry.*.js")]
    assert served_build(page) == f"static/{entries[0]}", entries
    assert MET and len({term.module_id for term in MET}) == 1
    assert [f["code"] for f in analyze(study_server)["findings"]] == ["TFC002"]
    terms = [term.id for term in MET]
    for _attempt in range(100):  # the feed writes in a thread, after the answer
        if all(card["met"]["count"] for card in deck_cards(study_server, terms).values()):
            break
        page.wait_for_timeout(50)

    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        MET[0].module_id,
    )
    card_terms = [term.term for term in MET]
    page.wait_for_function(
        """([selector, terms]) => {
             const node = document.querySelector(selector);
             return node !== null && terms.some(term => node.textContent.includes(term));
           }""",
        arg=[f"{DECK} .jp-tfcoach-deck-card", card_terms],
        timeout=15_000,
    )
    met = page.locator(f"#tfcoach-memory-deck-{MET[0].module_id} .jp-tfcoach-deck-met")
    wait_for_text(page, ".jp-tfcoach-deck-met", "You met this in ")  # the only deck open
    assert met.is_visible()
    assert met.inner_text() == f"You met this in {NOTEBOOK}, code cell 2, line 3."
    assert met.locator("code").inner_text() == NOTEBOOK
    assert met.locator("b").count() == 0  # the name's markup is text

    # A deck of cards never met: no such line.
    page.evaluate(
        "(id) => window.jupyterapp.commands.execute('tfcoach:open-memory-deck', {module: id})",
        UNMET_MODULE,
    )
    other = page.locator(f"#tfcoach-memory-deck-{UNMET_MODULE} .jp-tfcoach-deck-met")
    other.wait_for(state="attached", timeout=15_000)
    page.wait_for_function(
        """(selector) => {
             const deck = document.querySelector(selector);
             const card = deck && deck.querySelector('.jp-tfcoach-deck-card');
             return card !== null && card.textContent.trim() !== '';
           }""",
        arg=f"#tfcoach-memory-deck-{UNMET_MODULE}",
        timeout=15_000,
    )
    assert other.inner_text() == "" and not other.is_visible()
    assert log.errors() == []


def put_lab_setting(server: LabServer, enabled: bool) -> None:
    """Save ``studyFromFindings`` as JupyterLab's settings editor does (its settings API)."""
    request = urllib.request.Request(
        server.api_url("lab/api/settings/jupyterlab_tfcoach:plugin"),
        data=json.dumps({"raw": json.dumps({"studyFromFindings": enabled})}).encode(),
        method="PUT",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 204


def test_the_learners_lab_setting_turns_it_off(study_server: LabServer) -> None:
    """The setting saved through JupyterLab's own settings API reaches the server's feed."""
    quiet = "lessons/quiet.ipynb"
    terms = [term.id for term in MET]

    def last_sources() -> set[str]:
        cards = deck_cards(study_server, terms).values()
        return {card["met"]["last"]["source"] for card in cards if card["met"]["last"]}

    put_lab_setting(study_server, False)
    try:
        assert analyze(study_server, quiet)["findings"]
        time.sleep(1)  # time enough for the feed's thread (it writes within milliseconds)
        assert quiet not in last_sources()
    finally:
        put_lab_setting(study_server, True)
    assert analyze(study_server, quiet)["findings"]
    deadline = time.monotonic() + 10
    while quiet not in last_sources():
        assert time.monotonic() < deadline, last_sources()
        time.sleep(0.05)
