"""A finding's tooltip stays open while the notebook changes around it (JupyterLab).

The notebook changes often without its code changing: a cell runs, its output and
execution count arrive. Each change asks for the findings again, and the answer is the
same; setting a cell's diagnostics again would close the tooltip the learner is reading,
so an unchanged answer leaves the editor alone. A real edit still replaces the marks.

JupyterLab in headless Chromium; the findings are static analysis, so no cell runs: the
output is added to the other cell's model, as a kernel's reply is.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ConsoleLog
from tests.frontend.notebook_page import NOTEBOOK_PANEL_JS, hover_print_finding
from tests.frontend.test_browser_config import open_and_wait_for_tfc001
from tests.frontend.test_browser_inline_problems import write_notebook
from tests.harness import LabServer
from tests.server.test_server_analyze_config import CELLS

pytestmark = pytest.mark.browser

PATH = "tooltips/steady.ipynb"
OTHER_CELL = "total = 1 + 2\nprint(total)\n"

# What a kernel's reply does to a cell: an output arrives in its model.
ADD_OUTPUT_JS = f"""([path, index]) => {{
  const cell = ({NOTEBOOK_PANEL_JS})(path).content.widgets[index];
  const output = {{output_type: 'display_data', data: {{'text/plain': '3'}}, metadata: {{}}}};
  cell.model.outputs.add(output);
}}"""


def test_the_tooltip_stays_open_while_another_cell_gets_its_output(
    lab_server: LabServer, lab_page: tuple[Any, ConsoleLog]
) -> None:
    write_notebook(lab_server.notebook_dir / PATH, [CELLS[0], OTHER_CELL])
    page, log = lab_page
    page.goto(lab_server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('tfcoach:open-panel')",
        timeout=60_000,
    )
    open_and_wait_for_tfc001(page, PATH)
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(0)
    hover_print_finding(page, cell)
    tooltip = page.locator(".cm-tooltip-lint")

    # The other cell "runs" three times while the pointer rests on the mark. Each output
    # is a change of the notebook: after the debounce its code is compared, found the
    # same, and the findings are applied again (no request: the code did not change).
    for _ in range(3):
        page.evaluate(ADD_OUTPUT_JS, [PATH, 1])
        page.wait_for_timeout(1_200)
        assert tooltip.is_visible(), "the tooltip closed when another cell got its output"
    assert "TFC002" in tooltip.inner_text()
    outputs = page.locator(".jp-Notebook .jp-CodeCell").nth(1).locator(".jp-OutputArea-output")
    assert outputs.count() == 3

    # A real edit still replaces the marks: the print becomes tf.print, its mark goes.
    page.mouse.move(1, 1)
    tooltip.wait_for(state="hidden", timeout=5_000)
    page.evaluate(
        f"""(path) => {{
          const model = ({NOTEBOOK_PANEL_JS})(path).content.widgets[0].model.sharedModel;
          model.setSource(model.getSource().replace("print('tracing', x)", "tf.print(x)"));
        }}""",
        PATH,
    )
    # (Replacing the source removes every mark at once; the new answer brings TFC001 back.)
    page.wait_for_function(
        f"""(path) => {{
          const node = ({NOTEBOOK_PANEL_JS})(path).node;
          return node.querySelectorAll('.cm-lintRange.jp-tfcoach-mark-TFC001').length > 0
            && node.querySelectorAll('.cm-lintRange.jp-tfcoach-mark-TFC002').length === 0;
        }}""",
        arg=PATH,
        timeout=30_000,
    )
    assert log.errors("tfcoach") == []
