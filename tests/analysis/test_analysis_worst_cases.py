"""Worst cases stay bounded (issue #13).

- Analysis cost is linear in the input whatever its shape: each shape of
  ``WORST_CASE_SHAPES`` does about four times the work for four times the input,
  and about the work of the same number of straight-line rebinds (work counted
  as function calls, the same on any machine; before the fix the conditional
  shapes were quadratic, 30-100 times the baseline).
- A deeply nested expression is an input error, in process and through the CLI.
- So is an expression nested deeper than the analysis walks (``MAX_NESTING``, issue #24):
  the code around it is still checked, whatever the caller's stack depth; a recursion limit
  hit anyway is reported too, never an empty answer.
- A time budget stops a long analysis with the findings made so far and a note.
"""

from __future__ import annotations

import cProfile
import gc
import json
import pstats
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyterlab_tfcoach.analysis import (
    Analysis,
    AnalysisInputError,
    AnalysisSyntaxError,
    SyntaxProblem,
    analyze_path,
    analyze_source,
    check_cells,
    check_source,
)
from jupyterlab_tfcoach.analysis.budget import time_budget
from jupyterlab_tfcoach.analysis.errors import MAX_NESTING, AnalysisDepthError
from jupyterlab_tfcoach.analysis.notebook import DEPTH
from jupyterlab_tfcoach.analysis.testing import WORST_CASE_SHAPES, deep_sum, straight_rebinds
from jupyterlab_tfcoach.server.handlers import _analyze
from tests.harness import on_server_loop

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow

REBINDS = 1600
# Work is counted as Python function calls (cProfile's count is the same on every run and
# every machine), not timed: a wall-clock ratio failed CI once on a busy machine. Timing
# lives in benchmarks/bench_worst_cases.py.
GROWTH = 5.0  # four times the input: linear shapes measure 3.9-4.0 calls; quadratic ones 16
RATIO = 4.0  # against straight-line rebinds of the same size: 0.5-2.7 measured


def _calls(source: str) -> int:
    profile = cProfile.Profile()
    profile.enable()
    try:
        analyze_source(source)
    finally:
        profile.disable()
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(scope="module")
def baseline() -> int:
    return _calls(straight_rebinds(REBINDS))


