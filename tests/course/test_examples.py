"""The coach tour notebook: every code cell shows the report or finding it is there to show.

The tour (``tests/data/course/coach-tour.ipynb``) was the first edition's module-1 notebook: one
cell per pitfall of tensors, tracing and gradients. The second edition gave each module a
notebook mirroring it in full; the tour stays as the fixture of this test and the browser tests.

``EXPECTED`` is the notebook's code cells in order, each with a fragment of its source (so a
reordered or edited notebook fails loudly instead of checking the wrong cell) and what it must
produce: the static findings of ``analyze_cells`` (rule code, line in the cell) and the kernel
monitor's report when the cells run in order in one real kernel (trace counts and reasons,
variable changes, the explained error, notes), plus the output where the output is the point.
A cell with nothing listed must produce nothing: no finding and an empty report.
"""

from __future__ import annotations

import importlib.metadata
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import nbformat
import pytest

from jupyterlab_tfcoach.analysis import analyze_cells
from jupyterlab_tfcoach.server.kernels import BOOTSTRAP_EXPRESSION
from tests.harness import REPO_ROOT, Execution, KernelSession, checked_report

NOTEBOOK = REPO_ROOT / "tests" / "data" / "course" / "coach-tour.ipynb"
CELL_TIMEOUT = 180.0


@dataclass(frozen=True)
class Reason:
    kind: str
    argument: str | None = None
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class Trace:
    function: str
    new_traces: int
    total_traces: int
    reasons: tuple[Reason, ...]
    section: str


@dataclass(frozen=True)
class Change:
    name: str
    change: str
    before: Any
    after: Any
    section: str


@dataclass(frozen=True)
class Error:
    type: str
    section: str
    # Each must appear in the explanation: it names what went wrong and the fix.
    explains: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    fragment: str
    findings: tuple[tuple[str, int], ...] = ()
    traces: tuple[Trace, ...] = ()
    # fit() after compile(): Keras's step functions trace for the first time, left unreported.
    keras_steps: bool = False
    variables: tuple[Change, ...] = ()
    error: Error | None = None
    # One entry per note: a fragment the note must contain.
    notes: tuple[str, ...] = ()
    stdout: str = ""
    result: str | None = None


FIRST = Reason("first_trace")


def _tensorflow_version() -> str:
    """The installed TensorFlow's version, read without importing it (~5 s)."""
    [distribution, *_] = importlib.metadata.packages_distributions()["tensorflow"]
    return importlib.metadata.version(distribution)


