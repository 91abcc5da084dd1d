"""A real editor: headless Neovim (Debian's 0.7) reads our diagnostics back through
``vim.diagnostic.get``. Install it with ``apt-get install -y neovim``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import analyze_source
from tests.lsp.helpers import DATA, server_env

pytestmark = [
    pytest.mark.editor,
    pytest.mark.timeout(90),
    pytest.mark.skipif(
        shutil.which("nvim") is None, reason="nvim not installed (apt-get install -y neovim)"
    ),
]


def test_neovim_shows_tfcoach_diagnostics(tmp_path: Path) -> None:
    source = DATA / "train.py"
    out = tmp_path / "diagnostics.json"
    env = server_env(TFCOACH_PYTHON=sys.executable, TFCOACH_FILE=str(source), TFCOACH_OUT=str(out))
    env["HOME"] = str(tmp_path)  # no user config, no shada in the real home
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    subprocess.run(
        ["nvim", "--headless", "--clean", "-c", f"luafile {DATA / 'neovim_diagnostics.lua'}"],
        env=env,
        timeout=60,
        check=True,
        capture_output=True,
    )
    result = json.loads(out.read_text())
    assert result["ok"] is True
    text = source.read_text(encoding="utf-8")
    lines = text.split("\n")
    expected = sorted(
        # Neovim reports byte columns; the server sent UTF-16: both sides must agree.
        (f.line - 1, len(lines[f.line - 1][: f.column - 1].encode()), f.code, f.message)
        for f in analyze_source(text)
    )
    got = sorted((d["lnum"], d["col"], d["code"], d["message"]) for d in result["diagnostics"])
    assert got == expected
    assert {d["source"] for d in result["diagnostics"]} == {"tfcoach"}
