"""The study tools for everyone (issue #29), in JupyterLab (headless Chromium).

Match the Pairs played to the end with the keyboard only (Tab / Shift+Tab to move, Enter or
Space to pick), each move's focus visible, a mismatch shown and counted. Every control of the
Memory Deck (with its progress buttons), Match the Pairs, the quiz and the Concept
Constellation has an accessible name (read from Chromium's accessibility tree); what a
sighted learner sees change (a flipped card, a rating, a mismatch, a pair, a score, the
chosen term) is in a live region; the constellation's canvas is hidden from screen readers
and its list names every term. In JupyterLab Light and JupyterLab Dark, card text, buttons,
match tiles (plain, matched, mismatched) and quiz choices have a contrast of at least 4.5:1
against the background they are painted on, and their colours change with the theme (they
come from JupyterLab's theme variables). The constellation's chosen star stands out (3:1) in
both themes, in the 3D and the 2D view, after a change of theme and after a switch of view. The
Memory Deck and the quiz are used with the keyboard only too.

The server serves THIS checkout's build (see ``study_pages.py``) with a fresh store.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.course.quiz import quiz_questions
from jupyterlab_tfcoach.course.terms import get_terms
from tests.frontend.study_pages import StudyPage, served_study_server, study_page_session
from tests.harness import LabServer

pytestmark = pytest.mark.browser

MODULE = "module-01"
QUIZ_MODULE = "module-02"
OTHER_MODULE = "module-03"
MODULE_TERMS = [term for term in get_terms() if term.module_id == MODULE]
DECK = f"#tfcoach-memory-deck-{MODULE}"
BOARD = f"#tfcoach-match-{MODULE}"
QUIZ = f"#tfcoach-quiz-{QUIZ_MODULE}"
CONSTELLATION = "#tfcoach-constellation"
LIGHT, DARK = "JupyterLab Light", "JupyterLab Dark"
# Roles a learner acts on: each needs a name a screen reader can say.
CONTROL_ROLES = ("button", "checkbox", "textbox", "searchbox", "link", "combobox", "radio")


@pytest.fixture(scope="module")
def access_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab loading this checkout's labextension build, with a fresh study store."""
    yield from served_study_server(tmp_path_factory, "study-access")


@pytest.fixture(scope="module")
def access_page(browser: Any, access_server: LabServer) -> Iterator[StudyPage]:
    yield from study_page_session(browser, access_server)


def run_command(page: Any, command: str, **args: str) -> None:
    page.evaluate("([id, args]) => window.jupyterapp.commands.execute(id, args)", [command, args])


# ------------------------------------------------------------------------------- keyboard

FOCUSED_TILE_JS = """() => {
  const node = document.activeElement;
  if (!node || !node.classList.contains('jp-tfcoach-match-tile')) {
    return null;
  }
  const style = getComputedStyle(node);
  return {
    term: node.getAttribute('data-term'),
    side: node.classList.contains('jp-tfcoach-match-term') ? 'term' : 'definition',
    outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
  };
}"""

TILE_ORDER_JS = """(board) => [...document.querySelectorAll(board + ' .jp-tfcoach-match-tile')]
  .map(node => [node.classList.contains('jp-tfcoach-match-term') ? 'term' : 'definition',
                node.getAttribute('data-term')])"""


def move_focus_to(page: Any, side: str, term_id: str) -> None:
    """Tab (or Shift+Tab, towards the tile) until the tile has the focus, its focus ring
    drawn at every stop on the board."""
    order = [tuple(pair) for pair in page.evaluate(TILE_ORDER_JS, BOARD)]
    for _ in range(len(order) + 4):
        focused = page.evaluate(FOCUSED_TILE_JS)
        assert focused is not None, "the focus left the board"
        assert focused["outline"], f"no visible focus on {focused}"
        here = order.index((focused["side"], focused["term"]))
        there = order.index((side, term_id))
        if here == there:
            return
        page.keyboard.press("Tab" if there > here else "Shift+Tab")
    raise AssertionError(f"could not reach the {side} tile of {term_id} with Tab")


