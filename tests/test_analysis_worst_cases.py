"""Worst cases stay bounded (issue #13).

- Analysis cost is linear in the input whatever its shape: each shape of
  ``WORST_CASE_SHAPES`` costs about what the same number of straight-line
  rebinds costs (compared in this process, with a generous ratio; before the
  fix the conditional shapes were quadratic, 30-100 times the baseline here).
- A deeply nested expression is an input error, in process and through the CLI.
- A time budget stops a long analysis with the findings made so far and a note.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import AnalysisSyntaxError, analyze_source, check_cells
from jupyterlab_tfcoach.analysis.budget import time_budget
from jupyterlab_tfcoach.analysis.testing import WORST_CASE_SHAPES, deep_sum, straight_rebinds
from jupyterlab_tfcoach.server.handlers import _analyze

REBINDS = 1600
RATIO = 3.0  # linear shapes measure 0.5-1.6; quadratic ones were 30-100 at this size


def _seconds(source: str) -> float:
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        analyze_source(source)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.fixture(scope="module")
def baseline() -> float:
    return _seconds(straight_rebinds(REBINDS))


@pytest.mark.parametrize("shape", sorted(set(WORST_CASE_SHAPES) - {"straight"}))
def test_cost_is_about_that_of_straight_line_rebinds(shape: str, baseline: float) -> None:
    generate: Callable[[int], str] = WORST_CASE_SHAPES[shape]
    seconds = _seconds(generate(REBINDS))
    # A floor of 20 ms keeps a near-zero baseline on a fast machine from deciding alone.
    assert seconds <= RATIO * max(baseline, 0.02), (shape, seconds, baseline)


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ("if_else", [("TFC001", 6)]),
        ("elif_chain", [("TFC001", 6)]),
        ("tf_function", [("TFC010", 7), ("TFC001", 9)]),
    ],
)
def test_findings_before_the_cap_are_kept(shape: str, expected: list[tuple[str, int]]) -> None:
    # The first rebind still reads the tf.Variable: reported, as without the cap, and the
    # same as for 20 rebinds. (An elif chain of 1,000 branches once overflowed the model's
    # recursion: no findings at all.)
    generate = WORST_CASE_SHAPES[shape]
    for rebinds in (20, REBINDS):
        assert [(f.code, f.line) for f in analyze_source(generate(rebinds))] == expected


def test_a_name_with_few_conditional_bindings_is_still_resolved() -> None:
    source = (
        "import tensorflow as tf\n"
        "c = len([]) > 0\n"
        "w = tf.Variable(1.0)\n" + "if c:\n    v = 1\nelse:\n    v = 2\n" * 5 + "w = w - 0.1\n"
    )
    assert [(f.code, f.line) for f in analyze_source(source)] == [("TFC001", 24)]


def test_deep_expression_is_an_input_error() -> None:
    with pytest.raises(AnalysisSyntaxError, match="too deeply nested"):
        analyze_source(deep_sum(200_000))  # 400 KB
    result = check_cells(["import tensorflow as tf\n", deep_sum(200_000)])
    assert [(e.cell, e.message) for e in result.syntax_errors][:1] == [
        (1, result.syntax_errors[0].message)
    ]
    assert "too deeply nested" in result.syntax_errors[0].message


def test_deep_expression_through_the_cli_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "deep.py"
    path.write_text(deep_sum(200_000), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from jupyterlab_tfcoach.cli import main; sys.exit(main())",
            "check",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert "too deeply nested" in done.stderr


def test_a_spent_budget_stops_with_a_note() -> None:
    source = WORST_CASE_SHAPES["tf_function"](REBINDS)
    full = analyze_source(source)
    with time_budget(0.0) as budget:
        partial = analyze_source(source)
    assert budget.note is not None and budget.note.startswith("analysis stopped after ")
    assert set(partial) <= set(full)
    with time_budget(60.0) as ample:
        assert analyze_source(source) == full
    assert ample.note is None


def test_server_analyze_returns_a_note_when_the_budget_is_spent() -> None:
    source = WORST_CASE_SHAPES["if_else"](REBINDS)
    answer = _analyze({"source": source}, None, budget_seconds=0.0)
    assert answer["notes"][0].startswith("analysis stopped after ")
    assert "notes" not in _analyze({"source": source}, None, budget_seconds=60.0)


def test_the_garbage_collector_keeps_running_during_an_analysis_in_a_worker_thread() -> None:
    # A server analyses in its worker threads: pausing the (process-wide) collector there
    # would pause it for every other request of the process meanwhile.
    collections: list[str] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(threading.current_thread().name)

    source = WORST_CASE_SHAPES["tf_function"](REBINDS)
    worker = threading.Thread(target=analyze_source, args=(source,), name="worker")
    gc.callbacks.append(count)
    try:
        worker.start()
        worker.join()
    finally:
        gc.callbacks.remove(count)
    assert "worker" in collections
    assert gc.isenabled()


# Run in a child process: the opt-in is for the whole process (the language server's).
PAUSED_IN_WORKERS = """
import gc, json, threading
from jupyterlab_tfcoach.analysis import analyze_source
from jupyterlab_tfcoach.analysis.engine import gc_paused, pause_gc_in_any_thread
from jupyterlab_tfcoach.analysis.testing import WORST_CASE_SHAPES

source = WORST_CASE_SHAPES["tf_function"](1600)
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(
    threading.current_thread().name))
def collections_in_a_worker():
    collections.clear()
    worker = threading.Thread(target=analyze_source, args=(source,), name="worker")
    worker.start()
    worker.join()
    return collections.count("worker")
seen = {"by_default": collections_in_a_worker()}
pause_gc_in_any_thread()
seen["opted_in"] = collections_in_a_worker()  # one may come as the pause ends
seen["after_one"] = gc.isenabled()
# Two overlapping pauses from two threads: the collector resumes after the last one.
first_in, second_in, first_may_end, first_out = (threading.Event() for _ in range(4))
def first():
    with gc_paused():
        first_in.set()
        first_may_end.wait()
    first_out.set()
def second():
    first_in.wait()
    with gc_paused():
        second_in.set()
        first_out.wait()
        seen["paused_while_one_runs"] = not gc.isenabled()
threads = [threading.Thread(target=first), threading.Thread(target=second)]
for thread in threads:
    thread.start()
second_in.wait()
first_may_end.set()
for thread in threads:
    thread.join()
seen["after_both"] = gc.isenabled()
gc.disable()  # disabled by someone else: an analysis leaves it so
analyze_source(source)
seen["left_disabled"] = not gc.isenabled()
print(json.dumps(seen))
"""


def test_a_process_that_runs_only_the_analysis_pauses_the_collector_in_workers() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PAUSED_IN_WORKERS],
        capture_output=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    seen = json.loads(result.stdout)
    assert seen.pop("by_default") > 10 and seen.pop("opted_in") <= 1
    assert seen == {
        "after_one": True,
        "paused_while_one_runs": True,
        "after_both": True,
        "left_disabled": True,
    }


def test_server_analyze_reports_a_deep_expression_as_a_syntax_error() -> None:
    answer = _analyze({"source": deep_sum(200_000)}, None)
    assert answer["findings"] == []
    assert [e["message"].split(":")[0] for e in answer["syntax_errors"]] == [
        "too deeply nested to parse"
    ]
    assert "notes" not in answer
