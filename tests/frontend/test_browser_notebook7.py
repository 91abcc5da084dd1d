"""The TF Coach frontend in Jupyter Notebook 7 (``jupyter notebook``), end to end in Chromium.

Notebook 7 is built on JupyterLab and loads the same labextension, but its shell differs: one
document per page, side panels opened from the View menu, a modal command palette, and a main
area that refuses a second widget (the course opens in the bottom panel there). One server and
one page for the module: the tests run in file order and build on each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import ConsoleLog
from tests.frontend.notebook_page import (
    NOTEBOOK,
    NOTEBOOK_PANEL_JS,
    assert_panel_lists_print_finding,
    code_cell_index,
    hover_print_finding,
    open_notebook,
    page_session,
)
from tests.harness import NotebookServer

pytestmark = pytest.mark.browser

# Runs one cell through the notebook's own command (it resolves once the kernel replied and
# went idle); the tests then wait for what the panel shows.
RUN_CELL_JS = f"""
async ({{path, index}}) => {{
  const app = window.jupyterapp;
  const nbPanel = ({NOTEBOOK_PANEL_JS})(path);
  const nb = nbPanel.content;
  nb.deselectAll();
  nb.activeCellIndex = index;
  const cell = nb.widgets[index];
  const ok = await app.commands.execute('notebook:run-cell');
  return {{id: cell.model.id, ok, executionCount: cell.model.executionCount}};
}}
"""


class Notebook7:
    """The shared page and the notebook's cells."""

    def __init__(self, page: Any, log: ConsoleLog, server: NotebookServer) -> None:
        self.page = page
        self.log = log
        self.server = server
        self.cells: list[dict[str, Any]] = []

    def open_notebook(self) -> None:
        self.cells = open_notebook(self.page, self.server.lab_url(f"notebooks/{NOTEBOOK}"))

    def cell_index(self, fragment: str) -> int:
        return code_cell_index(self.cells, fragment)

    def cell(self, fragment: str) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(self.cell_index(fragment))

    def entry(self, fragment: str) -> Any:
        cell_id = self.cells[self.cell_index(fragment)]["id"]
        return self.page.locator(f'#tfcoach-panel .jp-tfcoach-entry[data-key="{cell_id}"]')

    def run(self, fragment: str) -> dict[str, Any]:
        result: dict[str, Any] = self.page.evaluate(
            RUN_CELL_JS, {"path": NOTEBOOK, "index": self.cell_index(fragment)}
        )
        assert result["ok"] is True and result["executionCount"] is not None, result
        return result

    def run_from_palette(self, label: str) -> None:
        """Open Notebook 7's command palette (Ctrl+Shift+C), find ``label`` and run it."""
        page = self.page
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Shift+C")
        search = page.locator(".lm-CommandPalette .lm-CommandPalette-input")
        search.wait_for(state="visible", timeout=5_000)
        search.fill(label)
        item = page.locator(".lm-CommandPalette-item", has_text=label).first
        item.wait_for(state="visible", timeout=5_000)
        item.click()

    def right_sidebar_menu(self, label: str) -> None:
        """View > Right Sidebar > ``label``, as a user opens a side panel in Notebook 7."""
        page = self.page
        page.locator("#menu-panel .lm-MenuBar-itemLabel", has_text="View").click()
        page.locator(".lm-Menu .lm-Menu-itemLabel", has_text="Right Sidebar").first.click()
        page.locator(".lm-Menu .lm-Menu-itemLabel", has_text=label).first.click()


@pytest.fixture(scope="module")
def nb7(browser: Any, notebook_server: NotebookServer) -> Iterator[Notebook7]:
    yield from page_session(browser, lambda page, log: Notebook7(page, log, notebook_server))


def test_it_is_notebook_7_with_the_notebook_in_the_main_area(nb7: Notebook7) -> None:
    page = nb7.page
    assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    assert page.url.split("?")[0].endswith(f"/notebooks/{NOTEBOOK}")
    assert page.locator("#main-panel .jp-Notebook").is_visible()
    # The side panels start closed: the coach opens when asked.
    assert page.locator("#tfcoach-panel").is_hidden()


def test_panel_opens_from_the_command_palette(nb7: Notebook7) -> None:
    page = nb7.page
    nb7.run_from_palette("Open the TF Coach panel")
    panel = page.locator("#jp-right-stack #tfcoach-panel")
    panel.wait_for(state="visible", timeout=10_000)
    text = panel.inner_text()
    assert "TF Coach" in text
    assert NOTEBOOK.removesuffix(".ipynb") in text
    assert "Run a cell that uses TensorFlow" in text
    # The notebook is still there, next to the panel.
    assert page.locator("#main-panel .jp-Notebook").is_visible()


def test_panel_opens_from_the_right_sidebar(nb7: Notebook7) -> None:
    page = nb7.page
    panel = page.locator("#jp-right-stack #tfcoach-panel")
    # The side panel's close button hides it...
    page.locator("#jp-right-stack .jp-SidePanel-collapse").click()
    panel.wait_for(state="hidden", timeout=5_000)
    # ...and View > Right Sidebar lists it under its title.
    nb7.right_sidebar_menu("Show TF Coach")
    panel.wait_for(state="visible", timeout=5_000)
    assert "Run a cell that uses TensorFlow" in panel.inner_text()