@pytest.mark.parametrize("shape", sorted(set(WORST_CASE_SHAPES) - {"straight"}))
def test_cost_grows_linearly_and_is_about_that_of_straight_line_rebinds(
    shape: str, baseline: int
) -> None:
    generate: Callable[[int], str] = WORST_CASE_SHAPES[shape]
    calls = _calls(generate(REBINDS))
    assert calls <= GROWTH * _calls(generate(REBINDS // 4)), (shape, calls)
    assert calls <= RATIO * baseline, (shape, calls, baseline)


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
        cwd=Path(__file__).resolve().parents[2],
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


# -- nesting deeper than the analysis walks (issue #24, item 3) ----------------------------
# 500 nested lambdas on one line used to make the walk hit RecursionError, which was
# caught and turned into no findings at all: exit 0, a CI gate passed without a trace.

PITFALL = "import tensorflow as tf\n\nw = tf.Variable(1.0)\ng = 1.0\nw = w - 0.1 * g\n"  # TFC001, 5
DEEP_SHAPES: dict[str, Callable[[int], str]] = {
    "lambdas": lambda depth: "lambda: " * depth + "0",
    "calls": lambda depth: "f" + "()" * depth,
    "subscripts": lambda depth: "x" + "[0]" * depth,
    "nested_calls": lambda depth: "f(" * depth + "0" + ")" * depth,  # parser: 200 brackets
    "negations": lambda depth: "-" * depth + "1",
    "attributes": lambda depth: "x" + ".a" * depth,
    "sum": lambda depth: " + ".join(["g"] * (depth + 1)),
}


def _nested(shape: str, depth: int) -> str:
    """The pitfall, then ``f = <expression nested depth levels>`` on line 6."""
    return PITFALL + "f = " + DEEP_SHAPES[shape](depth) + "\n"


def _answer(analysis: Analysis) -> tuple[list[tuple[str, int | None, int]], list[SyntaxProblem]]:
    return [(f.code, f.cell, f.line) for f in analysis.findings], list(analysis.syntax_errors)


def _frames_in_use() -> int:
    frame, count = sys._getframe(1), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def _deeper(frames: int, run: Callable[[], Analysis]) -> Analysis:
    if frames > 0:
        return _deeper(frames - 1, run)
    return run()


def _with_frames_left(left: int | None, run: Callable[[], Analysis]) -> Analysis:
    """``run()`` called where only ``left`` frames of Python's recursion limit are left
    (None: from here)."""
    if left is None:
        return run()
    return _deeper(sys.getrecursionlimit() - _frames_in_use() - left, run)


def test_nested_lambdas_are_an_input_problem_and_the_rest_is_checked() -> None:
    source = _nested("lambdas", 500)
    result = check_source(source)
    assert [(f.code, f.line) for f in result.findings] == [("TFC001", 5)]
    (problem,) = result.syntax_errors
    assert problem.message.startswith("too deeply nested to check: an expression nests more")
    # Where the 201st lambda starts: the expression is cut there.
    assert (problem.cell, problem.line, problem.column, problem.kind) == (
        None,
        6,
        len("f = ") + MAX_NESTING * len("lambda: ") + 1,
        DEPTH,
    )
    with pytest.raises(AnalysisDepthError, match="too deeply nested to check") as raised:
        analyze_source(source)
    assert raised.value.lineno == 6
    assert [(f.code, f.line) for f in raised.value.findings] == [("TFC001", 5)]


def test_nested_lambdas_in_a_notebook_cell_are_an_input_problem_of_that_cell() -> None:
    result = check_cells([PITFALL, "y = 1\nf = " + DEEP_SHAPES["lambdas"](500) + "\n"])
    assert [(f.code, f.cell, f.line) for f in result.findings] == [("TFC001", 0, 5)]
    assert [(p.cell, p.line, p.kind) for p in result.syntax_errors] == [(1, 2, DEPTH)]
    assert result.syntax_errors[0].message.startswith("too deeply nested to check")


def test_nested_lambdas_through_analyze_path_keep_the_findings(tmp_path: Path) -> None:
    path = tmp_path / "deep.py"
    path.write_text(_nested("lambdas", 500), encoding="utf-8")
    with pytest.raises(AnalysisInputError) as raised:
        analyze_path(path)
    assert raised.value.problem.startswith("line 6, column ")
    assert "too deeply nested to check" in raised.value.problem
    assert [(f.code, f.line) for f in raised.value.findings] == [("TFC001", 5)]


def test_the_answer_does_not_depend_on_the_callers_stack() -> None:
    # The language server and the Jupyter server analyse in worker threads, the CLI in its
    # main thread, each from another stack depth: the limit is the same in all of them.
    source = _nested("lambdas", 500)
    expected = _answer(check_source(source))
    assert expected[0] == [("TFC001", None, 5)] and len(expected[1]) == 1
    for left in (900, 750, 600):
        assert _answer(_with_frames_left(left, lambda: check_source(source))) == expected
    in_thread: list[Analysis] = []
    worker = threading.Thread(target=lambda: in_thread.append(check_source(source)))
    worker.start()
    worker.join()
    assert _answer(in_thread[0]) == expected


@pytest.mark.parametrize("left", [350, 200, 100, 40])
def test_a_recursion_limit_hit_anyway_is_reported(left: int) -> None:
    # 200 lambdas are not cut, but with only this many frames left the model walk (or the
    # parser) runs out of Python's recursion limit: reported, never an empty answer.
    source = _nested("lambdas", MAX_NESTING)
    assert _answer(check_source(source))[0] == [("TFC001", None, 5)]
    findings, problems = _answer(_with_frames_left(left, lambda: check_source(source)))
    assert findings or problems
    assert all(p.message.startswith("too deeply nested to") for p in problems)


def _silent(analysis: Analysis) -> bool:
    return not analysis.findings and not analysis.syntax_errors


@settings(max_examples=80, derandomize=True, database=None, deadline=None)
@given(
    shape=st.sampled_from(sorted(DEEP_SHAPES)),
    depth=st.integers(100, 3000),
    left=st.sampled_from([None, None, None, 600, 300, 60]),  # frames of the stack left
    in_cells=st.booleans(),
)
def test_any_nesting_gives_findings_or_a_reported_problem(
    shape: str, depth: int, left: int | None, in_cells: bool
) -> None:
    source = _nested(shape, depth)
    if in_cells:
        cells = [PITFALL, source[len(PITFALL) :]]
        result = _with_frames_left(left, lambda: check_cells(cells))
    else:
        result = _with_frames_left(left, lambda: check_source(source))
    assert not _silent(result), (shape, depth, left)
    if left is None and not any(p.kind != DEPTH for p in result.syntax_errors):
        # It parses: the pitfall outside the deep expression is always found, and the
        # expression is reported exactly when it nests past the limit.
        assert [(f.code, f.line) for f in result.findings] == [("TFC001", 5)]
        assert bool(result.syntax_errors) == (depth > MAX_NESTING), (shape, depth)


def test_server_analyze_returns_nested_lambdas_as_a_syntax_problem() -> None:
    answer = _analyze({"source": _nested("lambdas", 500)}, None)
    assert [(f["code"], f["line"]) for f in answer["findings"]] == [("TFC001", 5)]
    assert [(e["cell"], e["line"]) for e in answer["syntax_errors"]] == [(None, 6)]
    assert answer["syntax_errors"][0]["message"].startswith("too deeply nested to check")


@on_server_loop
async def test_post_analyze_answers_nested_lambdas_with_a_syntax_problem(jp_fetch: Any) -> None:
    cells = [PITFALL, "f = " + DEEP_SHAPES["lambdas"](500) + "\n"]
    for payload in ({"source": "".join(cells)}, {"cells": cells}):
        response = await jp_fetch(
            "tfcoach", "api", "analyze", method="POST", body=json.dumps(payload)
        )
        answer = json.loads(response.body)
        assert [(f["code"], f["cell"], f["line"]) for f in answer["findings"]] == [
            ("TFC001", None if "source" in payload else 0, 5)
        ]
        (problem,) = answer["syntax_errors"]
        assert (problem["cell"], problem["line"]) == ((None, 6) if "source" in payload else (1, 1))
        assert problem["message"].startswith("too deeply nested to check")
