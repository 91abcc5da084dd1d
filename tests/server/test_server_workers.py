"""Worker processes for large analyses end themselves when idle, and nothing is lost.

An idle worker holds 100-200 MB (its parse trees and caches), so it ends itself after
``c.TfCoach.worker_idle_timeout`` seconds without work; the next large request starts a
new one. A request written just as a worker decided to end is never read by it: the
server sees the worker's idle exit status and gives the request to a new worker, so the
learner never gets a 503 for it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from jupyterlab_tfcoach.server import lanes
from jupyterlab_tfcoach.server.worker import IDLE_EXIT_STATUS
from tests.harness import on_server_loop
from tests.server.test_server_load import Post, answer, big_source, post  # noqa: F401  (fixture)

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow


@pytest.fixture
def tfcoach_config() -> dict[str, Any]:
    return {"worker_idle_timeout": 1.0}


def end_running_workers() -> None:
    """Workers started by earlier tests keep their own idle timeout: end them first."""
    for process in lanes.worker_processes():
        if process.poll() is None:
            process.kill()
            process.wait()


@on_server_loop
async def test_an_idle_worker_ends_itself_and_the_next_large_request_is_answered(
    post: Post,  # noqa: F811
) -> None:
    assert lanes.worker_idle_seconds == 1.0  # the option reached the lanes
    end_running_workers()
    source = big_source(700, limit=96 * 1024)
    assert len(source) > lanes.SMALL_CHARS  # the large lane: a worker process
    _, response = await post("analyze", {"source": source})
    first = answer(response)["findings"]
    assert first
    started = [p for p in lanes.worker_processes() if p.poll() is None]
    assert started
    deadline = time.monotonic() + 30
    while any(p.poll() is None for p in started) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert [p.returncode for p in started] == [IDLE_EXIT_STATUS] * len(started)
    _, response = await post("analyze", {"source": source})
    assert answer(response)["findings"] == first


def test_a_request_that_meets_an_ending_idle_worker_goes_to_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a 1 ms idle timeout the worker ends between any two requests: each request
    finds it gone (replaced before writing) or ending as it is written (the idle exit
    status: sent again). None may fail."""
    monkeypatch.setattr(lanes, "worker_idle_seconds", 0.001)
    worker = lanes.WorkerProcess()
    try:
        for text in ("a", "bb", "ccc", "dddd", "eeeee"):
            assert worker.call(len, (text,)) == len(text)
    finally:
        worker.stop()


def test_the_worker_reports_its_idle_exit_with_its_own_status() -> None:
    """A worker given no request ends with ``IDLE_EXIT_STATUS``; one whose input closes
    ends with 0 (the server is gone or stopped it)."""
    command = [sys.executable, "-m", "jupyterlab_tfcoach.server.worker", "--idle-exit=0.2"]
    env = {**os.environ, "PYTHONPATH": lanes._PACKAGE_PARENT}
    idle = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    try:
        assert idle.wait(timeout=60) == IDLE_EXIT_STATUS  # its input still open
    finally:
        assert idle.stdin is not None
        idle.stdin.close()
    closed = subprocess.run(
        command, input=b"", env=env, timeout=60, check=False, capture_output=True
    )
    assert closed.returncode == 0
