"""Fixtures: a real kernel, a real jupyter_server (pytest-jupyter), JupyterLab and Notebook 7
in Chromium."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from jupyter_core.utils import ensure_event_loop

from jupyterlab_tfcoach.course import NOTEBOOKS_DIR
from tests.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    KernelSession,
    KernelSetup,
    LabServer,
    NotebookServer,
)

pytest_plugins = ["pytest_jupyter.jupyter_server"]

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# `tfcoach check` keeps a result cache next to the nearest pyproject.toml: the repo's, for
# tests that run it from here. Tests keep theirs out of the working tree.
os.environ.setdefault("TFCOACH_CACHE_DIR", tempfile.mkdtemp(prefix="tfcoach-test-cache-"))

# Playwright's sync API runs its own event loop on the main thread. pytest-jupyter's
# autouse loop fixtures would adopt that running loop and then try to close it, so
# tests that drive a browser get no pytest-jupyter loop (they start their own servers).
_OWN_LOOP_MARKERS = ("browser", "vscode")


# Tiers (README, "Tests"): a test that uses a kernel fixture, a browser or TensorFlow in a
# child process gets its marker from what it uses, so a new test lands in the right tier
# without anyone remembering to mark it; `make test-fast` leaves these out.
# Fixtures that start a kernel which imports TensorFlow (the modules' own ones by name),
# and one that starts a plain kernel.
_TENSORFLOW_KERNEL_FIXTURES = frozenset({"kernel", "monitor_run", "executed", "executions"})
_KERNEL_FIXTURES = _TENSORFLOW_KERNEL_FIXTURES | {"start_kernel"}
_BROWSER_FIXTURES = frozenset({"browser", "lab_page"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = frozenset(getattr(item, "fixturenames", ()))
        if fixtures & _KERNEL_FIXTURES:
            item.add_marker(pytest.mark.kernel)
        if fixtures & _TENSORFLOW_KERNEL_FIXTURES:
            item.add_marker(pytest.mark.tensorflow)
        if fixtures & _BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        function = getattr(item, "function", None)
        code = getattr(function, "__code__", None)
        if code is not None and "run_tensorflow" in code.co_names:  # ``tests/tf_runner.py``
            item.add_marker(pytest.mark.tensorflow)


def _drives_a_browser(request: pytest.FixtureRequest) -> bool:
    return any(request.node.get_closest_marker(name) for name in _OWN_LOOP_MARKERS)


@pytest.fixture(autouse=True)
def jp_asyncio_loop(request: pytest.FixtureRequest) -> Iterator[asyncio.AbstractEventLoop | None]:
    if _drives_a_browser(request):
        yield None
        return
    loop = ensure_event_loop(prefer_selector_loop=True)
    yield loop
    if not loop.is_running():
        loop.close()


@pytest.fixture(autouse=True)
def jp_server_cleanup(
    jp_asyncio_loop: asyncio.AbstractEventLoop | None,
) -> Iterator[None]:
    yield
    if jp_asyncio_loop is None:
        return
    from jupyter_server.serverapp import ServerApp

    app = ServerApp.instance()
    try:
        jp_asyncio_loop.run_until_complete(app._cleanup())
    except (RuntimeError, SystemExit):
        pass
    if hasattr(app, "kernel_manager"):
        app.kernel_manager.context.destroy()
    ServerApp.clear_instance()


@pytest.fixture
def tfcoach_config() -> dict[str, Any]:
    """``TfCoach`` options for the pytest-jupyter server; a test module overrides this."""
    return {}


@pytest.fixture
def jp_server_config(tfcoach_config: dict[str, Any]) -> dict[str, Any]:
    """Every pytest-jupyter server runs with our server extension enabled."""
    return {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_tfcoach": True}},
        "TfCoach": tfcoach_config,
    }


@pytest.fixture(scope="module")
def kernel(request: pytest.FixtureRequest) -> Iterator[KernelSession]:
    """The test module's IPython kernel, one per module (TensorFlow imports once, ~5 s).

    Prepared as the module's ``KERNEL`` (a ``KernelSetup``) says; by default the monitor
    is loaded as the server extension loads it, then NumPy, TensorFlow and Keras imported.
    """
    setup = getattr(request.module, "KERNEL", KernelSetup())
    yield from setup.start()


_Server = TypeVar("_Server", bound=LabServer)


# The browser tests' own notebook, one cell per pitfall (the first edition's module-1 notebook).
COACH_TOUR = Path(__file__).parent / "data" / "course" / "coach-tour.ipynb"


def _serve_examples(server: _Server) -> Iterator[_Server]:
    """Copy the course notebooks and the coach tour into ``server``'s root, start it, stop it
    afterwards."""
    try:
        for notebook in [*NOTEBOOKS_DIR.glob("*.ipynb"), COACH_TOUR]:
            shutil.copy(notebook, server.notebook_dir / notebook.name)
        server.wait_until_up()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab with our extensions, on fresh root/workspace/settings dirs, examples copied in."""
    yield from _serve_examples(LabServer(tmp_path_factory.mktemp("lab")))


@pytest.fixture(scope="module")
def notebook_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotebookServer]:
    """Jupyter Notebook 7 (``jupyter notebook``) set up like ``lab_server``, examples copied in."""
    server = NotebookServer(tmp_path_factory.mktemp("notebook7"))
    yield from _serve_examples(server)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module; Playwright's loop stops with it, so later modules
    (kernel and server tests) get event loops of their own."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


class ConsoleLog:
    """Console messages and page errors seen by one page."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []
        self.page_errors: list[str] = []

    def errors(self, containing: str = "") -> list[str]:
        found = [text for kind, text in self.messages if kind == "error"] + self.page_errors
        return [text for text in found if containing.lower() in text.lower()]


@pytest.fixture
def lab_page(browser: Any, lab_server: LabServer) -> Iterator[tuple[Any, ConsoleLog]]:
    """A new browser context and page; console errors collected for assertions."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    log = ConsoleLog()
    page.on("console", lambda msg: log.messages.append((msg.type, msg.text)))
    page.on("pageerror", lambda exc: log.page_errors.append(str(exc)))
    try:
        yield page, log
    finally:
        context.close()