def test_match_the_pairs_is_played_to_the_end_with_the_keyboard_only(
    access_page: StudyPage,
) -> None:
    page = access_page.page
    run_command(page, "tfcoach:open-match-pairs", module=MODULE)
    board = page.locator(BOARD)
    board.locator(".jp-tfcoach-match-tile").first.wait_for(state="visible", timeout=15_000)
    page.wait_for_function(FOCUSED_TILE_JS)  # the board takes the focus when it opens
    terms = board.locator(".jp-tfcoach-match-term")
    ids = [terms.nth(i).get_attribute("data-term") or "" for i in range(terms.count())]
    status = board.locator(".jp-tfcoach-match-status")

    def tile(side: str, term_id: str) -> Any:
        return board.locator(f".jp-tfcoach-match-{side}[data-term='{term_id}']")

    # A mismatch: shown on both tiles (their colour and their names) and counted.
    move_focus_to(page, "term", ids[0])
    page.keyboard.press("Enter")
    assert tile("term", ids[0]).get_attribute("aria-pressed") == "true"
    move_focus_to(page, "definition", ids[1])
    page.keyboard.press("Space")
    for wrong in (tile("term", ids[0]), tile("definition", ids[1])):
        assert "jp-mod-mismatch" in (wrong.get_attribute("class") or "")
    assert "Mismatches: 1" in status.inner_text()
    assert "Not a pair" in status.inner_text()
    # Every pair, term first with Enter, then definition first with Space.
    for index, term_id in enumerate(ids):
        first, second = ("term", "definition") if index % 2 == 0 else ("definition", "term")
        key = "Enter" if index % 2 == 0 else "Space"
        move_focus_to(page, first, term_id)
        page.keyboard.press(key)
        move_focus_to(page, second, term_id)
        page.keyboard.press(key)
        assert tile("term", term_id).is_disabled() and tile("definition", term_id).is_disabled()
        if index < len(ids) - 1:
            assert f"Pairs: {index + 1} of {len(ids)}" in status.inner_text()
    page.wait_for_function(
        "(node) => node.textContent.includes('A new best!')", arg=status.element_handle()
    )
    assert "with 1 mismatch:" in status.inner_text()
    # The focus waits on "New board": Enter deals one, the focus back on its first tile.
    assert page.evaluate("() => document.activeElement.textContent") == "New board"
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(board) => document.querySelectorAll(board + ' .jp-mod-matched').length === 0", arg=BOARD
    )
    assert page.evaluate(FOCUSED_TILE_JS) is not None
    assert access_page.log.errors() == []


FOCUS_JS = """() => {
  const node = document.activeElement;
  const style = getComputedStyle(node);
  return {
    text: node.textContent,
    tag: node.tagName,
    classes: node.className,
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1,
  };
}"""


