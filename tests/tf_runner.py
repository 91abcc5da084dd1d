"""Run snippets with real TensorFlow, in a child process, and say what happened.

Rule tests use this to show that a pitfall really misbehaves and that the fix a rule
offers really cures it. A child process keeps TensorFlow out of the test process (some
tests need a process without it) and runs every snippet of one call in that one process,
each in a fresh namespace, so the import is paid once per call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

from tests.harness import quiet_env

_CHILD = r"""
import contextlib, io, json, linecache, sys
jobs = json.load(sys.stdin)
results = []
for number, job in enumerate(jobs):
    namespace = {"__name__": "__main__"}
    error = None
    output = io.StringIO()
    # As IPython does for cells: the source is in linecache under the code's file name,
    # so AutoGraph (which reads a function's source) converts tf.function bodies.
    filename = f"<snippet-{number}>"
    lines = job["source"].splitlines(True)
    linecache.cache[filename] = (len(job["source"]), None, lines, filename)
    try:
        with contextlib.redirect_stdout(output):
            exec(compile(job["source"], filename, "exec"), namespace)
    except BaseException as exc:  # the point is to report it
        error = type(exc).__name__
    probes = {}
    for name, expression in job["probes"].items():
        try:
            value = eval(expression, namespace)
            try:
                probes[name] = json.loads(json.dumps(value))
            except (TypeError, ValueError):
                probes[name] = repr(value)
        except BaseException as exc:
            probes[name] = "<" + type(exc).__name__ + ">"
    results.append({"error": error, "stdout": output.getvalue(), "probes": probes})
json.dump(results, sys.stdout)
"""


@dataclass(frozen=True)
class Outcome:
    error: str | None  # the exception's class name, None when the snippet ran through
    stdout: str
    probes: dict[str, Any]  # each probe expression's value (its repr when not JSON)


def run_tensorflow(*sources: str, **probes: str) -> list[Outcome]:
    """Execute each (dedented) source and evaluate the named probe expressions after it."""
    jobs = [{"source": textwrap.dedent(source), "probes": probes} for source in sources]
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=quiet_env(),
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return [Outcome(**result) for result in json.loads(completed.stdout)]
