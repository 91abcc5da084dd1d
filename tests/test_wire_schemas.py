"""The JSON Schemas of schema/ against the code that produces and checks those shapes.

- Both schemas are valid draft 2020-12 schemas, and every example in them validates.
- Real output validates: ``tfcoach check --format json`` (a subprocess, on a script and a
  notebook), ``POST tfcoach/api/analyze`` (pytest-jupyter's server) and the reports of a
  real kernel running the monitor.
- The server's own check of a report (``report_problem``) and the report schema agree at
  the top level: on the schema's examples, on the malformed reports the server must drop
  (``MALFORMED`` of test_server_bounds) and on every top-level key given every JSON type.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jsonschema import Draft202012Validator

from jupyterlab_tfcoach.monitor import report as monitor_report
from jupyterlab_tfcoach.server.kernels import MAX_REPORT_BYTES, report_problem
from tests.harness import (
    REPO_ROOT,
    REPORT_KEYS,
    REPORT_MEANING_KEYS,
    KernelSession,
    checked_report,
    on_server_loop,
    run,
)
from tests.server.test_server_bounds import MALFORMED
from tests.server.test_server_routes import Fetch, analyze_body

SCHEMA_DIR = REPO_ROOT / "schema"


def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text("utf-8"))
    return schema


REPORT_SCHEMA = load_schema("report")
FINDING_SCHEMA = load_schema("finding")
REPORTS = Draft202012Validator(REPORT_SCHEMA)
FINDINGS = Draft202012Validator(FINDING_SCHEMA)


def problems(validator: Draft202012Validator, instance: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


# ------------------------------------------------------------------ the schemas themselves


@pytest.mark.parametrize("name", ["report", "finding"])
def test_schema_is_valid_and_its_examples_validate(name: str) -> None:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    examples = schema["examples"]
    assert len(examples) >= 4
    validator = Draft202012Validator(schema)
    for index, example in enumerate(examples):
        assert problems(validator, example) == [], (name, index)


def test_report_examples_cover_the_documented_cases() -> None:
    examples = REPORT_SCHEMA["examples"]
    kinds = {r["kind"] for e in examples for t in e["traces"] for r in t["reasons"]}
    assert {"first_trace", "shape", "dtype", "python_value", "stale_value"} <= kinds
    assert "rebound_to_tensor" in {v["change"] for e in examples for v in e["variables"]}
    assert any(e["error"] and e["error"]["explanation"] for e in examples)
    assert any(e["notes"] for e in examples)
    assert any(not (e["traces"] or e["variables"] or e["error"] or e["notes"]) for e in examples)


def test_report_examples_cover_what_a_report_means() -> None:
    examples = REPORT_SCHEMA["examples"]
    assert {e["level"] for e in examples} == {"error", "warning", "info", "none"}
    reasons = [r for e in examples for t in e["traces"] for r in t["reasons"]]
    assert {r["counts_as"] for r in reasons} == {"first_trace", "retrace", "tip"}
    assert {n["kind"] for e in examples for n in e["notes"]} == {"coaching", "information"}
    assert any(t["retraces"] for e in examples for t in e["traces"])


def without_meaning(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` as a monitor before its meaning fields sent it (docs/report.md)."""
    old = {k: v for k, v in report.items() if k not in REPORT_MEANING_KEYS}
    old["traces"] = [
        {
            **{k: v for k, v in trace.items() if k != "retraces"},
            "reasons": [{k: v for k, v in r.items() if k != "counts_as"} for r in trace["reasons"]],
        }
        for trace in report["traces"]
    ]
    old["notes"] = [
        {k: v for k, v in note.items() if k != "kind"} if isinstance(note, dict) else note
        for note in report["notes"]
    ]
    return old


@pytest.mark.parametrize("index", range(len(REPORT_SCHEMA["examples"])))
def test_report_examples_mean_what_the_monitor_computes(index: int) -> None:
    """The meaning fields of each example are what ``assemble_report`` computes from its
    entries, the reasons' and notes' as their builders set them."""
    example = REPORT_SCHEMA["examples"][index]
    old = without_meaning(example)
    traces = [
        {
            **trace,
            "reasons": [
                {**r, "counts_as": monitor_report.reason_counts_as(r["kind"])}
                for r in trace["reasons"]
            ],
        }
        for trace in old["traces"]
    ]
    notes = [{**note, "kind": monitor_report.note_kind(note["course"])} for note in old["notes"]]
    assembled = monitor_report.assemble_report(
        old["execution_count"],
        old["cell_id"],
        old["monitor_ms"],
        traces,  # type: ignore[arg-type]
        old["variables"],
        old["error"],
        notes,  # type: ignore[arg-type]
    )
    assert assembled == example