def test_the_deck_and_the_quiz_are_used_with_the_keyboard_only(access_page: StudyPage) -> None:
    page = access_page.page
    # Their own deck and quiz (of another module): the tests below find theirs untouched.
    run_command(page, "tfcoach:open-memory-deck", module=OTHER_MODULE)
    deck = show(page, f"#tfcoach-memory-deck-{OTHER_MODULE}")
    card = deck.locator(".jp-tfcoach-deck-card")
    card.locator(".jp-tfcoach-deck-term").wait_for(timeout=15_000)
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # back on the card, its focus ring drawn
    focus = page.evaluate(FOCUS_JS)
    assert "jp-tfcoach-deck-card" in focus["classes"] and focus["ring"], focus
    shown = card.inner_text()
    page.keyboard.press("Enter")
    deck.locator(".jp-tfcoach-deck-card.jp-mod-flipped").wait_for(timeout=5_000)
    assert deck.get_by_role("button", name="Easy (key 4)").is_enabled()
    page.keyboard.press("4")
    deck.locator(".jp-tfcoach-deck-session", has_text="1 rated").wait_for(timeout=10_000)
    assert "jp-mod-flipped" not in (card.get_attribute("class") or "")
    assert card.inner_text() != shown
    assert "jp-tfcoach-deck-card" in page.evaluate(FOCUS_JS)["classes"]  # ready for the next

    run_command(page, "tfcoach:open-quiz", module=OTHER_MODULE)
    quiz = show(page, f"#tfcoach-quiz-{OTHER_MODULE}")
    quiz.locator(".jp-tfcoach-quiz-progress", has_text="Question 1 of").wait_for(timeout=15_000)
    assert page.evaluate(FOCUS_JS)["tag"] == "TEXTAREA"
    page.keyboard.type("1 tensor")  # keys in the answer box are the answer's
    assert quiz.locator(".jp-tfcoach-quiz-yours").input_value() == "1 tensor"
    page.keyboard.press("Tab")
    focus = page.evaluate(FOCUS_JS)
    assert focus["text"] == "Show the answer" and focus["ring"], focus
    page.keyboard.press("Enter")
    quiz.locator(".jp-tfcoach-quiz-ratings").wait_for(state="visible", timeout=5_000)
    assert page.evaluate(FOCUS_JS)["text"] == "I had it right"
    page.keyboard.press("2")  # partly
    quiz.locator(".jp-tfcoach-quiz-progress", has_text="Question 2 of").wait_for(timeout=5_000)
    assert page.evaluate(FOCUS_JS)["tag"] == "TEXTAREA"
    assert access_page.log.errors() == []


# ----------------------------------------------------------------------- screen readers

# A line of an aria snapshot: ``- button "Good (key 3)"``, quoted as YAML when the name has a
# colon (``- 'button "Card: Tensor."': ...``).
ROLE_LINE = re.compile(r"^\s*- '?(?P<role>[a-z]+)(?: \"(?P<name>(?:[^\"\\]|\\.)*)\")?")


def unnamed_controls(view: Any) -> tuple[list[str], int]:
    """The control lines of the view's accessibility tree without a name, and how many
    controls it has."""
    snapshot: str = view.aria_snapshot()
    unnamed, controls = [], 0
    for line in snapshot.splitlines():
        found = ROLE_LINE.match(line)
        if found and found["role"] in CONTROL_ROLES:
            controls += 1
            if not (found["name"] or "").strip():
                unnamed.append(line.strip())
    return unnamed, controls


# The text of a view's live regions (what a screen reader is told when it changes).
LIVE_TEXT_JS = """(view) => [...document.querySelectorAll(
    view + ' [aria-live]:not([aria-live="off"]), ' + view + ' [role="status"], '
    + view + ' [role="alert"]')]
  .filter(node => !node.closest('[aria-hidden="true"]'))
  .map(node => node.textContent).join(' | ')"""

# Focusable things a screen reader cannot reach (inside aria-hidden).
HIDDEN_FOCUSABLE_JS = """(view) => [...document.querySelectorAll(view + ' [aria-hidden="true"]')]
  .flatMap(node => [...node.querySelectorAll('button, input, a[href], [tabindex]')])
  .filter(node => node.tabIndex >= 0).length"""


def live_text(page: Any, view: str) -> str:
    text: str = page.evaluate(LIVE_TEXT_JS, view)
    return text


def wait_for_live(page: Any, view: str, expected: str) -> None:
    page.wait_for_function(
        f"([view, expected]) => ({LIVE_TEXT_JS})(view).includes(expected)",
        arg=[view, expected],
        timeout=10_000,
    )


def show(page: Any, view: str) -> Any:
    page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", view.lstrip("#"))
    locator = page.locator(view)
    locator.wait_for(state="visible", timeout=15_000)
    return locator


