"""A worker process for large analyses and hover indexes: ``python -m
jupyterlab_tfcoach.server.worker``, started and fed by ``lanes.py``.

It reads one pickled ``(function, args)`` at a time from its standard input, calls it,
and writes back one pickled ``(True, result)`` or ``(False, traceback text)``, until its
input ends (the server closed the pipe, or exited). The functions are those of
``work.py``: pickled by name, so this process imports the analysis alone, never
jupyter_server (which ``multiprocessing``'s spawn would import again in every worker,
as the server's main script: seconds of CPU per worker).

The server lowers its priority as it starts it (``nice``, where there is one): the server
and the user's kernels come first. Anything the work prints goes to standard error (the
server's log), never into the answers' pipe.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import traceback
from typing import BinaryIO


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    while True:
        try:
            function, args = pickle.load(requests)
        except EOFError:
            return
        try:
            answer = (True, function(*args))
        except Exception:
            answer = (False, traceback.format_exc())
        try:
            pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
            answers.flush()
        except OSError:
            return  # the server is gone (a broken pipe)


def main() -> None:
    # Ctrl+C in the server's terminal reaches every process of its group: the server
    # handles it (and this process ends when the server closes its pipe).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Keep the pipes for the protocol; anything printed goes to standard error.
    requests = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    with open(os.devnull, "rb") as nothing:
        os.dup2(nothing.fileno(), sys.stdin.fileno())
    serve(requests, answers)


if __name__ == "__main__":
    main()
