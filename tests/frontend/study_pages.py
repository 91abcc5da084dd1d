"""What the browser tests of the course tab and the study tools share: the course page
session, a server root serving THIS checkout's labextension build with a fresh study store,
a server started (and restarted) on it, a page opened on JupyterLab, and the readers of the
Memory Deck and the Concept Constellation that several test modules use."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import jupyterlab_tfcoach
from tests.conftest import ConsoleLog
from tests.frontend.notebook_page import new_page
from tests.harness import LabServer

BUILD = Path(jupyterlab_tfcoach.__file__).parent / "labextension"
# The tab of a course module and its parts.
TAB = "#tfcoach-course-{module}"
DECK = ".jp-tfcoach-deck"
CONSTELLATION = "#tfcoach-constellation"

_Server = TypeVar("_Server", bound=LabServer)


# ------------------------------------------------------------------------------ pages
@dataclass
class CoursePage:
    page: Any
    log: ConsoleLog
    server: LabServer

    def tab(self, module_id: str) -> Any:
        return self.page.locator(TAB.format(module=module_id))

    def wait_for_heading_at_top(self, module_id: str, title: str) -> None:
        self.page.wait_for_function(
            """([selector, title]) => {
              const page = document.querySelector(selector + ' .jp-tfcoach-course-page');
              if (!page || page.offsetParent === null) return false;
              const top = page.getBoundingClientRect().top;
              return [...page.querySelectorAll('h1, h2')].some(h =>
                h.textContent.replace('\\u00b6', '').trim() === title
                && Math.abs(h.getBoundingClientRect().top - top) < 60);
            }""",
            arg=[TAB.format(module=module_id), title],
            timeout=10_000,
        )

    def open_module(self, module_id: str) -> Any:
        """Open (or show) a module's tab as the course command does; its tab."""
        self.page.evaluate(
            "(id) => window.jupyterapp.commands.execute('tfcoach:open-course', {module: id})",
            module_id,
        )
        tab = self.tab(module_id)
        tab.locator(".jp-tfcoach-course-toc-sections button").first.wait_for(timeout=10_000)
        return tab

    def toolbar_button(self, module_id: str, label: str) -> Any:
        return self.tab(module_id).locator(".jp-Toolbar .jp-ToolbarButtonComponent", has_text=label)

    def run_from_palette(self, label: str) -> None:
        """Open Lab's modal command palette, find ``label`` and run it."""
        page = self.page
        palette = page.locator(".jp-ModalCommandPalette")
        search = palette.locator(".lm-CommandPalette-input")
        # A document that just opened may take the focus back, which closes the modal
        # palette: open it again until it stays.
        for _ in range(5):
            page.keyboard.press("Escape")
            page.evaluate(
                "() => window.jupyterapp.commands.execute('apputils:activate-command-palette')"
            )
            try:
                search.fill(label, timeout=4_000)
                item = palette.locator(".lm-CommandPalette-item", has_text=label).first
                item.click(timeout=4_000)
                return
            except PlaywrightTimeout:
                continue
        raise AssertionError(f"the command palette did not stay open to run {label!r}")

    def open_documents(self) -> list[str]:
        paths: list[str] = self.page.evaluate(
            """() => [...window.jupyterapp.shell.widgets('main')]
                 .filter(w => w.context).map(w => w.context.path)"""
        )
        return paths


@dataclass
class StudyPage(CoursePage):
    requested: list[str] = field(default_factory=list)  # every URL the page asked for


