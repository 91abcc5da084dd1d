"""One version: ``jupyterlab_tfcoach/_version.py``, read by the wheel, the CLI, the
language server and the lab extension's package.json alike."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from jupyterlab_tfcoach._version import __version__

ROOT = Path(__file__).resolve().parent.parent


def test_installed_metadata_and_package_json_carry_the_one_version() -> None:
    assert version("jupyterlab-tfcoach") == __version__
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == __version__


def test_the_language_server_learns_its_version_without_the_jupyter_entry_points() -> None:
    # The package's __init__ (the Jupyter entry points) is imported as the parent of
    # every module, but it imports nothing heavy: no jupyter_server, no IPython.
    code = (
        "import sys, lsp_server; "
        "print(lsp_server.__version__); "
        "print(sorted(m for m in ('jupyter_server', 'IPython', 'tornado') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.split("\n")[:2] == [__version__, "[]"]
