"""The server's bootstrap in a kernel whose working directory holds a ``jupyterlab_tfcoach``
of the user's (a file or a package): the installed monitor is loaded and the user's file
never runs.

The kernel is started the way JupyterLab starts one for a notebook: ``POST /api/sessions``
for a notebook in that folder, so the kernel's working directory (and IPython's ``''``
entry of ``sys.path``) is the folder.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_tfcoach.server.handlers import SETTINGS_HUB
from jupyterlab_tfcoach.server.kernels import MonitorState, ReportHub
from tests.harness import on_server_loop
from tests.server.test_server_kernels import Fetch, RunningKernel, wait_for

pytestmark = pytest.mark.kernel

FOLDER = "downloaded-course"


def plant(root: Path, layout: str, marker: Path) -> None:
    """The user's ``jupyterlab_tfcoach`` in ``root/FOLDER``: it writes ``marker`` when run,
    and a helper module of theirs that their cells import."""
    folder = root / FOLDER
    folder.mkdir()
    code = (
        f"open({str(marker)!r}, 'w').write('the user file ran')\n"
        "def load_for_panel(*args, **kwargs):\n"
        "    return 'loaded'\n"
    )
    if layout == "module":
        (folder / "jupyterlab_tfcoach.py").write_text(code, encoding="utf-8")
    else:
        (folder / "jupyterlab_tfcoach").mkdir()
        (folder / "jupyterlab_tfcoach" / "__init__.py").write_text(code, encoding="utf-8")
    (folder / "helper.py").write_text("ANSWER = 42\n", encoding="utf-8")


@pytest.mark.parametrize("layout", ["module", "package"])
@on_server_loop
async def test_bootstrap_loads_the_installed_monitor_not_the_users_file(
    layout: str,
    jp_root_dir: Path,
    jp_fetch: Fetch,
    jp_serverapp: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pytest-jupyter puts the test process's sys.path (the repository first) into
    # PYTHONPATH, which would hide the folder behind the real package: the kernel gets a
    # user's environment instead, where IPython's '' comes before site-packages.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    marker = tmp_path / "marker.txt"
    plant(Path(jp_root_dir), layout, marker)
    hub: ReportHub = jp_serverapp.web_app.settings[SETTINGS_HUB]
    body = {
        "path": f"{FOLDER}/lesson.ipynb",
        "type": "notebook",
        "kernel": {"name": "python3"},
    }
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    kernel = RunningKernel(jp_serverapp, jp_fetch, json.loads(response.body)["kernel"]["id"])
    await kernel.connect()
    try:
        await wait_for(
            lambda: hub.monitor_state(kernel.kernel_id) is not MonitorState.PENDING,
            "the bootstrap reply",
        )
        assert hub.monitor_state(kernel.kernel_id) is MonitorState.LOADED
        # The user's cells still import from their folder: sys.path was restored.
        done = await kernel.ok(
            "import os, sys, helper, jupyterlab_tfcoach\n"
            "where = os.getcwd()\n"
            "package = jupyterlab_tfcoach.__file__",
            user_expressions={
                "where": "where",
                "package": "package",
                "answer": "helper.ANSWER",
                "cwd_first": "sys.path.index('') < min(i for i, p in enumerate(sys.path) "
                "if p.endswith('site-packages'))",
            },
        )
        values = {
            name: value["data"]["text/plain"]
            for name, value in done.reply["user_expressions"].items()
        }
        assert values["answer"] == "42"
        assert values["cwd_first"] == "True"  # the folder would win a plain import
        assert (
            Path(ast.literal_eval(values["where"])).resolve()
            == (Path(jp_root_dir) / FOLDER).resolve()
        )
        installed = Path(__file__).resolve().parents[2] / "jupyterlab_tfcoach" / "__init__.py"
        assert Path(ast.literal_eval(values["package"])).resolve() == installed
        # The monitor runs: the cell has its report.
        reports = await kernel.wait_reports(1)
        assert reports[-1]["execution_count"] == done.reply["execution_count"]
        assert not marker.exists(), "the user's jupyterlab_tfcoach ran"
    finally:
        kernel.close()
