"""Reports under the cell where no tfcoach panel listens: notebooks executed by nbclient in a
plain kernel (as VS Code, hosted notebooks and papermill run them), with ``%load_ext``."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient

from tests.harness import (
    LOAD_FOR_PANEL,
    REPO_ROOT,
    Execution,
    KernelSession,
    note_texts,
    quiet_env,
    run,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

REPORT_MIME = "application/vnd.tfcoach.report+json"

CELLS = {
    "load": "%load_ext jupyterlab_tfcoach",
    "imports": "import tensorflow as tf",
    "define": (
        "def scale(x, factor):\n"
        "    return x * factor\n"
        # A hostile name: every string from the kernel must stay text in HTML.
        "scale.__name__ = scale.__qualname__ = '<img src=x onerror=alert(1)>'\n"
        "scale = tf.function(scale)\n"
        "x = tf.ones((2,))"
    ),
    "first_call": "y = scale(x, 1.0)",
    "retrace": "for factor in [2.0, 3.0]:\n    y = scale(x, factor)",
    "quiet": "total = float(tf.reduce_sum(y))",
    "rebind": "w = tf.Variable([1.0, 2.0])\nw = w - 0.5",
    "off": "%tfcoach inline off",
    "rebind_silenced": "v = tf.Variable([1.0, 2.0])\nv = v - 0.5",
    "on": "%tfcoach inline on",
    "fixed": "w = tf.Variable([1.0, 2.0])\nw.assign(w - 0.5)\ntotal = float(tf.reduce_sum(w))",
}


def _run_notebook() -> dict[str, nbformat.NotebookNode]:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS.values()]
    client = NotebookClient(
        notebook,
        timeout=240,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO_ROOT)}},
    )
    # The kernel imports the package from the work tree; no server extension is involved.
    client.km = client.create_kernel_manager()
    client.start_new_kernel(env=quiet_env(PYTHONPATH=str(REPO_ROOT)))
    client.start_new_kernel_client()
    try:
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    finally:
        client._cleanup_kernel()
    return dict(zip(CELLS, notebook.cells, strict=True))


@pytest.fixture(scope="module")
def cells() -> dict[str, nbformat.NotebookNode]:
    return _run_notebook()


def _reports(cell: nbformat.NotebookNode) -> list[dict]:
    return [o for o in cell.outputs if o.output_type == "display_data" and REPORT_MIME in o.data]


def test_cells_with_nothing_to_say_print_nothing(cells: dict) -> None:
    for name in ("load", "define", "first_call", "quiet", "off", "fixed"):
        assert _reports(cells[name]) == [], name
    # The corrected twin of the rebinding cell runs and stays silent.
    assert cells["fixed"].outputs == []


def test_retrace_is_reported_under_the_cell_as_text_and_safe_html(cells: dict) -> None:
    [output] = _reports(cells["retrace"])
    plain = output.data["text/plain"]
    # Headed by the report's one-line summary, as the panel's badge on the cell.
    assert plain.startswith("tfcoach: 2 retraces\n- tf.function <img src=x onerror=alert(1)>:")
    assert "factor" in plain and "course: " in plain
    page = output.data["text/html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<b>tfcoach</b>: 2 retraces<ul" in page
    assert "<img" not in page and "onerror=alert(1)>" not in page
    assert 'href="file://' in page and "Course: " in page
    report = output.data[REPORT_MIME]
    assert report["schema"] == "tfcoach.report/1"
    assert [trace["new_traces"] for trace in report["traces"]] == [2]


def test_rebinding_report_gives_a_fix_that_runs(cells: dict) -> None:
    [output] = _reports(cells["rebind"])
    plain = output.data["text/plain"]
    assert plain.startswith(
        "tfcoach: 1 variable\n- w: Line 2: `w = w - 0.5` replaced the tf.Variable `w`"
    )
    assert "`w.assign(w - 0.5)`" in plain  # a vector: assign_sub(0.5) would not broadcast
    assert "course: Rebinding a variable to a tensor" in plain


def test_inline_switch(cells: dict) -> None:
    assert [o.text for o in cells["off"].outputs if o.output_type == "stream"] == [
        "tfcoach: reports under cells off (set by %tfcoach inline).\n"
    ]
    assert _reports(cells["rebind_silenced"]) == []
    assert cells["rebind_silenced"].outputs == []
    assert "reports under cells on" in cells["on"].outputs[0].text


def _kernel_without_log_level(**extra: str) -> KernelSession:
    """A kernel as a learner gets one: no log level chosen, and (unlike under pytest)
    ipykernel forwards the process's own stderr, where TensorFlow's C++ logs go, into
    the cell."""
    dropped = ("TF_CPP_MIN_LOG_LEVEL", "PYTEST_CURRENT_TEST")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(PYTHONPATH=str(REPO_ROOT), TFCOACH_PANEL="1", **extra)
    return KernelSession(env=env)


def _stderr_of(execution: Execution) -> str:
    return "".join(
        m["content"]["text"]
        for m in execution.iopub
        if m["header"]["msg_type"] == "stream" and m["content"]["name"] == "stderr"
    )


IMPORT_TENSORFLOW = "import tensorflow as tf\nx = tf.constant([1.0, 2.0]) * 2"


def test_tensorflow_start_up_messages_are_hidden_and_that_is_said_once() -> None:
    plain = _kernel_without_log_level()
    try:  # the twin: without the monitor a learner sees TensorFlow's C++ start-up lines
        assert "cpu_feature_guard" in _stderr_of(run(plain, IMPORT_TENSORFLOW))
    finally:
        plain.shutdown()
    kernel = _kernel_without_log_level()
    try:
        load = run(kernel, LOAD_FOR_PANEL)
        assert any("TF_CPP_MIN_LOG_LEVEL=1" in text for text in note_texts(load.report))
        imported = run(kernel, IMPORT_TENSORFLOW)
        assert "cpu_feature_guard" not in _stderr_of(imported)
        # Every INFO line the log level governs is gone. On CPUs where TensorFlow uses
        # oneDNN, TF 2.21 also logs "oneDNN custom operations are on" (port.cc) before its
        # logging is initialised, at every TF_CPP_MIN_LOG_LEVEL (checked with 1, 2 and 3):
        # no level can hide that one line, so it is the only INFO line allowed.
        info_lines = [
            line for line in _stderr_of(imported).splitlines() if line.startswith("I0000")
        ]
        assert all("port.cc" in line and "oneDNN" in line for line in info_lines), info_lines
        assert note_texts(imported.report) == []  # said once
        assert value_of(kernel, "__import__('os').environ['TF_CPP_MIN_LOG_LEVEL']") == "1"
        status = run(kernel, "%tfcoach").stdout
        assert "set TF_CPP_MIN_LOG_LEVEL=1 to hide TensorFlow's start-up messages" in status
    finally:
        kernel.shutdown()


def test_a_level_the_user_chose_is_kept() -> None:
    kernel = _kernel_without_log_level(TF_CPP_MIN_LOG_LEVEL="0")
    try:
        load = run(kernel, LOAD_FOR_PANEL)
        assert note_texts(load.report) == []
        assert "cpu_feature_guard" in _stderr_of(run(kernel, IMPORT_TENSORFLOW))
        assert value_of(kernel, "__import__('os').environ['TF_CPP_MIN_LOG_LEVEL']") == "0"
    finally:
        kernel.shutdown()
