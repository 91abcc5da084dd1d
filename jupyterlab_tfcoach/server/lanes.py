"""Lanes: where the analyze and hover routes run their work, by kind and by size.

The Jupyter server's event loop serves every request and every kernel's messages, so it
never runs an analysis, and a small analysis never waits behind large ones. Each route
picks a lane by the size of the code it got (``SMALL_CHARS``):

- ``analysis``: code under 64 KiB, in 2 threads of the server. Such an analysis takes
  tens of milliseconds; its parse holds the interpreter lock (GIL) for a few.
- ``analysis-large``: larger code, in 2 worker processes (``worker.py``). A thread would
  not do: ``ast.parse`` of 1 MiB is one call into C that holds the GIL for its whole
  0.3-0.9 s (measured), and so does each collection of the syntax trees it builds;
  twelve of them in threads stalled ``GET api/status`` for up to 7.8 s
  (``benchmarks/bench_server_load.py``). A worker process has its own interpreter: the
  server only pickles the code into a pipe and reads the answer's JSON text back, in a
  lane thread that waits on the pipe without the GIL. Workers run at a lower priority
  (``nice``), so the server, and the kernels the user trains models in, come first.
- ``hover`` and ``hover-large``: the same split for hover cards, one worker each. A
  notebook's index (a parse and a binding model) is cached where it is built
  (``index_cells``' LRU cache): one worker process keeps one cache for large notebooks.

Each worker process belongs to one lane thread and serves one request at a time; it is
started on that thread's first request (``python -m jupyterlab_tfcoach.server.worker``,
which imports the analysis alone: ``multiprocessing``'s spawn would also import the
server's main script, jupyter_server, in every worker), and again after it died or after
it ended itself, idle for ``worker_idle_seconds`` (``c.TfCoach.worker_idle_timeout``: an
idle worker holds 100-200 MB). If none can be started, the lane runs the work in its own
threads (and says so in the log).

Deadlines: a request's budget counts from its arrival (see ``work.py``). ``Lane.run``
cancels work still waiting for a lane thread at the deadline and answers ``when_late``
instead (the analysis's "not started" note, no hover card). Work already running gets a
grace period: an analysis stops at its next budget check and returns what it found, but
its parse cannot be stopped, and on a busy machine a worker may be slow to get there;
past the grace the route answers without it (a hover at once: its index, left to finish,
is cached for the next hover). So every answer comes by its budget plus the grace,
however loaded the machine. Each lane lets at most ``max_waiting`` requests wait: past
that, a request is answered ``when_late`` at once, so a flood of large requests holds
neither memory nor workers.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, TypeVar

from jupyterlab_tfcoach.server.worker import IDLE_EXIT_STATUS

T = TypeVar("T")

log = logging.getLogger(__name__)

# Code under this many characters is analysed (or indexed) in the server's threads.
SMALL_CHARS = 64 * 1024
# How much lower than the server's the priority of worker processes is (their nice).
WORKER_NICENESS = 5
# How long a worker process waits for a request before it ends itself (0: never).
DEFAULT_WORKER_IDLE_SECONDS = 300.0
worker_idle_seconds = DEFAULT_WORKER_IDLE_SECONDS
# The folder holding the package: the worker imports the same copy as the server.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


class WorkerDiedError(RuntimeError):
    """The worker process ended before it answered (killed, out of memory)."""


class _WriteFailedError(Exception):
    """A request could not be written to the worker: it is gone."""


class _IdleExitError(Exception):
    """The worker ended idle before it read the request."""


# Every worker process running, to end them when the server exits.
_STARTED: set[subprocess.Popen[bytes]] = set()


class WorkerProcess:
    """One worker process, used by one lane thread at a time."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_PARENT, env.get("PYTHONPATH")]))
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab_tfcoach.server.worker",
                f"--idle-exit={worker_idle_seconds}",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        _STARTED.add(process)
        _lower_priority(process.pid)
        return process

    def call(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        request = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            ok, value = self._exchange(request)
        except _IdleExitError:
            # It ended idle just as the request was written, unread: a new worker gets it.
            ok, value = self._exchange(request)
        if not ok:
            raise RuntimeError(f"in the worker process:\n{value}")
        return value  # type: ignore[no-any-return]

    def _exchange(self, request: bytes) -> tuple[bool, Any]:
        process = self._send(request)
        answers = process.stdout
        assert answers is not None
        try:
            return pickle.load(answers)  # type: ignore[no-any-return]
        except (OSError, EOFError, pickle.UnpicklingError) as error:
            idle = _exit_status(process) == IDLE_EXIT_STATUS
            self.stop()
            if idle:
                raise _IdleExitError from error
            # It died on this request: not tried again (the request may be what kills it).
            raise WorkerDiedError("the worker process ended before it answered") from error

    def _send(self, request: bytes) -> subprocess.Popen[bytes]:
        """Write the request to a live worker. One that died while idle (killed, or
        ending just now) is replaced, once: it never saw the request."""
        try:
            return self._write(request)
        except _WriteFailedError:
            pass
        try:
            return self._write(request)
        except _WriteFailedError as error:
            raise WorkerDiedError("the worker process ended before it answered") from error

    def _write(self, request: bytes) -> subprocess.Popen[bytes]:
        process = self._process
        if process is None or process.poll() is not None:
            process = self._process = self._start()  # OSError: none can be started
        assert process.stdin is not None
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except OSError as error:
            self.stop()
            raise _WriteFailedError from error
        return process

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            _end(process)


def _exit_status(process: subprocess.Popen[bytes]) -> int | None:
    """How the process ended (it closed its answers' pipe), None if it did not soon."""
    try:
        return process.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return None


def _lower_priority(pid: int) -> None:
    """Run the worker ``WORKER_NICENESS`` below the server, from its start (its imports
    included), where the system has priorities (``nice``)."""
    if not hasattr(os, "setpriority"):
        return
    with contextlib.suppress(OSError):
        niceness = os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICENESS
        os.setpriority(os.PRIO_PROCESS, pid, niceness)


def _end(process: subprocess.Popen[bytes]) -> None:
    """Close its input (it exits when idle); kill it if it does not soon."""
    _STARTED.discard(process)
    pipes: tuple[IO[bytes] | None, ...] = (process.stdin, process.stdout)
    for pipe in pipes:
        with contextlib.suppress(OSError):
            if pipe is not None:
                pipe.close()
    try:
        process.wait(timeout=1)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def worker_processes() -> list[subprocess.Popen[bytes]]:
    """The worker processes running now (of every lane)."""
    return list(_STARTED)


@atexit.register
def _end_workers() -> None:
    for process in list(_STARTED):
        _end(process)


class Lane:
    """Threads (each with its worker process when ``processes``), with a bounded wait."""

    def __init__(self, name: str, workers: int, processes: bool, max_waiting: int) -> None:
        self.name = name
        self.workers = workers
        self.processes = processes
        self.max_waiting = max_waiting
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix=f"tfcoach-{name}")
        self._local = threading.local()  # each thread's worker process
        self._lock = threading.Lock()  # ``_in_lane`` is released from the lane's threads
        self._in_lane = 0  # submitted and not finished (running or waiting)

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """In a lane thread: ``fn(*args)`` in this thread's worker process, or here."""
        if not self.processes:
            return fn(*args)
        worker: WorkerProcess | None = getattr(self._local, "worker", None)
        if worker is None:
            worker = self._local.worker = WorkerProcess()
        try:
            return worker.call(fn, args)
        except OSError as error:  # no process could be started at all
            log.warning(
                "tfcoach: no worker process for %s (%s); it runs in threads of the server",
                self.name,
                error,
            )
            self.processes = False
            return fn(*args)

    def _admit(self) -> bool:
        with self._lock:
            if self._in_lane >= self.workers + self.max_waiting:
                return False
            self._in_lane += 1
            return True

    def _release(self, _: object = None) -> None:
        with self._lock:
            self._in_lane -= 1

    @property
    def occupied(self) -> int:
        """Requests in the lane: running, or waiting for a lane thread."""
        return self._in_lane

    async def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        deadline: float,
        when_late: Callable[[bool], T],
        grace: float = 0.0,
    ) -> T:
        """``fn(*args)`` in the lane, awaited without blocking the event loop.

        ``deadline`` is a ``time.monotonic()`` time. ``when_late(started)`` answers
        instead when the work is not done by then: ``started`` False when it never ran
        (the deadline passed while it waited, or the lane was full), True when it was
        still running ``grace`` seconds past the deadline (it goes on, its result unused).
        """
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not self._admit():
            return when_late(False)
        try:
            future: Future[T] = self._threads.submit(self._call, fn, *args)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(self._release)
        waiter = asyncio.wrap_future(future)
        # Its outcome may never be awaited (answered without it): read it anyway, or
        # asyncio logs "exception was never retrieved".
        waiter.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), remaining)
        except TimeoutError:
            if future.cancel():
                return when_late(False)
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), grace)
        except TimeoutError:
            return when_late(True)


_CPUS = os.cpu_count() or 1

ANALYSIS = Lane("analysis", workers=2, processes=False, max_waiting=64)
ANALYSIS_LARGE = Lane("analysis-large", workers=min(2, _CPUS), processes=True, max_waiting=16)
HOVER = Lane("hover", workers=1, processes=False, max_waiting=16)
HOVER_LARGE = Lane("hover-large", workers=1, processes=True, max_waiting=4)


def analysis_lane(chars: int) -> Lane:
    return ANALYSIS if chars < SMALL_CHARS else ANALYSIS_LARGE


def hover_lane(chars: int) -> Lane:
    return HOVER if chars < SMALL_CHARS else HOVER_LARGE


def code_chars(code: dict[str, Any]) -> int:
    """The size of a request's code: its source's characters, or all its cells'."""
    if "source" in code:
        return len(code["source"])
    return sum(len(cell) for cell in code["cells"])