def test_every_control_is_named_and_every_change_is_announced(access_page: StudyPage) -> None:
    page = access_page.page
    # The Memory Deck and its progress buttons.
    run_command(page, "tfcoach:open-memory-deck", module=MODULE)
    deck = show(page, DECK)
    card = deck.locator(".jp-tfcoach-deck-card")
    card.filter(has_text=MODULE_TERMS[0].term).wait_for(timeout=15_000)
    unnamed, controls = unnamed_controls(deck)
    assert unnamed == [] and controls >= 8, deck.aria_snapshot()
    for name in ("Export progress", "Import progress", "Reset progress"):
        assert deck.get_by_role("button", name=name).is_visible()
    card.focus()
    page.keyboard.press("Space")  # the flip: its other face is told
    wait_for_live(page, DECK, MODULE_TERMS[0].definition)
    unnamed, _ = unnamed_controls(deck)
    assert unnamed == [], deck.aria_snapshot()
    assert deck.get_by_role("button", name="Good (key 3)").is_enabled()
    page.keyboard.press("3")  # the rating: the session's score is told
    wait_for_live(page, DECK, "1 rated, 1 good or easy")
    wait_for_live(page, DECK, f"New: {len(MODULE_TERMS) - 1}")

    # Match the Pairs: a mismatch, a pair and the score are told.
    run_command(page, "tfcoach:open-match-pairs", module=MODULE)
    board = show(page, BOARD)
    board.locator(".jp-tfcoach-match-tile").first.wait_for(state="visible", timeout=15_000)
    unnamed, controls = unnamed_controls(board)
    assert unnamed == [] and controls >= 14, board.aria_snapshot()
    assert board.get_by_role("checkbox", name="Deal from my due cards").count() == 1
    terms = board.locator(".jp-tfcoach-match-term")
    ids = [terms.nth(i).get_attribute("data-term") or "" for i in range(terms.count())]
    by_id = {term.id: term for term in MODULE_TERMS}

    def tile(side: str, term_id: str) -> Any:
        return board.locator(f".jp-tfcoach-match-{side}[data-term='{term_id}']")

    tile("term", ids[0]).click()
    tile("definition", ids[1]).click()
    wait_for_live(page, BOARD, f"Not a pair: {by_id[ids[0]].term}")
    wait_for_live(page, BOARD, "Mismatches: 1")
    tile("term", ids[0]).click()
    tile("definition", ids[0]).click()
    wait_for_live(page, BOARD, f"A pair: {by_id[ids[0]].term}")
    wait_for_live(page, BOARD, "Pairs: 1 of 6")
    for term_id in ids[1:]:
        tile("term", term_id).click()
        tile("definition", term_id).click()
    wait_for_live(page, BOARD, "points.")

    # The quiz: the model answer and the score are told; its choices are named.
    run_command(page, "tfcoach:open-quiz", module=QUIZ_MODULE)
    quiz = show(page, QUIZ)
    questions = quiz_questions(QUIZ_MODULE)
    quiz.locator(".jp-tfcoach-quiz-progress", has_text="Question 1 of").wait_for(timeout=15_000)
    unnamed, _ = unnamed_controls(quiz)
    assert unnamed == [], quiz.aria_snapshot()
    assert quiz.get_by_role("textbox", name="Your answer").is_visible()
    quiz.get_by_role("button", name="Show the answer").click()
    wait_for_live(page, QUIZ, questions[0].answer.split("\n")[0].replace("`", "")[:40])
    unnamed, controls = unnamed_controls(quiz)
    assert unnamed == [] and controls >= 4, quiz.aria_snapshot()
    for index, _ in enumerate(questions):
        if index:
            quiz.get_by_role("button", name="Show the answer").click()
        quiz.get_by_role("button", name="I had it right").click()
    wait_for_live(page, QUIZ, f"Done: {len(questions)} of {len(questions)} right")

    # The Concept Constellation: its canvas hidden, its list the text alternative.
    run_command(page, "tfcoach:open-constellation")
    constellation = show(page, CONSTELLATION)
    list_buttons = constellation.locator(".jp-tfcoach-constellation-list button")
    list_buttons.first.wait_for(timeout=30_000)
    assert (
        constellation.locator(".jp-tfcoach-constellation-canvas").get_attribute("aria-hidden")
        == "true"
    )
    assert page.evaluate(HIDDEN_FOCUSABLE_JS, CONSTELLATION) == 0
    navigation = constellation.get_by_role("navigation", name="Every term, by module")
    assert navigation.get_by_role("button").count() == len(get_terms())
    unnamed, controls = unnamed_controls(constellation)
    assert unnamed == [] and controls > len(get_terms()), constellation.aria_snapshot()
    assert constellation.get_by_role("searchbox", name="Find a term").is_visible()
    term = MODULE_TERMS[1]
    navigation.get_by_role("button", name=term.term, exact=False).first.click()
    wait_for_live(page, CONSTELLATION, term.definition)
    assert access_page.log.errors() == []


