"""JupyterLab honours the notebook folder's ``[tool.tfcoach]``: the page sends the
notebook's path, the server reads the ``pyproject.toml`` above it (as ``tfcoach check``
does) and decides which findings come back; an invalid one is shown in a notification.

JupyterLab in headless Chromium; the inline findings are static analysis, so no cell runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ConsoleLog
from tests.frontend.notebook_page import NOTEBOOK_PANEL_JS
from tests.harness import LabServer
from tests.server.test_server_analyze_config import CELLS

pytestmark = pytest.mark.browser

# One code cell with a TFC001 and a TFC002, as the server test sends it.
SOURCE = CELLS[0]

# How many inline marks of a rule the notebook at ``path`` shows (-1: not open yet).
MARKS_JS = f"""({{path, code}}) => {{
  const panel = ({NOTEBOOK_PANEL_JS})(path);
  return panel ? panel.node.querySelectorAll('.cm-lintRange.jp-tfcoach-mark-' + code).length : -1;
}}"""

OPEN_JS = "(path) => window.jupyterapp.commands.execute('docmanager:open', {path})"

# Edit the notebook's first cell (a new analysis request).
EDIT_JS = f"""({{path, text}}) => {{
  ({NOTEBOOK_PANEL_JS})(path).content.widgets[0].model.sharedModel.setSource(text);
}}"""


def write_notebook(folder: Path, pyproject: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "c0",
                "metadata": {},
                "outputs": [],
                "source": SOURCE,
            }
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (folder / "train.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    if pyproject is not None:
        (folder / "pyproject.toml").write_text(pyproject, encoding="utf-8")


def marks(page: Any, path: str, code: str) -> int:
    count: int = page.evaluate(MARKS_JS, {"path": path, "code": code})
    return count


def open_and_wait_for_tfc001(page: Any, path: str) -> None:
    """Open ``path`` and wait for its analysis: TFC001 is never ignored here, so its mark
    shows once the answer (every finding of the cell at once) is in the editor."""
    page.evaluate(OPEN_JS, path)
    page.wait_for_function(
        f"(path) => ({MARKS_JS})({{path, code: 'TFC001'}}) > 0", arg=path, timeout=60_000
    )


def test_the_notebook_folders_pyproject_decides_the_inline_findings(
    lab_server: LabServer, lab_page: tuple[Any, ConsoleLog]
) -> None:
    root = lab_server.notebook_dir
    write_notebook(root / "plain", None)
    write_notebook(root / "configured", '[tool.tfcoach]\nignore = ["TFC002"]\n')
    write_notebook(root / "broken", "[tool.tfcoach]\nignore = [\n")
    page, log = lab_page
    page.goto(lab_server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('tfcoach:open-panel')",
        timeout=60_000,
    )

    # Without a pyproject.toml: both findings.
    open_and_wait_for_tfc001(page, "plain/train.ipynb")
    assert marks(page, "plain/train.ipynb", "TFC002") >= 1

    # The same notebook where [tool.tfcoach] ignores TFC002: no TFC002 mark.
    open_and_wait_for_tfc001(page, "configured/train.ipynb")
    assert marks(page, "configured/train.ipynb", "TFC002") == 0

    # An invalid pyproject.toml: the defaults apply, and the page says what is wrong, once.
    open_and_wait_for_tfc001(page, "broken/train.ipynb")
    assert marks(page, "broken/train.ipynb", "TFC002") >= 1
    toast = page.locator(".Toastify__toast", has_text="broken/pyproject.toml")
    toast.first.wait_for(state="visible", timeout=15_000)
    assert "invalid TOML" in toast.first.inner_text()
    for extra in ("\n# edit 1\n", "\n# edit 2\n"):  # typing: new analyses, same error
        page.evaluate(EDIT_JS, {"path": "broken/train.ipynb", "text": SOURCE + extra})
        page.wait_for_timeout(1_500)
    assert toast.count() == 1
    # ... and the other notebooks are not affected.
    assert marks(page, "configured/train.ipynb", "TFC002") == 0

    assert log.errors("tfcoach") == []
