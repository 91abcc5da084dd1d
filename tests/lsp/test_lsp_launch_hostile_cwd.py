"""Every launcher of the language server, run from a folder that holds a hostile
``lsp_server/`` package and ``argparse.py``: the installed server answers ``--version``
and nothing of that folder runs.

The launchers: the jupyterlab-lsp spec's argv (the console script next to this
interpreter), the fallback ``python -P|-I -m lsp_server`` forms, and the command the VS
Code extension computes (its ``server-options.js``, run with Node).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_server import __version__
from lsp_server.jupyter_lsp_spec import module_command, server_command, spec
from tests.lsp.helpers import server_env

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[2]
SERVER_OPTIONS = REPO / "editors" / "vscode" / "server-options.js"
HOSTILE_FILES = ("lsp_server/__init__.py", "lsp_server/__main__.py", "argparse.py")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A workspace whose files each write a marker into ``markers/`` when imported."""
    folder = tmp_path / "workspace"
    markers = tmp_path / "markers"
    markers.mkdir()
    for index, name in enumerate(HOSTILE_FILES):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        marker = markers / f"{index}-{path.name}"
        path.write_text(
            f"open({str(marker)!r}, 'w').write('imported')\nprint('hostile {name}')\n",
            encoding="utf-8",
        )
    return folder


def markers_of(folder: Path) -> list[str]:
    return sorted(path.name for path in (folder.parent / "markers").iterdir())


def version_from(argv: list[str], cwd: Path) -> str:
    result = subprocess.run(
        [*argv, "--version"], cwd=cwd, capture_output=True, text=True, env=server_env(), timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_folder_is_hostile_to_a_plain_dash_m(hostile: Path) -> None:
    """What every launcher did before: the folder's package runs, not the server."""
    result = subprocess.run(
        [sys.executable, "-m", "lsp_server", "--version"],
        cwd=hostile,
        capture_output=True,
        text=True,
        env=server_env(),
        timeout=30,
    )
    assert "hostile lsp_server/__init__.py" in result.stdout
    assert markers_of(hostile) != []


def test_jupyterlab_lsp_spec(hostile: Path) -> None:
    argv = spec(None)["tfcoach-lsp"]["argv"]
    assert argv[-1] == "--notebooks-in-jupyterlab"
    assert version_from(argv, hostile) == f"tfcoach-lsp {__version__}"
    assert markers_of(hostile) == []


def test_console_script_next_to_the_interpreter(hostile: Path) -> None:
    argv = server_command(sys.executable)
    assert argv == [str(Path(sys.executable).parent / "tfcoach-lsp")]
    assert version_from(argv, hostile) == f"tfcoach-lsp {__version__}"
    assert markers_of(hostile) == []


def test_module_command_without_a_console_script(hostile: Path) -> None:
    argv = module_command(sys.executable)
    assert argv[1] == "-P"
    assert version_from(argv, hostile) == f"tfcoach-lsp {__version__}"
    assert markers_of(hostile) == []


def node() -> str:
    found = shutil.which("node") or shutil.which("node", path=str(REPO / ".venv" / "bin"))
    if found is None:
        pytest.skip("no node to run the VS Code extension's helpers")
    return found


def vscode_command(interpreter: str, console_scripts: bool) -> list[str]:
    """The command ``serverCommand`` in the VS Code extension builds for ``interpreter``."""
    exists = "undefined" if console_scripts else "() => false"
    script = (
        f"const {{ serverCommand }} = require({json.dumps(str(SERVER_OPTIONS))});\n"
        f"const server = serverCommand(process.argv[1], undefined, {exists});\n"
        "console.log(JSON.stringify([server.command, ...server.args]));\n"
    )
    result = subprocess.run(
        [node(), "-e", script, interpreter],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
        env={**os.environ, "NODE_PATH": ""},
    )
    return list(json.loads(result.stdout))


@pytest.mark.parametrize("console_scripts", [True, False], ids=["script", "isolated"])
def test_vscode_extension_command(hostile: Path, console_scripts: bool) -> None:
    argv = vscode_command(sys.executable, console_scripts)
    if console_scripts:
        assert argv == [str(Path(sys.executable).parent / "tfcoach-lsp")]
    else:
        assert argv == [sys.executable, "-I", "-m", "lsp_server"]
    assert version_from(argv, hostile) == f"tfcoach-lsp {__version__}"
    assert markers_of(hostile) == []
