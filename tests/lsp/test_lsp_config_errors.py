"""A broken ``pyproject.toml`` is shown to the user (``window/showMessage``, Error) once
per version of the file, not on every keystroke; the document is analysed with the
defaults meanwhile, and the fixed file applies at the next analysis."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.helpers import DATA, codes, config, initialize, open_text, replace_all
from tests.lsp.helpers import wait_published as published

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

TEXT = (DATA / "train.py").read_text(encoding="utf-8")
ALL = ["TFC001", "TFC002"]


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, options={"debounceMs": 0})
    yield
    await lsp_client.shutdown_session()


def errors(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Error]


def write(pyproject: Path, text: str, mtime_ns: int) -> None:
    pyproject.write_text(text, encoding="utf-8")
    os.utime(pyproject, ns=(mtime_ns, mtime_ns))  # a new version, whatever the clock's grain


async def test_a_broken_pyproject_is_shown_once_per_version(
    client: LanguageClient, tmp_path: Path
) -> None:
    client.messages.clear()
    pyproject = tmp_path / "pyproject.toml"
    write(pyproject, "[tool.tfcoach]\nselect = [\n", 1_000_000_000_000_000_000)
    uri = (tmp_path / "train.py").as_uri()
    open_text(client, uri, TEXT)
    assert codes((await published(client, uri, version=1)).diagnostics) == ALL
    (shown,) = errors(client)
    assert str(pyproject) in shown and "invalid TOML" in shown and "\n" not in shown

    # Typing: every change is analysed again, the message is not repeated.
    for version in range(2, 6):
        replace_all(client, uri, TEXT + "\n" * version, version)
        assert codes((await published(client, uri, version=version)).diagnostics) == ALL
    assert errors(client) == [shown]

    # Another broken version of the file: shown once more.
    write(pyproject, '[tool.tfcoach]\nignore = ["NOPE42"]\n', 1_000_000_001_000_000_000)
    for version in range(6, 9):
        replace_all(client, uri, TEXT + "\n" * version, version)
        assert codes((await published(client, uri, version=version)).diagnostics) == ALL
    assert len(errors(client)) == 2 and "NOPE42" in errors(client)[1]

    # Fixed: it applies, and nothing more is shown.
    write(pyproject, '[tool.tfcoach]\nignore = ["TFC002"]\n', 1_000_000_002_000_000_000)
    replace_all(client, uri, TEXT, 9)
    assert codes((await published(client, uri, version=9)).diagnostics) == ["TFC001"]
    assert len(errors(client)) == 2


async def test_a_path_the_file_system_cannot_take_is_a_problem_not_a_failed_analysis(
    client: LanguageClient, tmp_path: Path
) -> None:
    # A NUL in the document's path: looking for its pyproject.toml fails (not with a
    # ConfigError); the document is still analysed, with the defaults, and the user told.
    client.messages.clear()
    uri = (tmp_path / "odd").as_uri() + "%00name/train.py"
    open_text(client, uri, TEXT)
    assert codes((await published(client, uri, version=1)).diagnostics) == ALL
    assert errors(client) == [
        "tfcoach: ignoring [tool.tfcoach]: the configuration could not be read (ValueError)"
    ]