# ---------------------------------------------------------------------------- contrast

# For each element: its text colour and the colour under it, both as painted (the
# backgrounds of it and its ancestors layered from the page down, translucent ones blended),
# and their contrast ratio (WCAG 2).
CONTRAST_JS = """(selectors) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const paint = canvas.getContext('2d', {willReadFrequently: true});
  const pixel = () => [...paint.getImageData(0, 0, 1, 1).data.slice(0, 3)];
  const luminance = rgb => {
    const [r, g, b] = rgb.map(v => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const results = [];
  for (const selector of selectors) {
    const nodes = [...document.querySelectorAll(selector)];
    if (nodes.length === 0) {
      results.push({selector, missing: true});
      continue;
    }
    const node = nodes[0];
    const chain = [];
    for (let at = node; at; at = at.parentElement) {
      chain.unshift(getComputedStyle(at).backgroundColor);
    }
    paint.globalCompositeOperation = 'source-over';
    paint.fillStyle = '#ffffff';
    paint.fillRect(0, 0, 1, 1);
    for (const colour of chain) {
      paint.fillStyle = colour;
      paint.fillRect(0, 0, 1, 1);
    }
    const background = pixel();
    paint.fillStyle = getComputedStyle(node).color;
    paint.fillRect(0, 0, 1, 1);
    const text = pixel();
    const [light, dark] = [luminance(text), luminance(background)].sort((a, b) => b - a);
    results.push({selector, text, background,
                  ratio: Math.round(100 * (light + 0.05) / (dark + 0.05)) / 100});
  }
  return results;
}"""

KEY_ELEMENTS = [
    f"{DECK} .jp-tfcoach-deck-card .jp-tfcoach-deck-term",
    f"{DECK} .jp-tfcoach-deck-card .jp-tfcoach-deck-face",
    f"{DECK} .jp-tfcoach-deck-counts",
    f"{DECK} .jp-tfcoach-deck-session",
    f"{DECK} .jp-tfcoach-deck-help",
    f"{DECK} .jp-tfcoach-deck-export",
    f"{DECK} .jp-tfcoach-deck-reset",
    f"{BOARD} .jp-tfcoach-match-tile:not(.jp-mod-matched):not(.jp-mod-mismatch)",
    f"{BOARD} .jp-tfcoach-match-tile.jp-mod-matched",
    f"{BOARD} .jp-tfcoach-match-tile.jp-mod-mismatch",
    f"{BOARD} .jp-tfcoach-match-status",
    f"{BOARD} button.jp-tfcoach-deck-rate",
    f"{QUIZ} .jp-tfcoach-quiz-question",
    f"{QUIZ} .jp-tfcoach-quiz-yours",
    f"{QUIZ} .jp-tfcoach-quiz-answer p",
    f"{QUIZ} .jp-tfcoach-quiz-ratings button[data-rating='right']",
    f"{QUIZ} .jp-tfcoach-quiz-ratings button[data-rating='wrong']",
    f"{CONSTELLATION} .jp-tfcoach-constellation-search",
    f"{CONSTELLATION} .jp-tfcoach-constellation-mode",
    f"{CONSTELLATION} .jp-tfcoach-constellation-list button",
    f"{CONSTELLATION} .jp-tfcoach-constellation-definition",
]
# The flipped card (its face and its definition), measured separately.
FLIPPED = [
    f"{DECK} .jp-tfcoach-deck-card.jp-mod-flipped .jp-tfcoach-deck-face",
    f"{DECK} .jp-tfcoach-deck-card.jp-mod-flipped .jp-tfcoach-deck-definition",
]


