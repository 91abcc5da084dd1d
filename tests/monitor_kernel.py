"""Helpers for the monitor's kernel tests: a kernel that can import the repo, and cell runners."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from tests.harness import REPO_ROOT, Execution, KernelSession, quiet_env

# All a cell that prints nothing may produce: anything else (streams, displays,
# comms, errors) from such a cell would be the monitor's doing.
QUIET_MESSAGE_TYPES = ("status", "execute_input", "tfcoach_report")


def start_kernel(panel: bool = True) -> KernelSession:
    """A kernel that imports the package from the work tree. ``panel``: as the server
    extension starts kernels (its panel shows the reports, sent on iopub); otherwise a
    plain kernel, where the monitor shows reports under cells instead."""
    extra = {"PYTHONPATH": str(REPO_ROOT)}
    if panel:
        extra["TFCOACH_PANEL"] = "1"
    return KernelSession(env=quiet_env(**extra))


IMPORTS = "import numpy as np\nimport tensorflow as tf\nimport keras"
# Load the monitor as the server extension does (its reports go to the panel, none are
# shown under cells); ``%load_ext`` in a kernel no panel listens to shows them inline.
LOAD_FOR_PANEL = "__import__('jupyterlab_tfcoach').load_for_panel(get_ipython());"


def monitored_kernel(before_load: str = "", after_load: str = IMPORTS) -> Iterator[KernelSession]:
    """A kernel with the monitor loaded, for a module-scoped fixture (``yield from``).

    ``before_load`` runs first (TensorFlow imported before the monitor, as when the server
    loads it into a running kernel), then ``%load_ext``, then ``after_load``.
    """
    session = start_kernel()
    try:
        if before_load:
            run(session, before_load)
        run(session, LOAD_FOR_PANEL)
        if after_load:
            run(session, after_load)
        yield session
    finally:
        session.shutdown()


def execute(kernel: KernelSession, code: str, timeout: float = 180) -> Execution:
    """Like ``KernelSession.execute``, but takes the shell reply *parented to this request*.

    ``wait_for_ready`` can leave an extra ``kernel_info_reply`` on the shell channel;
    taking the next shell message blindly would then pair every cell with the
    previous cell's reply.
    """
    msg_id = kernel.client.execute(code)
    execution = Execution(msg_id=msg_id, reply={})
    deadline = time.monotonic() + timeout
    idle = False
    while not idle:
        message = kernel.client.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        execution.iopub.append(message)
        idle = (
            message["header"]["msg_type"] == "status"
            and message["content"]["execution_state"] == "idle"
        )
    while True:
        reply = kernel.client.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if reply["parent_header"].get("msg_id") == msg_id:
            execution.reply = reply["content"]
            return execution


def run(kernel: KernelSession, code: str, *, ok: bool = True, timeout: float = 180) -> Execution:
    execution = execute(kernel, code, timeout=timeout)
    if ok:
        assert execution.reply["status"] == "ok", (code, execution.reply, execution.iopub)
    return execution


def run_quiet(kernel: KernelSession, code: str, timeout: float = 180) -> dict[str, Any]:
    """Run a cell that prints nothing; the monitor must not print either. Its report."""
    # A trailing `pass` keeps IPython from displaying the last expression's value.
    execution = run(kernel, f"{code}\npass", timeout=timeout)
    noise = [m for m in execution.iopub if m["header"]["msg_type"] not in QUIET_MESSAGE_TYPES]
    assert not noise, f"unexpected output for {code!r}: {noise}"
    return checked_report(execution)


def checked_report(execution: Execution) -> dict[str, Any]:
    """The one tfcoach_report of an execution, checked against the schema's shape."""
    report = execution.report
    messages = execution.of_type("tfcoach_report")
    assert messages[0]["parent_header"]["msg_id"] == execution.msg_id
    # Published before the kernel goes idle.
    kinds = [m["header"]["msg_type"] for m in execution.iopub]
    assert kinds.index("tfcoach_report") < len(kinds) - 1
    assert set(report) == {
        "schema",
        "execution_count",
        "cell_id",
        "monitor_ms",
        "traces",
        "variables",
        "error",
        "notes",
    }
    assert report["schema"] == "tfcoach.report/1"
    assert report["execution_count"] == execution.reply["execution_count"]
    assert isinstance(report["monitor_ms"], float) and report["monitor_ms"] >= 0
    for trace in report["traces"]:
        assert set(trace) == {
            "function",
            "defined_at",
            "new_traces",
            "total_traces",
            "reasons",
            "course",
        }
        for reason in trace["reasons"]:
            assert set(reason) == {"kind", "argument", "before", "after", "text"}
            assert reason["kind"] in (
                "first_trace",
                "shape",
                "dtype",
                "python_value",
                "kind",
                "other",
                "side_effect",
                "stale_value",
            )
        assert set(trace["course"]) == {"module", "section", "title", "url"}
    for change in report["variables"]:
        assert set(change) == {"name", "change", "before", "after", "text", "course"}
        assert change["change"] in (
            "rebound_to_tensor",
            "attribute_rebound",
            "trainable_flag",
            "trainable_count",
            "stopped_learning",
        )
        assert set(change["course"]) == {"module", "section", "title", "url"}
    if report["error"] is not None:
        assert set(report["error"]) == {"type", "message", "explanation", "course"}
    for note in report["notes"]:
        assert set(note) == {"text", "course"}, note
        assert isinstance(note["text"], str) and note["text"]
        # Only notes about tfcoach itself have no course section.
        if not note["text"].startswith("tfcoach "):
            assert set(note["course"]) == {"module", "section", "title", "url"}, note
    json.dumps(report)
    return report


def value_of(kernel: KernelSession, expression: str) -> Any:
    """Evaluate ``expression`` in the kernel and return it through JSON (via stdout)."""
    execution = run(kernel, f"import json as _json\nprint(_json.dumps({expression}))")
    return json.loads(execution.stdout)


def trace_for(report: dict[str, Any], function: str) -> dict[str, Any]:
    found = [trace for trace in report["traces"] if trace["function"] == function]
    assert len(found) == 1, (function, report["traces"])
    return found[0]


def note_texts(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"]]


def changes_of(report: dict[str, Any], change: str) -> list[dict[str, Any]]:
    return [entry for entry in report["variables"] if entry["change"] == change]
