"""Every monitor module imports on its own, first, in a fresh interpreter.

The kernel extension imports the package in one order; a learner's tool, a test or a later
import order may start elsewhere. An import cycle between the error families and the
symptom readers once made ``symptoms/logits_losses.py`` fail when imported first, while the
extension's own order hid it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jupyterlab_tfcoach

PACKAGE = Path(jupyterlab_tfcoach.__file__).parent
PROBE = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.startswith("jupyterlab_tfcoach")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {type(error).__name__}: {error}")
print("\\n".join(failed))
"""


def monitor_modules() -> list[str]:
    names = []
    for path in sorted((PACKAGE / "monitor").rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_each_monitor_module_imports_first_on_its_own(tmp_path: Path) -> None:
    names = monitor_modules()
    assert len(names) > 100
    # The probe imports the monitor once per module: compiled once into a folder of the
    # test's own, each later import reads the bytecode (where the environment forbids
    # writing it, every import compiled every module again: minutes under load).
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path), "PYTHONDONTWRITEBYTECODE": ""}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *names], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
