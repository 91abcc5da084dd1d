"""JupyterLab shows the code its inline analysis left out, in the cell, never silence (#24).

An expression nested more than 200 levels deep is valid Python that the analysis does not
walk: the server answers it in ``syntax_errors`` (its message starts ``too deeply nested to
check``) and the cell gets no findings from it. Nothing else would tell the learner, so the
cell shows a warning at that expression, in the server's words. Code Python itself refuses
(300 nested parentheses: "too many nested parentheses") is a quiet 'info' mark: running the
cell says so loudly, the mark only explains why the cell has no findings meanwhile.

JupyterLab in headless Chromium; the inline findings are static analysis, so no cell runs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.conftest import ConsoleLog
from tests.frontend.test_browser_config import OPEN_JS, marks
from tests.harness import LabServer
from tests.server.test_server_analyze_config import CELLS

pytestmark = pytest.mark.browser

PATH = "problems/deep.ipynb"
# A TFC001 and a TFC002: their marks say the notebook's analysis is in the editors.
FINDINGS = CELLS[0]
# Valid Python, 300 unary minus signs deep; the analysis cuts it at level 201. The emoji
# before it is one code point (the server's columns) but two UTF-16 units (CodeMirror's).
DEEP = 'label = "\N{GRINNING FACE}"; x = ' + "-" * 300 + "1"
# The part of DEEP nested past 200 levels: what the warning underlines.
LEFT_OUT = "-" * 100 + "1"
# What Python's tokenizer refuses (more than 200 open parentheses): a syntax error.
PARENS = "y = " + "(" * 300 + "1" + ")" * 300


def write_notebook(path: Path, sources: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{index}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for index, source in enumerate(sources)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")


def wait_until_still(page: Any, mark: Any, timeout: float = 5.0) -> None:
    """Wait (at most ``timeout`` seconds) until ``mark``'s box is the same twice in a row,
    250 ms apart: the editor has finished scrolling and measuring that line."""
    previous = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        box = mark.bounding_box()
        if box is not None and box == previous:
            return
        previous = box
        page.wait_for_timeout(250)


def tooltip_text(page: Any, mark: Any) -> str:
    """The lint tooltip's text when the pointer rests on ``mark``; the pointer then leaves.

    A long line is scrolled sideways to bring the mark under the pointer, and the editor
    may still scroll or re-measure as the notebook settles; CodeMirror also closes a lint
    tooltip whenever the cell's diagnostics are set again (the kernel starting may bring a
    second analysis). So the pointer waits until the mark stops moving, and a hover that
    met no mark, or whose tooltip closed, is tried again (on a busy machine it took more
    than three tries of three seconds once)."""
    tooltip = page.locator(".cm-tooltip-lint")
    attempts = 6
    for attempt in range(attempts):
        mark.scroll_into_view_if_needed()
        wait_until_still(page, mark)
        mark.hover()
        try:
            tooltip.wait_for(state="visible", timeout=5_000)
            break
        except PlaywrightTimeoutError:
            if attempt == attempts - 1:
                raise
            page.mouse.move(1, 1)
    text: str = tooltip.inner_text()
    page.mouse.move(1, 1)
    tooltip.wait_for(state="hidden", timeout=5_000)
    return text


def test_code_left_out_of_the_analysis_is_shown_in_its_cell(
    lab_server: LabServer, lab_page: tuple[Any, ConsoleLog]
) -> None:
    write_notebook(lab_server.notebook_dir / PATH, [FINDINGS, DEEP, PARENS])
    page, log = lab_page
    page.goto(lab_server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('tfcoach:open-panel')",
        timeout=60_000,
    )
    page.evaluate(OPEN_JS, PATH)
    # The analysis's answer is shown in every cell at once: once TFC001 is marked, it is in.
    page.wait_for_function(
        "(path) => [...window.jupyterapp.shell.widgets('main')].some("
        "w => w.context && w.context.path === path"
        " && w.node.querySelector('.cm-lintRange.jp-tfcoach-mark-TFC001'))",
        arg=PATH,
        timeout=60_000,
    )
    assert marks(page, PATH, "TFC002") >= 1
    cells = page.locator(".jp-Notebook .jp-CodeCell")

    # The expression nested too deeply: a warning from where it was cut to the line's end
    # (the columns converted from code points: the emoji before it counts once).
    deep = cells.nth(1).locator(".cm-lintRange.jp-tfcoach-problem-depth")
    deep.first.wait_for(state="attached", timeout=5_000)
    assert "".join(deep.all_inner_texts()) == LEFT_OUT
    assert deep.first.evaluate("node => node.classList.contains('cm-lintRange-warning')")
    text = tooltip_text(page, deep.first)
    assert "too deeply nested to check" in text
    assert "it was left out of the analysis" in text

    # Code Python refuses: a quiet 'info' mark saying why the cell has no findings.
    refused = cells.nth(2).locator(".cm-lintRange.jp-tfcoach-problem-syntax")
    refused.first.wait_for(state="attached", timeout=5_000)
    assert refused.first.evaluate("node => node.classList.contains('cm-lintRange-info')")
    text = tooltip_text(page, refused.first)
    assert "too many nested parentheses" in text
    assert "TF Coach checks this cell once it parses" in text

    # The cells that parse and nest normally carry no such mark.
    assert cells.nth(0).locator(".jp-tfcoach-problem").count() == 0
    assert log.errors("tfcoach") == []
