"""A real editor: headless Emacs with eglot, configured by the exact snippet in
editors/README.md, reads our diagnostics back through flymake. Install it with
``apt-get install -y emacs-nox elpa-eglot`` (Debian 12: Emacs 28.2, eglot 1.9)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import analyze_source
from tests.lsp.helpers import DATA, REPO, server_env

pytestmark = [
    pytest.mark.editor,
    pytest.mark.timeout(60),
    pytest.mark.skipif(
        shutil.which("emacs") is None,
        reason="emacs not installed (apt-get install -y emacs-nox elpa-eglot)",
    ),
]

EGLOT_MISSING = 4  # exit status of emacs_diagnostics.el when eglot cannot be loaded
# A pitfall the README snippet ignores, both as initializationOptions and as settings.
UNROLLED_LOOP = """

@tf.function
def unrolled(x):
    for _ in range(100):
        x = x + 1
    return x
"""
FLYMAKE_TYPE = {
    "error": "eglot-error",
    "warning": "eglot-warning",
    "information": "eglot-note",
    "hint": "eglot-note",
}


def readme_snippet() -> str:
    """The elisp block of the "Emacs (eglot)" section of editors/README.md."""
    readme = (REPO / "editors" / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Emacs (eglot)\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```elisp\n(.*?)^```$", section, re.DOTALL | re.MULTILINE)
    assert match is not None, "no ```elisp block in the Emacs section of editors/README.md"
    return match.group(1)


def tfcoach_lsp_dir(tmp_path: Path) -> Path:
    """A directory with a ``tfcoach-lsp`` command, as the snippet runs it from PATH: the
    installed console script, or a stand-in running this interpreter's ``lsp_server``."""
    installed = Path(sys.executable).with_name("tfcoach-lsp")
    if installed.is_file() and os.access(installed, os.X_OK):
        return installed.parent
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "tfcoach-lsp"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m lsp_server "$@"\n')
    script.chmod(0o755)
    return bin_dir


def test_emacs_eglot_shows_tfcoach_diagnostics(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source = project / "train.py"
    # Non-ASCII before the findings: the server's UTF-16 columns must land on the
    # same characters in Emacs.
    text = (DATA / "train.py").read_text(encoding="utf-8") + UNROLLED_LOOP
    source.write_text(text, encoding="utf-8")
    init = tmp_path / "init.el"
    init.write_text(readme_snippet(), encoding="utf-8")

    findings = analyze_source(text)
    assert {f.code for f in findings} == {"TFC001", "TFC002", "TFC004"}
    expected = sorted(
        # Emacs columns count characters (code points), 0-based; findings are 1-based.
        (
            f.line,
            f.column - 1,
            f.end_line,
            f.end_column - 1,
            FLYMAKE_TYPE[f.severity.value],
            f"tfcoach [{f.code}]: {f.message}",
        )
        for f in findings
        if f.code != "TFC004"
    )

    env = server_env(TFCOACH_FILE=str(source), TFCOACH_TIMEOUT="20")
    env["PATH"] = os.pathsep.join([str(tfcoach_lsp_dir(tmp_path)), env.get("PATH", "")])
    env["HOME"] = str(tmp_path)  # no user config, nothing written to the real home
    proc = subprocess.run(
        ["emacs", "--batch", "-Q", "-l", str(init), "-l", str(DATA / "emacs_diagnostics.el")],
        env=env,
        cwd=project,
        timeout=45,
        check=False,
        capture_output=True,
        text=True,
    )
    if proc.returncode == EGLOT_MISSING:
        pytest.skip("eglot not installed (apt-get install -y elpa-eglot)")
    assert proc.returncode == 0, proc.stderr
    diagnostics = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    got = sorted(
        (d["line"], d["column"], d["end_line"], d["end_column"], d["type"], d["text"])
        for d in diagnostics
    )
    assert got == expected