def test_running_cells_shows_a_retrace_entry(nb7: Notebook7) -> None:
    page = nb7.page
    nb7.run("import tensorflow as tf")
    nb7.run("def scale(")

    entry = nb7.entry("def scale(")
    entry.wait_for(state="visible", timeout=20_000)
    assert entry.locator(".jp-tfcoach-entry-title").inner_text() == "scale"
    badges = entry.locator(".jp-tfcoach-badges").inner_text()
    assert "3 traces" in badges and "2 retraces" in badges
    shape = entry.locator(".jp-tfcoach-reason-shape")
    assert shape.locator("code").first.inner_text() == "t"
    assert "shape (2,) \u2192 (3,)" in shape.inner_text()
    value = entry.locator(".jp-tfcoach-reason-python_value")
    assert value.locator("code").first.inner_text() == "factor"
    assert "2.0 \u2192 3.0" in value.inner_text()
    # Only the cell that reports has an entry (importing TensorFlow reports nothing).
    assert page.locator("#tfcoach-panel .jp-tfcoach-entry").count() == 1

    # And a badge on the cell itself.
    badge = nb7.cell("def scale(").locator(".jp-tfcoach-cell-badge")
    badge.wait_for(state="visible", timeout=5_000)
    assert badge.inner_text() == "2 retraces"


def test_cell_badge_reopens_the_closed_panel_at_its_entry(nb7: Notebook7) -> None:
    page = nb7.page
    panel = page.locator("#jp-right-stack #tfcoach-panel")
    page.locator("#jp-right-stack .jp-SidePanel-collapse").click()
    panel.wait_for(state="hidden", timeout=5_000)
    cell = nb7.cell("def scale(")
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-tfcoach-cell-badge").click()
    panel.wait_for(state="visible", timeout=5_000)
    key = nb7.cells[nb7.cell_index("def scale(")]["id"]
    page.wait_for_function(
        """(key) => document.activeElement &&
             document.activeElement.closest('.jp-tfcoach-entry')?.dataset.key === key""",
        arg=key,
        timeout=5_000,
    )


def test_clicking_an_entry_selects_its_cell(nb7: Notebook7) -> None:
    page = nb7.page
    page.evaluate(
        f"(path) => {{ ({NOTEBOOK_PANEL_JS})(path).content.activeCellIndex = 0; }}", NOTEBOOK
    )
    nb7.entry("def scale(").locator(".jp-tfcoach-entry-jump").click()
    page.wait_for_function(
        f"([path, index]) => ({NOTEBOOK_PANEL_JS})(path).content.activeCellIndex === index",
        arg=[NOTEBOOK, nb7.cell_index("def scale(")],
        timeout=5_000,
    )
    assert nb7.cell("def scale(").is_visible()


def test_inline_finding_for_print_in_tf_function(nb7: Notebook7) -> None:
    hover_print_finding(nb7.page, nb7.cell("def noisy("))
    nb7.page.mouse.move(5, 5)
    # The panel lists it under the notebook's static findings.
    assert_panel_lists_print_finding(nb7.page)


def test_course_link_opens_the_section_under_the_notebook(nb7: Notebook7) -> None:
    page = nb7.page
    entry = nb7.entry("def scale(")
    entry.locator(".jp-tfcoach-trace .jp-tfcoach-course-link").first.click()
    # Notebook 7 keeps the notebook as the page's only main widget: the course is a tab of the
    # bottom panel, and the notebook and the coach panel stay in view.
    course = page.locator("#jp-down-stack .jp-tfcoach-course")
    course.wait_for(state="visible", timeout=10_000)
    heading = course.locator("h2", has_text="Retracing").first
    heading.wait_for(state="visible", timeout=10_000)
    view_box = course.bounding_box()
    heading_box = heading.bounding_box()
    assert view_box and heading_box
    # Readable: the bottom panel opens at a good share of the page, not at a tab bar's height.
    assert view_box["height"] >= 0.3 * 900, view_box
    assert view_box["y"] - 5 <= heading_box["y"] <= view_box["y"] + view_box["height"] / 2
    assert course.locator("script").count() == 0
    tab = page.locator("#jp-down-stack .lm-TabBar-tab", has_text="Course")
    assert tab.count() == 1
    assert page.locator("#main-panel .jp-Notebook").is_visible()
    assert page.locator("#jp-right-stack #tfcoach-panel").is_visible()

    # The tab closes like any other; the bottom panel goes away with it.
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    page.locator("#jp-down-stack").wait_for(state="hidden", timeout=5_000)
    assert page.locator(".jp-tfcoach-course").count() == 0


def test_course_opens_from_the_command_palette(nb7: Notebook7) -> None:
    page = nb7.page
    nb7.run_from_palette("Open the TF Coach course")
    course = page.locator("#jp-down-stack .jp-tfcoach-course")
    course.wait_for(state="visible", timeout=10_000)
    course.locator("h1, h2").first.wait_for(state="visible", timeout=10_000)
    assert "tf.function" in course.inner_text()
    assert page.locator("#main-panel .jp-Notebook").is_visible()


def test_no_console_errors(nb7: Notebook7) -> None:
    errors = nb7.log.errors()
    ours = [e for e in errors if "tfcoach" in e.lower()]
    assert ours == [], ours
    warnings = [
        text for kind, text in nb7.log.messages if kind == "warning" and "tfcoach" in text.lower()
    ]
    assert warnings == [], warnings
