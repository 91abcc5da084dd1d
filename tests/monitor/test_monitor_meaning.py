"""What a report means, decided by the monitor and carried in the report (docs/report.md,
"What a report means"): each reason's ``counts_as``, each note's ``kind``, each function's
``retraces``, the report's ``counts``, ``level`` and one-line ``summary``; read as they are by
``%tfcoach`` and by the display under a cell."""

from __future__ import annotations

import os

import pytest

from tests.harness import (
    REPO_ROOT,
    Execution,
    KernelSession,
    checked_report,
    run,
    run_quiet,
    trace_for,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

REPORT_MIME = "application/vnd.tfcoach.report+json"
NOTHING = {"traces": 0, "retraces": 0, "variables": 0, "errors": 0, "tips": 0, "information": 0}

DEFINE = "@tf.function\ndef scale(x, factor):\n    return x * factor"


def test_a_cell_that_retraces(kernel: KernelSession) -> None:
    run_quiet(kernel, DEFINE)
    report = run_quiet(
        kernel,
        "a = scale(tf.ones([2]), 2.0)\nb = scale(tf.ones([3]), 2.0)\nc = scale(tf.ones([3]), 3.0)",
    )
    trace = trace_for(report, "scale")
    assert [(r["kind"], r["counts_as"]) for r in trace["reasons"]] == [
        ("first_trace", "first_trace"),
        ("shape", "retrace"),
        ("python_value", "retrace"),
    ]
    assert (trace["new_traces"], trace["retraces"]) == (3, 2)
    assert report["counts"] == {**NOTHING, "traces": 3, "retraces": 2}
    assert (report["level"], report["summary"]) == ("warning", "2 retraces")
    # %tfcoach heads the last report with the same line.
    status = run(kernel, "%tfcoach").stdout
    assert status.splitlines()[0].endswith("ms): 2 retraces"), status


def test_a_cell_that_traces_once_and_one_that_does_not(kernel: KernelSession) -> None:
    run_quiet(kernel, DEFINE)
    first = run_quiet(kernel, "a = scale(tf.ones([2]), 2.0)")
    trace = trace_for(first, "scale")
    assert [r["counts_as"] for r in trace["reasons"]] == ["first_trace"]
    assert (trace["new_traces"], trace["retraces"]) == (1, 0)
    assert first["counts"] == {**NOTHING, "traces": 1}
    # A first trace is information: the normal cost of a tf.function.
    assert (first["level"], first["summary"]) == ("info", "1 trace")

    reused = run_quiet(kernel, "b = scale(tf.ones([2]), 2.0)")
    assert reused["traces"] == []
    assert (reused["level"], reused["summary"], reused["counts"]) == ("none", "", NOTHING)


def test_advice_counts_as_tips_not_retraces(kernel: KernelSession) -> None:
    execution = run(
        kernel,
        "calls = []\n"
        "@tf.function\n"
        "def step(x):\n"
        "    calls.append(1)\n"
        "    return x + 1\n"
        "y = step(tf.ones([2]))\n"
        "y = step(tf.ones([3]))\n"
        "pass",
    )
    report = checked_report(execution)
    trace = trace_for(report, "step")
    assert {r["kind"]: r["counts_as"] for r in trace["reasons"]} == {
        "first_trace": "first_trace",
        "side_effect": "tip",
        "shape": "retrace",
    }
    assert trace["retraces"] == 1
    assert report["counts"] == {**NOTHING, "traces": 2, "retraces": 1, "tips": 1}
    assert (report["level"], report["summary"]) == ("warning", "1 retrace \u00b7 1 tip")


def test_a_note_that_coaches_and_an_explained_error(kernel: KernelSession) -> None:
    report = run_quiet(
        kernel,
        "v = tf.Variable(1.0)\nx = tf.constant(2.0)\n"
        "with tf.GradientTape() as tape:\n    y = x * x\ngrad = tape.gradient(y, v)",
    )
    [note] = report["notes"]
    assert note["kind"] == "coaching" and note["course"] is not None
    assert report["counts"] == {**NOTHING, "tips": 1}
    assert (report["level"], report["summary"]) == ("warning", "1 tip")

    failed = checked_report(run(kernel, "tf.constant([1, 2]) + tf.constant([0.5, 1.0])", ok=False))
    assert failed["error"]["type"] == "InvalidArgumentError"
    assert failed["counts"] == {**NOTHING, "errors": 1}
    assert (failed["level"], failed["summary"]) == ("error", "InvalidArgumentError")


def _displays(execution: Execution) -> list[dict]:
    return [
        m["content"]["data"]
        for m in execution.of_type("display_data")
        if REPORT_MIME in m["content"]["data"]
    ]


def test_a_note_about_tfcoach_itself_is_information_shown_under_the_cell() -> None:
    """A kernel no panel listens to, with no log level chosen: loading the monitor hides
    TensorFlow's start-up messages, and the learner is told so under that cell, as
    information (grey, not a tip); the panel lists such a report too (summary.ts)."""
    dropped = ("TF_CPP_MIN_LOG_LEVEL", "PYTEST_CURRENT_TEST", "TFCOACH_PANEL")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPATH"] = str(REPO_ROOT)
    kernel = KernelSession(env=env)
    try:
        [display] = _displays(run(kernel, "%load_ext jupyterlab_tfcoach"))
        report = display[REPORT_MIME]
        [note] = report["notes"]
        assert "TF_CPP_MIN_LOG_LEVEL=1" in note["text"]
        assert (note["course"], note["kind"]) == (None, "information")
        assert report["counts"] == {**NOTHING, "information": 1}
        assert (report["level"], report["summary"]) == ("info", "1 note")
        assert display["text/plain"].startswith("tfcoach: 1 note\n- note: tfcoach set ")
        assert "border-left: 3px solid #9e9e9e" in display["text/html"]
        assert "<b>tfcoach</b>: 1 note<ul" in display["text/html"]
        # Said once: the next cell has nothing to say and shows nothing.
        assert _displays(run(kernel, "total = 1 + 1")) == []
    finally:
        kernel.shutdown()
