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


def links(answer: dict[str, Any]) -> list[str]:
    return [f["course"]["url"] for f in answer["findings"]]


PLANTED = 'select = ["TFC002"]\ncourse-base-url = "https://planted.example/course"'


@on_server_loop
async def test_a_pyproject_above_the_root_does_not_apply(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    # Planted in the folder that holds the server's root (as anyone can in /tmp).
    project(jp_root_dir.parent, ".", PLANTED)
    for path in ("nb.ipynb", "course/week1/nb.ipynb"):
        answer = await analyze(jp_fetch, path=path)
        assert codes(answer) == BOTH and "config_error" not in answer
        assert not any("planted.example" in url for url in links(answer))
    # The root's own pyproject.toml is the last one that counts.
    project(jp_root_dir, ".", 'ignore = ["TFC001"]')
    answer = await analyze(jp_fetch, path="course/week1/nb.ipynb")
    assert codes(answer) == ["TFC002"]
    assert not any("planted.example" in url for url in links(answer))


@on_server_loop
async def test_a_pyproject_linked_from_outside_the_root_is_not_read(
    jp_fetch: Fetch, jp_root_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    project(outside, ".", PLANTED)
    project(jp_root_dir, "inside", 'ignore = ["TFC001"]')
    (jp_root_dir / "linked").mkdir()
    (jp_root_dir / "aliased").mkdir()
    try:
        os.symlink(outside / "pyproject.toml", jp_root_dir / "linked" / "pyproject.toml")
        os.symlink(
            jp_root_dir / "inside" / "pyproject.toml", jp_root_dir / "aliased" / "pyproject.toml"
        )
    except (OSError, NotImplementedError):
        pytest.skip("no symbolic links here")
    answer = await analyze(jp_fetch, path="linked/nb.ipynb")
    assert codes(answer) == BOTH
    assert not any("planted.example" in url for url in links(answer))
    message = answer["config_error"]
    assert message.startswith("ignoring [tool.tfcoach]: linked/pyproject.toml: ")
    assert "outside the server's root" in message and "not read" in message
    assert str(tmp_path) not in message and "elsewhere" not in message
    # A link to a file inside the root is read.
    assert codes(await analyze(jp_fetch, path="aliased/nb.ipynb")) == ["TFC002"]


@on_server_loop
async def test_a_pyproject_over_1_mib_is_a_config_error(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    padding = "# " + "x" * 78 + "\n"
    project(jp_root_dir, "huge", 'ignore = ["TFC001"]\n' + padding * (2 * 1024 * 1024 // 81))
    size = (jp_root_dir / "huge" / "pyproject.toml").stat().st_size
    assert size > 2 * 1024 * 1024 - 100
    answer = await analyze(jp_fetch, path="huge/nb.ipynb")
    assert answer["config_error"] == (
        f"ignoring [tool.tfcoach]: huge/pyproject.toml: {size} bytes, over the limit of "
        "1048576 bytes (1 MiB) for a pyproject.toml; not read"
    )
    assert codes(answer) == BOTH  # the defaults


@on_server_loop
async def test_a_pyproject_too_deep_to_parse_is_a_config_error(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    depth = 100_000
    project(jp_root_dir, "deep", 'ignore = ["TFC001"]\nx = ' + "[" * depth + "]" * depth)
    answer = await analyze(jp_fetch, path="deep/nb.ipynb")
    assert answer["config_error"] == (
        "ignoring [tool.tfcoach]: deep/pyproject.toml: nested too deeply to parse"
    )
    assert codes(answer) == BOTH


@pytest.mark.parametrize(
    ("table", "secret", "fragment"),
    [
        ('select = ["sk-live-0123456789abcdef"]', "sk-live", "unknown rule code (known:"),
        ('ignore = "TFC001, hunter2-password"', "hunter2", "`ignore`: unknown rule code"),
        ('course-base-url = "ftp://secret.example/x"', "secret.example", "`course-base-url`"),
        ('course-base-url = "https://a.example/<secret>"', "secret", "`course-base-url`"),
        ('"a key holding a secret: ' + "s" * 100 + '" = 1', "s" * 50, "unknown key(s) a key"),
    ],
)
@on_server_loop
async def test_config_errors_name_the_file_and_key_but_not_its_text(
    jp_fetch: Fetch, jp_root_dir: Path, table: str, secret: str, fragment: str
) -> None:
    project(jp_root_dir, "course", table)
    message = (await analyze(jp_fetch, path="course/nb.ipynb"))["config_error"]
    assert message.startswith("ignoring [tool.tfcoach]: course/pyproject.toml: ")
    assert fragment in message
    assert secret not in message and str(jp_root_dir) not in message


@on_server_loop
async def test_a_pyproject_that_is_not_utf8_is_named_without_its_bytes(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    (jp_root_dir / "latin").mkdir()
    (jp_root_dir / "latin" / "pyproject.toml").write_bytes(
        b'[tool.tfcoach]\nignore = ["TFC001"]  # r\xe9sum\xe9\n'
    )
    message = (await analyze(jp_fetch, path="latin/nb.ipynb"))["config_error"]
    assert message == (
        "ignoring [tool.tfcoach]: latin/pyproject.toml: cannot read: not UTF-8 (at byte 39)"
    )
