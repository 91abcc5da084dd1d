"""JupyterLab loads in headless Chromium with our labextension active."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ConsoleLog
from tests.harness import LabServer

pytestmark = pytest.mark.browser


def test_lab_loads_with_tfcoach_active(
    lab_server: LabServer, lab_page: tuple[Any, ConsoleLog]
) -> None:
    page, log = lab_page
    page.goto(lab_server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)

    # Our command is registered and opens our panel in the right sidebar.
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('tfcoach:open-panel')",
        timeout=30_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('tfcoach:open-panel')")
    panel = page.locator("#tfcoach-panel")
    panel.wait_for(state="visible", timeout=10_000)
    assert "TensorFlow" in panel.inner_text()

    assert log.errors("tfcoach") == []
