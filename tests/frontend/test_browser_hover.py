"""Hover cards on TensorFlow names inside JupyterLab notebook cells (headless Chromium).

The card is the language server's (title, what the name is bound to, summary, pitfall,
course link) and its course link opens the course tab. One name gets one card; names that
are not TensorFlow's get none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.api_cards import api_card
from tests.conftest import ConsoleLog
from tests.frontend.notebook_page import (
    CELLS_JS,
    NOTEBOOK,
    NOTEBOOK_PANEL_JS,
    code_cell_index,
    open_notebook,
    page_session,
)
from tests.harness import LabServer

pytestmark = pytest.mark.browser

CARD = ".cm-tooltip-hover .jp-tfcoach-hover-card"

# Where, in the editor of cell ``index``, ``fragment`` starts (+ ``offset`` characters).
TOKEN_BOX_JS = f"""async ([path, index, fragment, offset]) => {{
  const notebook = ({NOTEBOOK_PANEL_JS})(path).content;
  // A windowed notebook creates a cell's editor when the cell comes into view.
  await notebook.scrollToItem(index, 'center');
  const cell = notebook.widgets[index];
  await cell.ready;
  const view = cell.editor.editor;
  const at = view.state.doc.toString().indexOf(fragment);
  if (at < 0) return null;
  view.dom.scrollIntoView({{block: 'center'}});
  // The notebook may still scroll or re-measure its cells: the point counts once the
  // token has stayed under it for a few frames.
  const frame = () => new Promise(resolve => requestAnimationFrame(resolve));
  let steady = 0;
  for (let i = 0; i < 300 && steady < 5; i++) {{
    await frame();
    const box = view.coordsAtPos(at + offset);
    const point = box && {{x: box.left + 2, y: (box.top + box.bottom) / 2}};
    const pos = point && view.posAtCoords(point);
    const hit = point && document.elementFromPoint(point.x, point.y);
    const onToken = pos !== null && pos >= at && pos <= at + fragment.length
      && hit && view.contentDOM.contains(hit);
    steady = onToken ? steady + 1 : 0;
    if (steady === 5) return point;
  }}
  return null;
}}"""


ALIASED_CELL = "import tensorflow as t\nv = t.Variable(1.0)\nv.assign_sub(0.5)\n"


@dataclass
class HoverPage:
    page: Any
    log: ConsoleLog
    server: LabServer
    cells: list[dict[str, Any]]

    def open_notebook(self) -> None:
        self.cells = open_notebook(self.page, self.server.lab_url(f"lab/tree/{NOTEBOOK}"))

    def hover(self, index: int, fragment: str, offset: int = 1) -> None:
        """Move the pointer away, then onto ``fragment`` in cell ``index``."""
        page = self.page
        page.mouse.move(5, 5)
        page.locator(CARD).wait_for(state="detached", timeout=5_000)
        # Past CodeMirror's hover delay, so the next hover starts afresh.
        page.wait_for_timeout(500)
        point = page.evaluate(TOKEN_BOX_JS, [NOTEBOOK, index, fragment, offset])
        assert point, f"{fragment!r} is not in cell {index}"
        # As a hand does: enter the editor, then settle on the token.
        page.mouse.move(point["x"] - 3, point["y"])
        page.wait_for_timeout(50)
        page.mouse.move(point["x"], point["y"], steps=3)

    def card(self) -> Any:
        card = self.page.locator(CARD)
        card.wait_for(state="visible", timeout=10_000)
        return card


@pytest.fixture(scope="module")
def hovers(browser: Any, lab_server: LabServer) -> Iterator[HoverPage]:
    yield from page_session(browser, lambda page, log: HoverPage(page, log, lab_server, []))


def test_tf_function_gets_the_card_with_its_course_link(hovers: HoverPage) -> None:
    index = code_cell_index(hovers.cells, "def scale(")
    hovers.hover(index, "tf.function", offset=4)
    card = hovers.card()
    expected = api_card("tf.function")
    assert expected is not None
    text = card.inner_text()
    assert text.startswith("tf.function")
    assert "Pitfall:" in text
    assert expected.summary.split("*")[0].strip() in text
    section = get_course().ref(expected.section_id)
    link = card.locator(".jp-tfcoach-course-link")
    assert link.inner_text() == f"Course: {section['title']}"
    assert hovers.page.locator(CARD).count() == 1

    link.click()
    course = hovers.page.locator(".jp-tfcoach-course")
    course.wait_for(state="visible", timeout=10_000)
    course.locator("h2", has_text=section["title"]).first.wait_for(timeout=10_000)
    hovers.page.evaluate(
        """() => [...window.jupyterapp.shell.widgets('main')]
             .filter(w => w.id.startsWith('tfcoach-course-')).forEach(w => w.close())"""
    )
    hovers.page.evaluate(
        f"(path) => window.jupyterapp.shell.activateById(({NOTEBOOK_PANEL_JS})(path).id)",
        NOTEBOOK,
    )


def test_a_method_of_a_variable_under_an_alias(hovers: HoverPage) -> None:
    page = hovers.page
    index = page.evaluate(
        f"""([path, source]) => {{
          const model = ({NOTEBOOK_PANEL_JS})(path).content.model;
          const index = model.cells.length;
          model.sharedModel.insertCell(index, {{cell_type: 'code', source}});
          return index;
        }}""",
        [NOTEBOOK, ALIASED_CELL],
    )
    hovers.cells = page.evaluate(CELLS_JS, NOTEBOOK)
    hovers.hover(index, "assign_sub", offset=3)
    text = hovers.card().inner_text()
    assert text.startswith("tf.Variable.assign_sub")
    assert "v is bound to a tf.Variable on line 2" in text
    hovers.hover(index, "t.Variable", offset=3)
    assert "written t.Variable here" in hovers.card().inner_text()
    hovers.hover(index, "tensorflow", offset=3)
    hovers.page.wait_for_timeout(1_200)
    assert hovers.page.locator(CARD).count() == 0  # a module name: no card


@pytest.mark.parametrize(
    ("cell", "fragment"),
    [("def power(", "range"), ("def noisy(", "tracing with"), ("w = w - 0.01 * g", "variable is")],
)
def test_names_that_are_not_tensorflow_get_no_card(
    hovers: HoverPage, cell: str, fragment: str
) -> None:
    hovers.hover(code_cell_index(hovers.cells, cell), fragment, offset=2)
    # CodeMirror asks after its hover delay (300 ms): wait well past it.
    hovers.page.wait_for_timeout(1_200)
    assert hovers.page.locator(CARD).count() == 0


def test_no_console_errors(hovers: HoverPage) -> None:
    assert hovers.log.errors("tfcoach") == []