def open_lab(page: Any, server: LabServer) -> None:
    page.goto(server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_function(
        """() => window.jupyterapp
             && window.jupyterapp.commands.hasCommand('tfcoach:open-memory-deck')""",
        timeout=60_000,
    )
    page.wait_for_selector("#jp-MainMenu", timeout=30_000)


def study_page_session(browser: Any, server: LabServer) -> Iterator[StudyPage]:
    """For a fixture (``yield from``): a fresh page on JupyterLab, every URL it asks for
    recorded, its context closed afterwards."""
    context, page, log = new_page(browser)
    session = StudyPage(page, log, server)
    page.on("request", lambda request: session.requested.append(request.url))
    try:
        open_lab(page, server)
        yield session
    finally:
        context.close()


def served_build(page: Any) -> str:
    """The remote entry the page loads for jupyterlab_tfcoach."""
    load: str = page.evaluate(
        """() => JSON.parse(document.getElementById('jupyter-config-data').textContent)
             .federated_extensions.find(e => e.name === 'jupyterlab_tfcoach').load"""
    )
    return load


# ---------------------------------------------------------------------------- servers
def study_root(tmp_path_factory: pytest.TempPathFactory, name: str, **tfcoach: object) -> Path:
    """A server root whose Jupyter path serves this checkout's labextension build (set
    ``JUPYTER_PATH`` to ``<root>/jupyter-path``) and whose config gives a fresh study
    store plus the ``TfCoach`` options given."""
    if not (BUILD / "package.json").exists():
        pytest.fail(f"{BUILD} is missing: build the labextension first (`jlpm build`)")
    root = tmp_path_factory.mktemp(name)
    # Federated extensions: the first labextensions folder of the Jupyter path that has a
    # name wins, and JUPYTER_PATH comes first.
    extensions = root / "jupyter-path" / "labextensions"
    extensions.mkdir(parents=True)
    (extensions / "jupyterlab_tfcoach").symlink_to(BUILD, target_is_directory=True)
    config = root / "config"
    config.mkdir()
    options = {"study_db_path": str(root / "study.sqlite3"), **tfcoach}
    (config / "jupyter_server_config.json").write_text(json.dumps({"TfCoach": options}))
    return root


def server_on(root: Path, kind: type[_Server], port: int | None = None) -> _Server:
    """A server of ``kind`` (``LabServer`` or Notebook 7's ``NotebookServer``) started on a
    ``study_root``, with its Jupyter path; not yet waited for."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(root / "jupyter-path"))
        return kind(root, port=port)


def served_study_server(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    kind: type[_Server] = LabServer,  # type: ignore[assignment]
    prepare: Callable[[_Server], None] | None = None,
    **tfcoach: object,
) -> Iterator[_Server]:
    """For a module fixture (``yield from``): a server on a fresh ``study_root`` (its
    ``TfCoach`` options ``tfcoach``), ``prepare(server)`` run before it is waited for,
    stopped afterwards."""
    server = server_on(study_root(tmp_path_factory, name, **tfcoach), kind)
    try:
        if prepare is not None:
            prepare(server)
        server.wait_until_up()
        yield server
    finally:
        server.stop()


class Servers:
    """The server of a module: stopped and started again on the same root and port
    (``kind``: ``LabServer`` or Notebook 7's ``NotebookServer``)."""

    def __init__(self, root: Path, kind: type[LabServer] = LabServer) -> None:
        self.root = root
        self.kind = kind
        self.current = self._start()

    def _start(self, port: int | None = None) -> LabServer:
        server = server_on(self.root, self.kind, port)
        server.wait_until_up()
        return server

    def restart(self) -> LabServer:
        port = self.current.port
        self.current.stop()
        self.current = self._start(port)
        return self.current


def deck_cards(server: LabServer, terms: list[str]) -> dict[str, Any]:
    """The server's cards of ``terms`` (``GET study/deck``), by term id."""
    url = server.api_url("tfcoach/api/study/deck") + "&terms=" + ",".join(terms)
    with urllib.request.urlopen(url, timeout=30) as response:
        return {card["term"]: card for card in json.loads(response.read())["cards"]}


# ------------------------------------------------------------------------ study views
def deck_text(page: Any, part: str) -> str:
    text: str = page.locator(f"{DECK} {part}").first.inner_text()
    return text


def wait_for_deck_text(page: Any, part: str, expected: str) -> None:
    page.wait_for_function(
        """([selector, expected]) => {
             const node = document.querySelector(selector);
             return node !== null && node.textContent.includes(expected);
           }""",
        arg=[f"{DECK} {part}", expected],
        # The first card of a newly opened deck waits for the course and the study
        # state: on a loaded machine (eight test processes on two cores) over 15 s once.
        timeout=30_000,
    )


def details_show(page: Any, name: str) -> None:
    page.wait_for_function(
        """(name) => {
             const h = document.querySelector('#tfcoach-constellation '
               + '.jp-tfcoach-constellation-details h3');
             return h !== null && h.textContent === name;
           }""",
        arg=name,
        timeout=15_000,
    )


def click_the_centred_term(page: Any, term_id: str) -> None:
    """Once the view has brought the term to its centre: clear the choice (Escape in the
    search box), then click the canvas's centre, as a learner clicks a star."""
    view = page.locator(CONSTELLATION)
    view.locator(f".jp-tfcoach-constellation-canvas[data-centred='{term_id}']").wait_for(
        state="attached", timeout=15_000
    )
    view.locator(".jp-tfcoach-constellation-search").press("Escape")
    assert "Choose a term" in view.locator(".jp-tfcoach-constellation-details").inner_text()
    box = view.locator(".jp-tfcoach-constellation-canvas").bounding_box()
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # The libraries find the star under the pointer when it moves (on their next frame):
    # point first (coming from a corner: a pointer already there does not move), then click.
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.mouse.move(*centre, steps=4)
    page.wait_for_timeout(300)
    page.mouse.click(*centre)