@pytest.mark.parametrize("index", range(len(REPORT_SCHEMA["examples"])))
def test_reports_of_older_monitors_stay_valid(index: int) -> None:
    old = without_meaning(REPORT_SCHEMA["examples"][index])
    assert not set(REPORT_MEANING_KEYS) & set(old)
    assert problems(REPORTS, old) == []
    assert report_problem(old) is None


def test_finding_examples_show_both_producers() -> None:
    examples = FINDING_SCHEMA["examples"]
    paths = {type(f["path"]) for f in examples}
    assert paths == {str, type(None)}  # the CLI names the file, the HTTP route does not
    assert any(f["cell"] is not None for f in examples)
    assert any(f["related"] for f in examples)
    assert any(f["fix"] is None for f in examples) and any(f["fix"] for f in examples)


# --------------------------------------------------- the server's check agrees with the schema


@pytest.mark.parametrize("index", range(len(REPORT_SCHEMA["examples"])))
def test_the_server_keeps_every_schema_example(index: int) -> None:
    assert report_problem(REPORT_SCHEMA["examples"][index]) is None


@pytest.mark.parametrize("index", range(len(MALFORMED)))
def test_the_server_and_the_schema_reject_the_same_malformed_reports(index: int) -> None:
    report = MALFORMED[index]
    if len(json.dumps(report).encode()) > MAX_REPORT_BYTES:
        # Dropped for its size alone, which no JSON Schema keyword measures: its shape is fine.
        assert report_problem(report) is None
        assert problems(REPORTS, report) == []
        return
    assert report_problem(report) is not None
    assert problems(REPORTS, report) != []


def empty_report(**changes: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "schema": "tfcoach.report/1",
        "execution_count": 3,
        "cell_id": "a1b2",
        "monitor_ms": 0.5,
        "traces": [],
        "variables": [],
        "error": None,
        "notes": [],
    }
    report.update(changes)
    return report


# Top-level values of every JSON type. Lists hold nothing or one value of a wrong type;
# each key also gets its own well-formed entries (the schema describes what is inside
# traces, variables, error and notes too, where the server looks at types only).
def example_with(key: str) -> dict[str, Any]:
    return next(e for e in REPORT_SCHEMA["examples"] if e[key])


VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    7,
    7.0,  # JSON's integer 7, written as a float by some serialisers
    -1,
    0.25,
    "",
    "tfcoach.report/1",
    "tfcoach.report/2",
    [],
    [1],
    [True],
    ["a note"],
    [None],
    [[]],
]
WELL_FORMED: dict[str, list[Any]] = {
    "traces": [[example_with("traces")["traces"][0]], {}],
    "variables": [[example_with("variables")["variables"][0]], {}],
    "notes": [[example_with("notes")["notes"][0]], {}],
    "error": [example_with("error")["error"]],
}


@pytest.mark.parametrize("key", REPORT_KEYS)
def test_the_server_and_the_schema_agree_on_every_top_level_type(key: str) -> None:
    disagreements = []
    for value in VALUES + WELL_FORMED.get(key, [{}]):
        report = empty_report(**{key: value})
        server_keeps = report_problem(report) is None
        schema_accepts = problems(REPORTS, report) == []
        if server_keeps != schema_accepts:
            disagreements.append((value, server_keeps, schema_accepts))
    assert disagreements == []
    missing = empty_report()
    del missing[key]
    assert report_problem(missing) is not None
    assert problems(REPORTS, missing) != []


@pytest.mark.parametrize("key", REPORT_MEANING_KEYS)
def test_the_server_and_the_schema_agree_on_the_optional_top_level_keys(key: str) -> None:
    """``level``, ``summary`` and ``counts`` may be missing (older monitors); when present
    the server and the schema accept the same types."""
    example = REPORT_SCHEMA["examples"][0]
    disagreements = []
    for value in [*VALUES, {}, example[key]]:
        report = empty_report(**{key: value})
        server_keeps = report_problem(report) is None
        schema_accepts = problems(REPORTS, report) == []
        # The schema describes what is inside counts; the server looks at its type only.
        if key == "counts" and isinstance(value, dict) and value != example[key]:
            assert server_keeps and not schema_accepts
            continue
        if server_keeps != schema_accepts:
            disagreements.append((value, server_keeps, schema_accepts))
    assert disagreements == []
    assert report_problem(empty_report()) is None
    assert problems(REPORTS, empty_report()) == []


def test_the_server_and_the_schema_allow_extra_keys() -> None:
    report = empty_report(from_a_newer_monitor={"anything": [1, 2]})
    assert report_problem(report) is None
    assert problems(REPORTS, report) == []


# --------------------------------------------------------------------------- real findings