# Where two screenshots of the canvas differ (the chosen star and its outline, drawn or not):
# how many pixels changed, and how many of them, as chosen, contrast 3:1 (WCAG's minimum for
# graphics) with the background.
CHOSEN_STAR_JS = """async ([chosen, cleared, background]) => {
  const pixels = async (png) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + png;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const paint = canvas.getContext('2d', {willReadFrequently: true});
    paint.drawImage(image, 0, 0);
    return paint.getImageData(0, 0, image.width, image.height).data;
  };
  const [on, off] = [await pixels(chosen), await pixels(cleared)];
  const luminance = rgb => 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
  const lin = v => (v /= 255) <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  const back = luminance(background);
  let changed = 0, strong = 0;
  for (let i = 0; i < on.length; i += 4) {
    const delta = Math.abs(on[i] - off[i]) + Math.abs(on[i + 1] - off[i + 1])
      + Math.abs(on[i + 2] - off[i + 2]);
    if (delta > 30) {
      changed += 1;
      const [light, dark] = [luminance([on[i], on[i + 1], on[i + 2]]), back]
        .sort((a, b) => b - a);
      strong += (light + 0.05) / (dark + 0.05) >= 3 ? 1 : 0;
    }
  }
  return {changed, strong};
}"""


def canvas_selector(mode: str) -> str:
    return f"{CONSTELLATION} .jp-tfcoach-constellation-canvas[data-mode='{mode}']"


def chosen_star(page: Any, term_id: str) -> dict[str, int]:
    """How the chosen star differs from the same view with nothing chosen."""
    view = page.locator(CONSTELLATION)
    canvas = view.locator(f".jp-tfcoach-constellation-canvas[data-centred='{term_id}']")
    canvas.wait_for(state="attached", timeout=15_000)
    page.wait_for_timeout(500)  # a frame or two in the theme
    background = measure(page, [f"{CONSTELLATION} .jp-tfcoach-constellation-canvas"])
    chosen = base64.b64encode(canvas.screenshot()).decode()
    view.locator(".jp-tfcoach-constellation-search").press("Escape")  # nothing chosen
    page.wait_for_timeout(500)
    cleared = base64.b64encode(canvas.screenshot()).decode()
    result: dict[str, int] = page.evaluate(
        CHOSEN_STAR_JS, [chosen, cleared, next(iter(background.values()))["background"]]
    )
    # Chosen again, for the next theme (whose change alone must redraw it).
    view.locator(f".jp-tfcoach-constellation-list button[data-term='{term_id}']").click()
    canvas.wait_for(state="attached", timeout=15_000)
    return result


def change_theme(page: Any, theme: str, layout_colour: str) -> None:
    run_command(page, "apputils:change-theme", theme=theme)
    page.wait_for_function(
        """([theme, colour]) => document.body.dataset.jpThemeName === theme
             && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0')
                  .trim() === colour""",
        arg=[theme, layout_colour],
        timeout=30_000,
    )


def measure(page: Any, selectors: list[str]) -> dict[str, dict[str, Any]]:
    results: list[dict[str, Any]] = page.evaluate(CONTRAST_JS, selectors)
    missing = [r["selector"] for r in results if r.get("missing")]
    assert missing == [], missing
    return {r["selector"]: r for r in results}


