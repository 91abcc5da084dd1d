"""ARCHITECTURE.md, the one-page map, names every module of the package, the language server
and the JupyterLab extension: a module added without a word on where it fits fails here.

A module is named by its file name in backticks (``engine.py``; a module of a subpackage
may be written with its folder, ``traces/tracing.py``). The rules are one family, named by
their pattern ``rules/tfcNNN_*.py``; ``__init__.py``, ``__main__.py`` and ``_version.py``
are not listed (their folder is).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
NOT_LISTED = {"__init__.py", "__main__.py", "_version.py"}
RULE_MODULE = re.compile(r"tfc\d{3}_\w+\.py")


def modules() -> list[Path]:
    found: list[Path] = []
    for package in ("jupyterlab_tfcoach", "lsp_server"):
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO)
            if "labextension" in relative.parts or path.name in NOT_LISTED:
                continue
            if RULE_MODULE.fullmatch(path.name):
                continue
            found.append(relative)
    found.extend(p.relative_to(REPO) for p in sorted((REPO / "labextension/src").rglob("*.ts")))
    return found


def named(relative: Path) -> bool:
    """``name.py`` in backticks, alone or after its folder(s): ``traces/tracing.py``."""
    pattern = rf"`(?:[\w./-]*/)?{re.escape(relative.name)}`"
    return re.search(pattern, ARCHITECTURE) is not None


def test_every_module_is_named_in_the_architecture_page() -> None:
    assert len(modules()) > 50  # the walk found the tree
    missing = [str(path) for path in modules() if not named(path)]
    assert missing == [], f"ARCHITECTURE.md does not name: {missing}"


def test_the_rules_are_named_as_a_family() -> None:
    assert "rules/tfcNNN_*.py" in ARCHITECTURE