EXPECTED: tuple[Cell, ...] = (
    Cell("import tensorflow as tf", stdout=f"{_tensorflow_version()}\n"),
    # The right way to update a variable: nothing to report.
    Cell(
        "w.assign_sub(0.1 * x)",
        result="<tf.Variable 'Variable:0' shape=(3,) dtype=float32, "
        "numpy=array([ 0.4, -0.7,  0.7], dtype=float32)>",
    ),
    Cell(
        "w = w - 0.01 * g",
        findings=(("TFC001", 4),),
        variables=(
            Change("w", "rebound_to_tensor", "tf.Variable", "tf.Tensor", "rebinding-variables"),
        ),
        result="'EagerTensor'",
    ),
    # Created and trained in one cell: the line that replaced it, and the in-place fix.
    Cell(
        "b = b - 0.1 * db",
        findings=(("TFC001", 8),),
        variables=(
            Change("b", "rebound_to_tensor", "tf.Variable", "tf.Tensor", "rebinding-variables"),
        ),
        result="'EagerTensor'",
    ),
    Cell(
        "counts + weights",
        findings=(("TFC009", 3),),
        error=Error(
            "InvalidArgumentError",
            "dtype-casting",
            ("`counts`", "int32", "`tf.cast(counts, tf.float32) + weights`"),
        ),
    ),
    Cell(
        "tf.cast(counts, tf.float32) + weights",
        result="<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.5 , 2.25, 3.25], "
        "dtype=float32)>",
    ),
    Cell(
        "regressor.predict(samples[0], verbose=0)",
        error=Error(
            "ValueError",
            "batch-dimension",
            ("(None, 4)", "`regressor.predict(samples[:1], verbose=0)`"),
        ),
    ),
    # The fix: a batch of one.
    Cell("regressor.predict(samples[:1], verbose=0).shape", result="(1, 1)"),
    Cell(
        "def scale(t, factor)",
        findings=(("TFC005", 6),),  # one finding; the other calls are its related locations
        traces=(
            Trace(
                "scale",
                3,
                3,
                (
                    FIRST,
                    Reason("shape", "t", "(2,)", "(3,)"),
                    Reason("python_value", "factor", "2.0", "3.0"),
                ),
                "retracing",
            ),
        ),
        result="<tf.Tensor: shape=(3,), dtype=float32, numpy=array([3., 6., 9.], dtype=float32)>",
    ),
    # The fix: one trace for two shapes and two factors.
    Cell(
        "def scale_any(t, factor)",
        traces=(Trace("scale_any", 1, 1, (FIRST,), "tracing"),),
        result="<tf.Tensor: shape=(3,), dtype=float32, numpy=array([3., 6., 9.], dtype=float32)>",
    ),
    Cell(
        "def noisy(t)",
        findings=(("TFC002", 3),),
        traces=(Trace("noisy", 1, 1, (FIRST, Reason("side_effect", "print")), "side-effects"),),
        stdout='tracing with Tensor("t:0", shape=(), dtype=int32)\n',
        result="<tf.Tensor: shape=(), dtype=int32, numpy=3>",
    ),
    Cell(
        "seen.append(t)",
        findings=(("TFC003", 6),),
        traces=(Trace("remember", 1, 1, (FIRST, Reason("side_effect", "seen")), "side-effects"),),
        result="1",
    ),
    Cell(
        "def count_above(t)",
        traces=(Trace("count_above", 1, 1, (FIRST,), "tracing"),),
        result="<tf.Tensor: shape=(), dtype=int32, numpy=2>",
    ),
    # Changed after the trace: the graph still uses 0.5.
    Cell(
        "threshold = 1.0",
        traces=(
            Trace(
                "count_above",
                0,
                1,
                (Reason("stale_value", "threshold", "0.5", "1.0"),),
                "frozen-python-values",
            ),
        ),
        result="<tf.Tensor: shape=(), dtype=int32, numpy=2>",
    ),
    Cell(
        "for _ in range(20)",
        findings=(("TFC004", 4),),
        traces=(Trace("power", 1, 1, (FIRST,), "tracing"),),
        result="<tf.Tensor: shape=(), dtype=float32, numpy=1048576.0>",
    ),
    Cell(
        "dz = tape.gradient(z, v)  # second call",
        findings=(("TFC006", 6),),
        error=Error("RuntimeError", "gradient-tape", ("persistent=True", "del tape")),
    ),
    # The fix: a persistent tape, released.
    Cell("tf.GradientTape(persistent=True)", result="(6.0, 2.0)"),
    Cell(
        "print(tape.gradient(y, c))  # None",
        findings=(("TFC008", 4),),
        notes=("tape.gradient at line 4 returned None for `c`: it is a tensor",),
        stdout="None\n",
    ),
    # The fix: the tape watches the constant.
    Cell("tape.watch(c)", stdout="tf.Tensor(6.0, shape=(), dtype=float32)\n"),
    Cell(
        "return t.numpy() / 2",
        findings=(("TFC011", 3),),
        error=Error("AttributeError", "numpy-in-graphs", (".numpy()", "tf.print")),
    ),
    Cell(
        "total = tf.Variable(0.0)",
        findings=(("TFC010", 3),),
        # Its double first trace (a variable-creating function) is not a retrace.
        traces=(Trace("accumulate", 1, 1, (FIRST,), "tracing"),),
        error=Error("ValueError", "variables-in-functions", ("once, outside the function",)),
    ),
    Cell("model.fit(xs, ys, epochs=1, verbose=0)\nlen(", keras_steps=True, result="4"),
    Cell(
        'model.get_layer("hidden").trainable = False',
        variables=(
            Change(
                "model.get_layer('hidden').trainable",
                "trainable_flag",
                True,
                False,
                "trainable-weights",
            ),
        ),
        result="2",
    ),
    # Compiled again: new step functions (first traces), and the frozen layer stays put.
    Cell("frozen = model.get_layer", keras_steps=True, result="True"),
)


def code_cells() -> list[Any]:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_the_table_follows_the_notebook() -> None:
    cells = code_cells()
    assert len(cells) == len(EXPECTED)
    for index, (cell, expected) in enumerate(zip(cells, EXPECTED, strict=True)):
        assert expected.fragment in cell.source, (index, expected.fragment, cell.source)


def test_notebook_is_a_clean_v4_5_notebook() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert (notebook.nbformat, notebook.nbformat_minor) == (4, 5)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    ids = [cell.id for cell in notebook.cells]
    assert all(ids) and len(set(ids)) == len(ids)
    # Shipped unexecuted: what the reader sees comes from running it.
    for cell in code_cells():
        assert cell.outputs == [] and cell.execution_count is None, cell.source
    # Short explanations between the cells: the panel and the course say the rest.
    markdown = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]
    assert all(len(text) <= 500 for text in markdown), [t for t in markdown if len(t) > 500]


def test_static_findings_per_cell() -> None:
    findings = analyze_cells([cell.source for cell in code_cells()])
    found: dict[int, list[tuple[str, int]]] = {}
    for finding in findings:
        assert finding.cell is not None
        found.setdefault(finding.cell, []).append((finding.code, finding.line))
    expected = {index: list(cell.findings) for index, cell in enumerate(EXPECTED) if cell.findings}
    assert found == expected


# ----------------------------------------------------------------------------- kernel