def test_light_and_dark_themes_keep_every_study_view_readable(access_page: StudyPage) -> None:
    page = access_page.page
    run_command(page, "tfcoach:open-memory-deck", module=MODULE)
    deck = show(page, DECK)
    deck.locator(".jp-tfcoach-deck-card").wait_for(timeout=15_000)
    if "jp-mod-flipped" in (deck.locator(".jp-tfcoach-deck-card").get_attribute("class") or ""):
        deck.locator(".jp-tfcoach-deck-card").click()  # left turned by a test above
    deck.locator(".jp-tfcoach-deck-card .jp-tfcoach-deck-term").wait_for(timeout=15_000)
    # A board with a pair, a mismatch and untouched tiles.
    run_command(page, "tfcoach:open-match-pairs", module=MODULE)
    board = show(page, BOARD)
    board.get_by_role("button", name="New board").click()  # the last one was finished
    board.locator(".jp-tfcoach-match-tile:not(.jp-mod-matched)").first.wait_for(timeout=15_000)
    terms = board.locator(".jp-tfcoach-match-term")
    ids = [terms.nth(i).get_attribute("data-term") for i in range(terms.count())]
    board.locator(f".jp-tfcoach-match-term[data-term='{ids[0]}']").click()
    board.locator(f".jp-tfcoach-match-definition[data-term='{ids[0]}']").click()
    board.locator(f".jp-tfcoach-match-term[data-term='{ids[1]}']").click()
    board.locator(f".jp-tfcoach-match-definition[data-term='{ids[2]}']").click()
    # The quiz with its answer shown and its choices.
    run_command(page, "tfcoach:open-quiz", module=QUIZ_MODULE)
    quiz = show(page, QUIZ)
    again = quiz.get_by_role("button", name="Take it again")
    if again.is_visible():  # finished in the test above
        again.click()
    quiz.locator(".jp-tfcoach-quiz-reveal").click()
    quiz.locator(".jp-tfcoach-quiz-ratings button").first.wait_for(state="visible")
    run_command(page, "tfcoach:open-constellation")
    constellation = show(page, CONSTELLATION)
    constellation.locator(".jp-tfcoach-constellation-list button").first.wait_for(timeout=30_000)
    star = MODULE_TERMS[2].id
    constellation.locator(f".jp-tfcoach-constellation-list button[data-term='{star}']").click()
    constellation.locator(".jp-tfcoach-constellation-definition").wait_for(timeout=10_000)
    canvas = constellation.locator(".jp-tfcoach-constellation-canvas")
    modes = ["3d", "2d"] if canvas.get_attribute("data-mode") == "3d" else ["2d"]
    stars: dict[tuple[str, str], dict[str, int]] = {}

    seen: dict[str, dict[str, dict[str, Any]]] = {}
    low: dict[str, dict[str, Any]] = {}
    for theme, layout_colour in ((LIGHT, "white"), (DARK, "#111")):
        change_theme(page, theme, layout_colour)
        show(page, CONSTELLATION)
        for mode in modes:
            if canvas.get_attribute("data-mode") != mode:
                constellation.locator(".jp-tfcoach-constellation-mode").click()
                page.locator(canvas_selector(mode)).wait_for(timeout=15_000)
            stars[theme, mode] = chosen_star(page, star)
        if len(modes) == 2:  # back to 3D: the next theme's change alone redraws it
            constellation.locator(".jp-tfcoach-constellation-mode").click()
            page.locator(canvas_selector("3d")).wait_for(timeout=15_000)
            page.locator(f"{canvas_selector('3d')}[data-centred='{star}']").wait_for(
                state="attached", timeout=15_000
            )
        show(page, DECK)
        front = measure(page, KEY_ELEMENTS)
        deck.locator(".jp-tfcoach-deck-card").click()  # flipped
        flipped = measure(page, FLIPPED)
        deck.locator(".jp-tfcoach-deck-card").click()  # and back
        seen[theme] = {**front, **flipped}
        low[theme] = {
            selector: (r["ratio"], r["text"], r["background"])
            for selector, r in seen[theme].items()
            if r["ratio"] < 4.5
        }
    assert low == {LIGHT: {}, DARK: {}}, f"contrast below 4.5:1: {low}"
    # The chosen star stands out in both themes (drawn in the theme's text colour).
    faint = {f"{theme}, {mode}": n for (theme, mode), n in stars.items() if n["strong"] < 30}
    assert faint == {}, f"the chosen star does not stand out: {faint}"
    # Theme variables, not fixed colours: every pair changes with the theme.
    same = [
        selector
        for selector, light in seen[LIGHT].items()
        if (light["text"], light["background"])
        == (seen[DARK][selector]["text"], seen[DARK][selector]["background"])
        or light["text"] == seen[DARK][selector]["text"]
    ]
    assert same == [], f"colours that do not follow the theme: {same}"
    change_theme(page, LIGHT, "white")
    assert access_page.log.errors() == []