SCRIPT = """import tensorflow as tf

w = tf.Variable(1.0)
lr = 0.01


@tf.function
def step(x):
    print("tracing", x)
    return x * w


@tf.function
def scale(x, factor):
    return x * factor


for batch in range(3):
    with tf.GradientTape() as tape:
        loss = step(tf.constant(2.0))
    g = tape.gradient(loss, w)
    w = w - lr * g

scale(tf.constant(1.0), 1)
scale(tf.constant(1.0), 2)
scale(tf.constant(1.0), 5)
"""
CELLS = ["import tensorflow as tf\nw = tf.Variable(1.0)", "g = 0.1\nw = w - 0.01 * g"]


def test_cli_json_output_validates(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT, "utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Training")] + [
        nbformat.v4.new_code_cell(cell) for cell in CELLS
    ]
    nbformat.write(notebook, str(tmp_path / "train.ipynb"))
    done = subprocess.run(
        [sys.executable, "-m", "jupyterlab_tfcoach.cli", "check", "--format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # findings were found
    findings = json.loads(done.stdout)
    assert {(f["path"], f["code"]) for f in findings} >= {
        ("train.py", "TFC001"),
        ("train.py", "TFC002"),
        ("train.py", "TFC005"),
        ("train.ipynb", "TFC001"),
    }
    for finding in findings:
        assert problems(FINDINGS, finding) == [], finding
        assert finding["cell"] == (1 if finding["path"] == "train.ipynb" else None)
    assert any(f["related"] for f in findings) and any(f["fix"] for f in findings)


@on_server_loop
async def test_analyze_route_findings_validate(jp_fetch: Fetch) -> None:
    answers = []
    for payload in ({"source": SCRIPT}, {"cells": CELLS}):
        response = await jp_fetch(
            "tfcoach", "api", "analyze", method="POST", body=analyze_body(payload)
        )
        answers.append(json.loads(response.body)["findings"])
    from_source, from_cells = answers
    assert {f["code"] for f in from_source} >= {"TFC001", "TFC002", "TFC005"}
    assert [(f["code"], f["cell"]) for f in from_cells] == [("TFC001", 1)]
    for finding in from_source + from_cells:
        assert problems(FINDINGS, finding) == [], finding
        assert finding["path"] is None


# ---------------------------------------------------------------------------- real reports

RETRACE = """@tf.function
def scale(x, factor):
    return x * factor

a = scale(tf.ones((2, 3)), 2.0)
b = scale(tf.ones((4, 3)), 2.0)
c = scale(tf.ones((4, 3), dtype=tf.float64), 2.0)
d = scale(tf.ones((4, 3), dtype=tf.float64), 3.0)
pass"""
REBIND = """w = tf.Variable([1.0, 2.0])
lr = 0.1
x = tf.constant([3.0, 4.0])
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(w * x)
g = tape.gradient(loss, w)
w = w - lr * g
pass"""
ERROR_CELL = "tf.constant([1, 2]) + tf.constant([0.5, 1.0])"
NO_GRADIENT = """v = tf.Variable(1.0)
x = tf.constant(2.0)
with tf.GradientTape() as tape:
    y = x * x
grad = tape.gradient(y, v)
pass"""


@pytest.mark.kernel
@pytest.mark.timeout(600)
def test_kernel_reports_validate(kernel: KernelSession) -> None:
    """conftest's ``kernel``: the monitor loaded as the server loads it, TensorFlow imported."""
    reports = {
        "retrace": checked_report(run(kernel, RETRACE)),
        "rebind": checked_report(run(kernel, REBIND)),
        "error": checked_report(run(kernel, ERROR_CELL, ok=False)),
        "no gradient": checked_report(run(kernel, NO_GRADIENT)),
        "quiet": checked_report(run(kernel, "total = 1 + 1")),
    }
    for name, report in reports.items():
        assert problems(REPORTS, report) == [], (name, report)
        assert report_problem(report) is None, name
    [trace] = reports["retrace"]["traces"]
    assert [r["kind"] for r in trace["reasons"]] == [
        "first_trace",
        "shape",
        "dtype",
        "python_value",
    ]
    assert [v["change"] for v in reports["rebind"]["variables"]] == ["rebound_to_tensor"]
    assert reports["error"]["error"]["type"] == "InvalidArgumentError"
    assert reports["no gradient"]["notes"]
    # What each report means, as the monitor computes it (tests/monitor/test_monitor_meaning.py).
    assert [(r["level"], r["summary"]) for r in reports.values()] == [
        ("warning", "3 retraces"),
        ("warning", "1 variable"),
        ("error", "InvalidArgumentError"),
        ("warning", "1 tip"),
        ("none", ""),
    ]
