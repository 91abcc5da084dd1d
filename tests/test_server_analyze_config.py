"""``POST tfcoach/api/analyze`` with the notebook's ``path``: the folder's
``[tool.tfcoach]`` applies (the core resolver the CLI and the language server use),
JupyterLab's settings go on top, and the path stays inside the server's root.

A real jupyter_server (pytest-jupyter) with the extension loaded; files are written
into its root folder (``jp_root_dir``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError, HTTPResponse

from tests.harness import on_server_loop

Fetch = Callable[..., Awaitable[HTTPResponse]]

# One cell with a TFC001 (variable rebound to a tensor) and a TFC002 (print in tf.function).
CELLS = [
    "import tensorflow as tf\n"
    "w = tf.Variable(1.0)\n"
    "w = w - 0.1\n"
    "\n"
    "@tf.function\n"
    "def step(x):\n"
    "    print('tracing', x)\n"
    "    return x * 2\n"
]
BOTH = ["TFC001", "TFC002"]


def project(root: Path, folder: str, table: str | None) -> None:
    """``root/folder`` with a ``pyproject.toml`` holding ``table`` (none if None)."""
    where = root / folder
    where.mkdir(parents=True, exist_ok=True)
    if table is not None:
        (where / "pyproject.toml").write_text(
            f'[project]\nname = "demo"\n\n[tool.tfcoach]\n{table}\n', encoding="utf-8"
        )


async def analyze(jp_fetch: Fetch, **payload: Any) -> dict[str, Any]:
    response = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=json.dumps({"cells": CELLS, **payload})
    )
    assert response.code == 200
    answer: dict[str, Any] = json.loads(response.body)
    return answer


def codes(answer: dict[str, Any]) -> list[str]:
    return sorted(f["code"] for f in answer["findings"])


async def rejected(jp_fetch: Fetch, path: str) -> str:
    with pytest.raises(HTTPClientError) as caught:
        await analyze(jp_fetch, path=path)
    assert caught.value.code == 400
    assert caught.value.response is not None
    message: str = json.loads(caught.value.response.body)["message"]
    return message


@on_server_loop
async def test_the_notebook_folders_pyproject_applies(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    project(jp_root_dir, "course/week1", 'ignore = ["TFC002"]')
    project(jp_root_dir, "plain", None)
    configured = await analyze(jp_fetch, path="course/week1/train.ipynb")
    assert codes(configured) == ["TFC001"]
    assert "config_error" not in configured
    # A subfolder inherits it; a notebook not saved yet there too (no such file).
    nested = await analyze(jp_fetch, path="course/week1/drafts/Untitled1.ipynb")
    assert codes(nested) == ["TFC001"]
    # The same notebook elsewhere, or without a path (as before): every rule.
    assert codes(await analyze(jp_fetch, path="plain/train.ipynb")) == BOTH
    assert codes(await analyze(jp_fetch)) == BOTH
    assert codes(await analyze(jp_fetch, path=None)) == BOTH


@on_server_loop
async def test_a_prefix_in_the_pyproject_works(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    project(jp_root_dir, "prefixed", 'select = ["TFC00"]\nignore = ["TFC001"]')
    assert codes(await analyze(jp_fetch, path="prefixed/nb.ipynb")) == ["TFC002"]


@on_server_loop
async def test_lab_settings_go_on_top(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    project(jp_root_dir, "course", 'ignore = ["TFC002"]')
    path = "course/nb.ipynb"
    # Lab's ignore list replaces the file's (as --ignore and the editors' tfcoach.ignore).
    replaced = await analyze(jp_fetch, path=path, settings={"ignore": ["TFC001"]})
    assert codes(replaced) == ["TFC002"]
    # An empty list given is a list too: nothing ignored.
    assert codes(await analyze(jp_fetch, path=path, settings={"ignore": []})) == BOTH
    # Not given (or null): the file's list stands.
    assert codes(await analyze(jp_fetch, path=path, settings={})) == ["TFC001"]
    assert codes(await analyze(jp_fetch, path=path, settings={"ignore": None})) == ["TFC001"]
    # Prefixes, lower case and select, as everywhere.
    assert codes(await analyze(jp_fetch, settings={"ignore": ["tfc00"]})) == []
    assert codes(await analyze(jp_fetch, settings={"select": ["TFC002"]})) == ["TFC002"]
    # An unknown code is left out and said, the rest still applies.
    unknown = await analyze(jp_fetch, settings={"ignore": ["TFC999", "TFC002"]})
    assert codes(unknown) == ["TFC001"]
    assert "TFC999" in unknown["config_error"]


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ("select = [", "invalid TOML"),
        ('select = ["NOPE42"]', "NOPE42"),
        ('colour = "red"', "unknown key"),
    ],
)
@on_server_loop
async def test_an_invalid_pyproject_is_reported_with_default_findings(
    jp_fetch: Fetch, jp_root_dir: Path, table: str, fragment: str
) -> None:
    project(jp_root_dir, "broken", table)
    answer = await analyze(jp_fetch, path="broken/nb.ipynb", settings={"ignore": ["TFC001"]})
    message = answer["config_error"]
    assert fragment in message
    # One line naming the file as the user knows it (relative to the server's root).
    assert "\n" not in message
    assert "broken/pyproject.toml" in message and str(jp_root_dir) not in message
    # Findings still come, with the defaults and Lab's settings.
    assert codes(answer) == ["TFC002"]
    # Fixed: the next request sees the new version of the file.
    (jp_root_dir / "broken" / "pyproject.toml").write_text(
        '[tool.tfcoach]\nignore = ["TFC002"]\n', encoding="utf-8"
    )
    fixed = await analyze(jp_fetch, path="broken/nb.ipynb")
    assert "config_error" not in fixed and codes(fixed) == ["TFC001"]


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("../outside/nb.ipynb", '".."'),
        ("course/../../nb.ipynb", '".."'),
        ("course\\..\\..\\nb.ipynb", '".."'),
        ("/etc/nb.ipynb", "absolute"),
        ("C:/Windows/nb.ipynb", "absolute"),
        ("course/\x00.ipynb", "NUL"),
    ],
)
@on_server_loop
async def test_a_path_leaving_the_root_is_400(jp_fetch: Fetch, path: str, fragment: str) -> None:
    assert fragment in await rejected(jp_fetch, path)


@on_server_loop
async def test_a_link_out_of_the_root_is_400(
    jp_fetch: Fetch, jp_root_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    project(outside, ".", 'ignore = ["TFC001", "TFC002"]')
    inside_target = jp_root_dir / "inside"
    project(inside_target, ".", 'ignore = ["TFC001"]')
    try:
        os.symlink(outside, jp_root_dir / "escape")
        os.symlink(inside_target, jp_root_dir / "alias")
    except (OSError, NotImplementedError):
        pytest.skip("no symbolic links here")
    assert "outside the server's root" in await rejected(jp_fetch, "escape/nb.ipynb")
    # A link that stays inside the root is followed.
    assert codes(await analyze(jp_fetch, path="alias/nb.ipynb")) == ["TFC002"]


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"path": 3}, '"path" must be a string'),
        ({"settings": ["TFC001"]}, '"settings" must be an object'),
        ({"settings": {"ignore": "TFC001"}}, '"settings"."ignore" must be a list'),
        ({"settings": {"select": [1]}}, '"settings"."select" must be a list'),
    ],
)
@on_server_loop
async def test_malformed_path_or_settings_are_400(
    jp_fetch: Fetch, payload: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await analyze(jp_fetch, **payload)
    assert caught.value.code == 400
    assert caught.value.response is not None
    assert fragment in json.loads(caught.value.response.body)["message"]
