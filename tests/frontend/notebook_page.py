"""What the JupyterLab and Notebook 7 browser tests share: opening the example notebook on a
page, reading its cells, and a page that records console messages and page errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

from tests.conftest import ConsoleLog

# The coach tour (tests/data/course/coach-tour.ipynb): one cell per pitfall, copied into the
# servers' root beside the course notebooks (tests/conftest.py).
NOTEBOOK = "coach-tour.ipynb"

# The notebook widget showing ``path`` (Lab and Notebook 7 keep documents in 'main').
NOTEBOOK_PANEL_JS = """
(path) => [...window.jupyterapp.shell.widgets('main')].find(
  w => w.context && w.context.path === path)
"""

CELLS_JS = f"""
(path) => ({NOTEBOOK_PANEL_JS})(path).content.widgets.map(
  c => ({{id: c.model.id, type: c.model.type, source: c.model.sharedModel.getSource()}}))
"""

_READY_JS = f"""(path) => {{
  const app = window.jupyterapp;
  const nb = app && ({NOTEBOOK_PANEL_JS})(path);
  return nb && nb.sessionContext.session && nb.sessionContext.session.kernel
    && nb.sessionContext.session.kernel.connectionStatus === 'connected'
    && app.commands.hasCommand('tfcoach:open-panel');
}}"""


def new_page(browser: Any) -> tuple[Any, Any, ConsoleLog]:
    """A browser context and page whose console messages and page errors (with the stack:
    an error thrown by our code names the tfcoach bundle there) go to a ``ConsoleLog``."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    log = ConsoleLog()
    page.on("console", lambda msg: log.messages.append((msg.type, msg.text)))
    page.on("pageerror", lambda exc: log.page_errors.append(f"{exc}\n{exc.stack or ''}"))
    return context, page, log


class _OpensNotebook(Protocol):
    def open_notebook(self) -> None: ...


_Session = TypeVar("_Session", bound=_OpensNotebook)


def page_session(browser: Any, make: Callable[[Any, ConsoleLog], _Session]) -> Iterator[_Session]:
    """For a module fixture (``yield from``): a fresh page, ``make(page, log)`` with the
    example notebook opened on it, and the page's context closed afterwards."""
    context, page, log = new_page(browser)
    try:
        session = make(page, log)
        session.open_notebook()
        yield session
    finally:
        context.close()


def open_notebook(page: Any, url: str) -> list[dict[str, Any]]:
    """Open the example notebook at ``url``; once its kernel is connected and our commands
    are registered, its cells (id, type, source)."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_function(_READY_JS, arg=NOTEBOOK, timeout=60_000)
    cells: list[dict[str, Any]] = page.evaluate(CELLS_JS, NOTEBOOK)
    return cells


def code_cell_index(cells: list[dict[str, Any]], fragment: str) -> int:
    for index, cell in enumerate(cells):
        if cell["type"] == "code" and fragment in cell["source"]:
            return index
    raise AssertionError(f"no code cell contains {fragment!r}")


def hover_print_finding(page: Any, cell: Any) -> None:
    """The TFC002 mark under ``print`` in ``cell``, and its tooltip (message, rule, course
    link) on hover; the tooltip is left open."""
    cell.scroll_into_view_if_needed()
    mark = cell.locator(".cm-lintRange.jp-tfcoach-mark-TFC002")
    mark.first.wait_for(state="visible", timeout=15_000)
    assert "print" in mark.first.inner_text()
    mark.first.hover()
    tooltip = page.locator(".cm-tooltip-lint")
    tooltip.wait_for(state="visible", timeout=5_000)
    text = tooltip.inner_text()
    assert "TFC002" in text and "tf.print" in text
    assert tooltip.locator(".jp-tfcoach-course-link").count() == 1


def assert_panel_lists_print_finding(page: Any) -> None:
    findings = page.locator("#tfcoach-panel .jp-tfcoach-finding[data-code='TFC002']")
    assert findings.count() >= 1
    assert "print" in findings.first.inner_text()


def wait_until_notebook_ready(page: Any, path: str, timeout: float = 60_000) -> None:
    """Wait until the notebook ``path`` shows its cells, its kernel is connected and our
    commands are registered (however it was opened: a URL, the file browser)."""
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
    page.wait_for_function(_READY_JS, arg=path, timeout=timeout)
