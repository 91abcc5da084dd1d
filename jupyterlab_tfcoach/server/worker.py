"""A worker process for large analyses and hover indexes: ``python -m
jupyterlab_tfcoach.server.worker``, started and fed by ``lanes.py``.

It reads one pickled ``(function, args)`` at a time from its standard input, calls it,
and writes back one pickled ``(True, result)`` or ``(False, traceback text)``, until its
input ends (the server closed the pipe, or exited). The functions are those of
``work.py``: pickled by name, so this process imports the analysis alone, never
jupyter_server (which ``multiprocessing``'s spawn would import again in every worker,
as the server's main script: seconds of CPU per worker).

An idle worker ends itself after ``--idle-exit SECONDS`` without a request (its parse
trees and caches hold 100-200 MB), with the status ``IDLE_EXIT_STATUS`` so that the server
knows a request it wrote just then was never read, and sends it to a new worker.

The server lowers its priority as it starts it (``nice``, where there is one): the server
and the user's kernels come first. Anything the work prints goes to standard error (the
server's log), never into the answers' pipe.
"""

from __future__ import annotations

import argparse
import os
import pickle
import select
import signal
import sys
import traceback
from typing import BinaryIO

# The exit status of a worker that ended because it was idle: no request was read.
IDLE_EXIT_STATUS = 75


def serve(requests: BinaryIO, answers: BinaryIO, idle_seconds: float | None = None) -> int:
    """Answer requests until the input ends (0) or none came for ``idle_seconds``
    (``IDLE_EXIT_STATUS``). The server writes one request at a time and waits for its
    answer, so nothing is left in ``requests``' buffer when it waits here."""
    while True:
        if idle_seconds and not select.select([requests], [], [], idle_seconds)[0]:
            return IDLE_EXIT_STATUS
        try:
            function, args = pickle.load(requests)
        except EOFError:
            return 0
        try:
            answer = (True, function(*args))
        except Exception:
            answer = (False, traceback.format_exc())
        try:
            pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
            answers.flush()
        except OSError:
            return 0  # the server is gone (a broken pipe)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jupyterlab_tfcoach.server.worker")
    parser.add_argument("--idle-exit", type=float, default=0.0, metavar="SECONDS")
    options = parser.parse_args(argv)
    # ``select`` waits on pipes only where they are file descriptors like sockets.
    idle_seconds = options.idle_exit if options.idle_exit > 0 and os.name != "nt" else None
    # Ctrl+C in the server's terminal reaches every process of its group: the server
    # handles it (and this process ends when the server closes its pipe).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Keep the pipes for the protocol; anything printed goes to standard error.
    requests = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    with open(os.devnull, "rb") as nothing:
        os.dup2(nothing.fileno(), sys.stdin.fileno())
    return serve(requests, answers, idle_seconds)


if __name__ == "__main__":
    sys.exit(main())
