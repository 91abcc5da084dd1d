"""``POST tfcoach/api/analyze`` with a hostile or slow ``path``, on a real jupyter_server.

- A path over the bounds (``MAX_PATH_CHARS`` characters, ``MAX_PATH_PARTS`` parts) is a 400
  at once, before the file system is touched: a 488 KiB path used to hold the event loop
  for a minute, a path of 100,000 parts got the server killed for its memory.
- A legal path that takes long to resolve (a chain of links) is resolved in a thread: the
  server goes on answering other requests (``/api/status``) meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError, HTTPResponse

from jupyterlab_tfcoach.server.handlers import MAX_PATH_CHARS, MAX_PATH_PARTS
from tests.harness import on_server_loop

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow

Fetch = Callable[..., Awaitable[HTTPResponse]]

CELLS = ["import tensorflow as tf\n\n@tf.function\ndef step(x):\n    print(x)\n    return x\n"]
# Far below the minute the resolution of a 488 KiB path took on the event loop.
QUICK_SECONDS = 2.0


async def analyze(jp_fetch: Fetch, path: str) -> HTTPResponse:
    body = json.dumps({"cells": CELLS, "path": path})
    return await jp_fetch("tfcoach", "api", "analyze", method="POST", body=body)


async def rejected(jp_fetch: Fetch, path: str) -> tuple[str, float]:
    """The 400's message and how long the answer took."""
    started = time.monotonic()
    with pytest.raises(HTTPClientError) as caught:
        await analyze(jp_fetch, path)
    elapsed = time.monotonic() - started
    assert caught.value.code == 400
    assert caught.value.response is not None
    answer: dict[str, Any] = json.loads(caught.value.response.body)
    return str(answer["message"]), elapsed


@on_server_loop
async def test_a_488_kib_path_is_a_quick_400(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    # Folders that exist, so resolving would have walked (and lstat'ed) every part.
    (jp_root_dir / "a").mkdir()
    path = "a/" * (488 * 512) + "nb.ipynb"
    message, elapsed = await rejected(jp_fetch, path)
    assert f"limit of {MAX_PATH_CHARS}" in message and str(len(path)) in message
    assert elapsed < QUICK_SECONDS
    assert "a/a/a" not in message  # the path is not echoed back


@on_server_loop
async def test_a_path_of_100000_parts_is_a_quick_400(jp_fetch: Fetch) -> None:
    message, elapsed = await rejected(jp_fetch, "/".join(["x"] * 100_000))
    assert f"limit of {MAX_PATH_CHARS}" in message
    assert elapsed < QUICK_SECONDS


@pytest.mark.parametrize("separator", ["/", "\\"])
@on_server_loop
async def test_more_parts_than_the_bound_is_a_400(jp_fetch: Fetch, separator: str) -> None:
    path = separator.join(["d"] * (MAX_PATH_PARTS + 1))
    assert len(path) < MAX_PATH_CHARS  # the parts bound, not the length one
    message, elapsed = await rejected(jp_fetch, path)
    assert f"{MAX_PATH_PARTS + 1} parts" in message and f"limit of {MAX_PATH_PARTS}" in message
    assert elapsed < QUICK_SECONDS


@on_server_loop
async def test_a_path_at_the_bounds_is_analysed(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    # MAX_PATH_PARTS parts and exactly MAX_PATH_CHARS characters: the bounds are inclusive.
    folders = MAX_PATH_PARTS - 1
    name_length = (MAX_PATH_CHARS - folders) // folders
    last = MAX_PATH_CHARS - folders * (name_length + 1)
    path = "/".join(["f" * name_length] * folders + ["n" * last])
    assert len(path) == MAX_PATH_CHARS and len(path.split("/")) == MAX_PATH_PARTS
    response = await analyze(jp_fetch, path)
    assert response.code == 200
    assert [f["code"] for f in json.loads(response.body)["findings"]] == ["TFC002"]


def link_chain(root: Path, levels: int) -> str:
    """A legal path (``levels`` + 1 parts, a few hundred characters) through ``levels``
    links whose targets are as long as a link's target can be (``x/..`` repeated): each
    link costs resolving ~1600 parts, and every link sits in another folder, so none is
    resolved from a cache. Python needs seconds for it, all of them in ``lstat`` calls."""
    target = "/".join(["x/.."] * 800) + "/x"
    folder = root / "chain"
    for _ in range(levels):
        (folder / "x").mkdir(parents=True)
        os.symlink(target, folder / "s")
        folder = folder / "x"
    return "chain/" + "/".join(["s"] * levels) + "/nb.ipynb"


@on_server_loop
async def test_resolving_a_slow_path_does_not_hold_up_the_server(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    path = link_chain(jp_root_dir, MAX_PATH_PARTS - 2)
    assert len(path) <= MAX_PATH_CHARS and len(path.split("/")) <= MAX_PATH_PARTS
    started = time.monotonic()
    request = asyncio.ensure_future(analyze(jp_fetch, path))
    waits: list[float] = []
    while not request.done():
        asked = time.monotonic()
        status = await jp_fetch("api", "status")
        assert status.code == 200
        waits.append(time.monotonic() - asked)
        await asyncio.sleep(0.05)
    response = await request
    elapsed = time.monotonic() - started
    assert response.code == 200
    answer = json.loads(response.body)
    # The time spent resolving counts against the analysis budget: on a loaded machine
    # the analysis may be cut short (a note says so), else it finds the print.
    assert [f["code"] for f in answer["findings"]] == ["TFC002"] or answer["notes"]
    # The request was slow (else this test shows nothing) ...
    assert elapsed > 1.0, f"resolving took only {elapsed:.2f} s"
    # ... and meanwhile the server answered /api/status, each time without waiting for it
    # (on the event loop, the first status request would have waited the whole time).
    assert len(waits) >= 3, waits
    assert max(waits) < elapsed / 2, (max(waits), elapsed)