def execute_cell(kernel: KernelSession, code: str, cell_id: str) -> Execution:
    """Run ``code`` as the notebook cell ``cell_id`` (JupyterLab sends the id as metadata)."""
    client = kernel.client
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": False,
    }
    message = client.session.msg("execute_request", content, metadata={"cellId": cell_id})
    client.shell_channel.send(message)
    msg_id: str = message["header"]["msg_id"]
    execution = Execution(msg_id=msg_id, reply={})
    deadline = time.monotonic() + CELL_TIMEOUT
    idle = False
    while not idle:
        incoming = client.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if incoming["parent_header"].get("msg_id") != msg_id:
            continue
        execution.iopub.append(incoming)
        idle = (
            incoming["header"]["msg_type"] == "status"
            and incoming["content"]["execution_state"] == "idle"
        )
    while True:
        reply = client.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if reply["parent_header"].get("msg_id") == msg_id:
            execution.reply = reply["content"]
            return execution


@pytest.fixture(scope="module")
def executions() -> Iterator[list[Execution]]:
    """The code cells run in order in one kernel, the monitor loaded as the server loads it."""
    kernel = KernelSession()
    try:
        bootstrap = kernel.execute(
            "",
            silent=True,
            store_history=False,
            user_expressions={"tfcoach": BOOTSTRAP_EXPRESSION},
        )
        outcome = bootstrap.reply["user_expressions"]["tfcoach"]
        assert outcome["status"] == "ok", outcome
        assert bootstrap.reply["execution_count"] == 0
        yield [execute_cell(kernel, cell.source, cell.id) for cell in code_cells()]
    finally:
        kernel.shutdown()


def _observed_traces(report: dict[str, Any]) -> tuple[Trace, ...]:
    return tuple(
        Trace(
            trace["function"],
            trace["new_traces"],
            trace["total_traces"],
            tuple(
                Reason(r["kind"], r["argument"], r["before"], r["after"]) for r in trace["reasons"]
            ),
            trace["course"]["section"],
        )
        for trace in report["traces"]
    )


def _check_keras_steps(report: dict[str, Any]) -> None:
    # Keras's own step functions tracing for the first time are not the learner's business.
    assert report["traces"] == []


def _execute_result(execution: Execution) -> str | None:
    results = execution.of_type("execute_result")
    assert len(results) <= 1
    return results[0]["content"]["data"]["text/plain"] if results else None


@pytest.mark.kernel
@pytest.mark.parametrize(
    "index", range(len(EXPECTED)), ids=[f"cell{i}" for i in range(len(EXPECTED))]
)
def test_cell_report(executions: list[Execution], index: int) -> None:
    expected = EXPECTED[index]
    cell = code_cells()[index]
    execution = executions[index]
    report = checked_report(execution)
    assert report["cell_id"] == cell.id

    if expected.error is None:
        assert execution.reply["status"] == "ok", execution.reply
        assert report["error"] is None
    else:
        assert execution.reply["status"] == "error"
        error = report["error"]
        assert error is not None, f"no explained error for cell {index}: {execution.reply}"
        assert (error["type"], error["course"]["section"]) == (
            expected.error.type,
            expected.error.section,
        )
        for fragment in expected.error.explains:
            assert fragment in error["explanation"], (fragment, error["explanation"])

    if expected.keras_steps:
        _check_keras_steps(report)
    else:
        assert _observed_traces(report) == expected.traces

    changes = tuple(
        Change(c["name"], c["change"], c["before"], c["after"], c["course"]["section"])
        for c in report["variables"]
    )
    assert changes == expected.variables

    assert len(report["notes"]) == len(expected.notes), report["notes"]
    for note, fragment in zip(report["notes"], expected.notes, strict=True):
        assert fragment in note["text"], (fragment, note)
        assert note["course"] is not None, note

    assert execution.stdout == expected.stdout
    assert _execute_result(execution) == expected.result


@pytest.mark.kernel
def test_reports_explain_in_plain_words(executions: list[Execution]) -> None:
    """The texts the panel shows for the cells that teach the most."""
    by_fragment = {cell.fragment: executions[i] for i, cell in enumerate(EXPECTED)}

    [scale] = by_fragment["def scale(t, factor)"].report["traces"]
    _first, shape, value = (reason["text"] for reason in scale["reasons"])
    assert "the shape of `t` changed from (2,) to (3,)" in shape
    assert "input_signature" in shape and "reduce_retracing=True" in shape
    assert "the Python value of `factor` changed from 2.0 to 3.0" in value
    assert "pass a tensor" in value

    [rebound] = by_fragment["w = w - 0.01 * g"].report["variables"]
    assert "Line 4: `w = w - 0.01 * g`" in rebound["text"]
    assert "`w.assign_sub(0.01 * g)`, after creating `w` again as a variable" in rebound["text"]

    [same_cell] = by_fragment["b = b - 0.1 * db"].report["variables"]
    assert "Line 8: `b = b - 0.1 * db` replaced the tf.Variable `b`" in same_cell["text"]
    assert "`b.assign_sub(0.1 * db)`" in same_cell["text"]

    [stale] = by_fragment["threshold = 1.0"].report["traces"]
    stale_text = stale["reasons"][0]["text"]
    assert "`count_above` still uses threshold = 0.5 from its trace; it is now 1.0" in stale_text

    [flag] = by_fragment['model.get_layer("hidden").trainable = False'].report["variables"]
    assert "keeps training it until compile() runs again" in flag["text"]
    assert "`model.compile(...)` again" in flag["text"]
