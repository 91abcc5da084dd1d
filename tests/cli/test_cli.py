"""``tfcoach`` run for real, as a subprocess, on the fixtures in tests/data/cli/."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import nbformat
import pytest

from jupyterlab_tfcoach.analysis import RULES, load_config
from jupyterlab_tfcoach.analysis import analyze_path as api_analyze_path
from jupyterlab_tfcoach.course import course_ref

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "tests" / "data" / "cli"
DATA_ARG = "tests/data/cli"  # how a user in the repo root would name the fixtures

FINDING_KEYS = {
    "path",
    "code",
    "name",
    "severity",
    "message",
    "line",
    "column",
    "end_line",
    "end_column",
    "cell",
    "course",
    "fix",
    "related",
}
SEVERITIES = {"error", "warning", "information", "hint"}
EXPECT_MARKER = re.compile(r"#\s*expect:\s*(?P<codes>TFC\d{3}(?:\s*,\s*TFC\d{3})*)")


def run_tfcoach(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    # `python -m` with the repo on PYTHONPATH: works before and after `pip install -e .`.
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "jupyterlab_tfcoach.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def expected_in_source(text: str) -> set[tuple[str, int]]:
    """(code, line) pairs from the ``# expect: TFC00x`` markers of a fixture."""
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT_MARKER.search(line)
        if match:
            found.update((code.strip(), number) for code in match["codes"].split(","))
    return found


def expected_in_notebook(path: Path) -> set[tuple[int, str, int]]:
    """(code-cell index, code, line within cell) from markers in a notebook's code cells."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    found = set()
    for index, cell in enumerate(code_cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        found.update((index, code, line) for code, line in expected_in_source(source))
    return found


def check_json(*args: str, cwd: Path = REPO_ROOT) -> tuple[int, list[dict[str, Any]], str]:
    completed = run_tfcoach("check", "--format", "json", *args, cwd=cwd)
    return completed.returncode, json.loads(completed.stdout), completed.stderr


PITFALLS_EXPECTED = expected_in_source((DATA / "pitfalls.py").read_text(encoding="utf-8"))


def test_fixture_markers_are_present() -> None:
    assert {code for code, _ in PITFALLS_EXPECTED} == {"TFC001", "TFC002", "TFC006"}
    assert expected_in_notebook(DATA / "notebook.ipynb") == {(1, "TFC002", 3), (2, "TFC001", 3)}
    assert expected_in_notebook(DATA / "broken_cell.ipynb") == {(2, "TFC001", 1)}


# ---------------------------------------------------------------------------
# Text output


def test_text_output_lists_each_finding_with_its_course_link() -> None:
    completed = run_tfcoach("check", f"{DATA_ARG}/pitfalls.py")
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr == ""
    lines = completed.stdout.splitlines()
    finding_line = re.compile(
        rf"^{re.escape(DATA_ARG)}/pitfalls\.py:(?P<line>\d+):(?P<col>\d+): (?P<code>TFC\d{{3}}) \S"
    )
    reported = []
    for index, line in enumerate(lines):
        match = finding_line.match(line)
        if not match:
            continue
        reported.append((match["code"], int(match["line"])))
        course = lines[index + 1]
        assert course.startswith("    course: "), course
        assert "file://" in course and re.search(r"/module-0[1-4]\.md#[a-z-]+$", course), course
    assert set(reported) == PITFALLS_EXPECTED
    assert len(reported) == len(PITFALLS_EXPECTED)
    assert lines[-1] == f"{len(PITFALLS_EXPECTED)} findings in 1 file"


def test_text_output_names_the_course_section_title() -> None:
    completed = run_tfcoach("check", f"{DATA_ARG}/pitfalls.py", "--select", "TFC002")
    ref = course_ref("side-effects")
    assert f"    course: {ref['title']} {ref['url']}" in completed.stdout.splitlines()


def test_clean_file_exits_zero() -> None:
    completed = run_tfcoach("check", f"{DATA_ARG}/clean.py")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout == "0 findings in 1 file\n"
    assert completed.stderr == ""


def test_notebook_text_names_the_cell() -> None:
    completed = run_tfcoach("check", f"{DATA_ARG}/notebook.ipynb")
    assert completed.returncode == 1, completed.stderr
    for cell, code, line in expected_in_notebook(DATA / "notebook.ipynb"):
        assert re.search(
            rf"^{re.escape(DATA_ARG)}/notebook\.ipynb:code cell {cell + 1}:{line}:\d+: {code} ",
            completed.stdout,
            re.M,
        ), completed.stdout


# ---------------------------------------------------------------------------
# JSON output


def test_json_is_one_array_of_contract_objects() -> None:
    code, findings, stderr = check_json(f"{DATA_ARG}/pitfalls.py")
    assert code == 1, stderr
    assert {(f["code"], f["line"]) for f in findings} == PITFALLS_EXPECTED
    rule_names = {rule.code: rule.name for rule in RULES}
    for finding in findings:
        assert set(finding) == FINDING_KEYS
        assert finding["path"] == f"{DATA_ARG}/pitfalls.py"
        assert finding["name"] == rule_names[finding["code"]]
        assert finding["severity"] in SEVERITIES
        assert isinstance(finding["message"], str) and finding["message"]
        for key in ("line", "column", "end_line", "end_column"):
            assert isinstance(finding[key], int) and finding[key] >= 1
        assert (finding["end_line"], finding["end_column"]) > (finding["line"], finding["column"])
        assert finding["cell"] is None
        assert set(finding["course"]) == {"module", "section", "title", "url"}
        url = urlparse(finding["course"]["url"])
        assert url.scheme == "file" and Path(unquote(url.path)).is_file()
        assert url.fragment == finding["course"]["section"]
        if finding["fix"] is not None:
            assert set(finding["fix"]) == {"description", "edits"}
            for edit in finding["fix"]["edits"]:
                assert set(edit) == {"line", "column", "end_line", "end_column", "new_text"}


def test_json_matches_the_analysis_api_exactly() -> None:
    # The CLI adds paths and course links; everything else is the analysis' own.
    _, findings, _ = check_json(f"{DATA_ARG}/pitfalls.py")
    config = load_config(DATA / "pitfalls.py")
    api = sorted(
        api_analyze_path(DATA / "pitfalls.py", config), key=lambda f: (f.line, f.column, f.code)
    )
    assert findings == [
        finding.with_location(path=f"{DATA_ARG}/pitfalls.py").to_json(
            course_ref(finding.section_id, config.course_base_url)
        )
        for finding in api
    ]


def test_json_notebook_findings_carry_the_code_cell_index() -> None:
    code, findings, stderr = check_json(f"{DATA_ARG}/notebook.ipynb")
    assert code == 1, stderr
    assert {(f["cell"], f["code"], f["line"]) for f in findings} == expected_in_notebook(
        DATA / "notebook.ipynb"
    )
    assert {f["path"] for f in findings} == {f"{DATA_ARG}/notebook.ipynb"}


def test_json_clean_is_an_empty_array() -> None:
    completed = run_tfcoach("check", "--format", "json", f"{DATA_ARG}/clean.py")
    assert completed.returncode == 0
    assert json.loads(completed.stdout) == []


def test_absolute_paths_stay_absolute() -> None:
    _, findings, _ = check_json(str(DATA / "pitfalls.py"))
    assert {f["path"] for f in findings} == {str(DATA / "pitfalls.py")}


# A tf.function called with three Python values at three call sites: one TFC005 finding at
# the first call, the two others as related locations.
RETRACING_SOURCE = """\
import tensorflow as tf


@tf.function
def scale(x, factor):
    return x * factor


scale(x, 1)
scale(x, 2)
scale(x, 5)
"""
RETRACING_CELLS = [
    "import tensorflow as tf\n\n@tf.function\ndef scale(x, factor):\n    return x * factor\n",
    "scale(x, 1)\n",
    "y = 0\nscale(x, 2)\n",
]
RELATED_KEYS = {"line", "column", "end_line", "end_column", "cell", "message"}


def _retracing_project(root: Path) -> None:
    (root / "retrace.py").write_text(RETRACING_SOURCE, encoding="utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in RETRACING_CELLS]
    nbformat.write(notebook, str(root / "retrace.ipynb"))


def test_json_related_locations(tmp_path: Path) -> None:
    _retracing_project(tmp_path)
    code, findings, stderr = check_json("retrace.py", "retrace.ipynb", cwd=tmp_path)
    assert code == 1, stderr
    in_file, in_notebook = findings
    assert (in_file["path"], in_file["code"], in_file["line"], in_file["column"]) == (
        "retrace.py",
        "TFC005",
        9,
        10,
    )
    assert "3 different Python values for `factor` (1, 2, 5)" in in_file["message"]
    assert in_file["related"] == [
        {
            "line": 10,
            "column": 10,
            "end_line": 10,
            "end_column": 11,
            "cell": None,
            "message": "also called with `factor` = 2",
        },
        {
            "line": 11,
            "column": 10,
            "end_line": 11,
            "end_column": 11,
            "cell": None,
            "message": "also called with `factor` = 5",
        },
    ]
    # In a notebook each related location names its own cell and counts lines within it.
    assert (in_notebook["cell"], in_notebook["line"], in_notebook["column"]) == (1, 1, 10)
    [related] = in_notebook["related"]
    assert set(related) == RELATED_KEYS
    assert (related["cell"], related["line"], related["column"]) == (2, 2, 10)
    # A finding without related locations still carries the key, as an empty list.
    _, pitfalls, _ = check_json(f"{DATA_ARG}/pitfalls.py")
    assert all(finding["related"] == [] for finding in pitfalls)


def test_text_lists_related_locations_under_their_finding(tmp_path: Path) -> None:
    _retracing_project(tmp_path)
    completed = run_tfcoach("check", "retrace.py", "retrace.ipynb", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    lines = completed.stdout.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("retrace.py:9:10: TFC005")))
    assert lines[first + 2 : first + 4] == [
        "    also retrace.py:10:10: also called with `factor` = 2",
        "    also retrace.py:11:10: also called with `factor` = 5",
    ]
    assert "    also retrace.ipynb:code cell 3:2:10: also called with `factor` = 2" in lines


# ---------------------------------------------------------------------------
# Folders


def _write_project(root: Path) -> None:
    pitfalls = (DATA / "pitfalls.py").read_text(encoding="utf-8")
    for relative in (
        "train.py",
        "pkg/model.py",
        "pkg/deep/er/step.py",
        ".hidden/skipped.py",
        ".venv/lib/skipped.py",
        "node_modules/pkg/skipped.py",
        "pkg/__pycache__/skipped.py",
    ):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(pitfalls, encoding="utf-8")
    shutil.copy(DATA / "notebook.ipynb", root / "pkg" / "explore.ipynb")
    shutil.copy(DATA / "clean.py", root / "pkg" / "clean.py")
    (root / "notes.txt").write_text("w = w - 1  # not Python, never read\n", encoding="utf-8")


def test_folders_are_searched_recursively_skipping_hidden_and_tool_folders(tmp_path: Path) -> None:
    _write_project(tmp_path / "project")
    code, findings, stderr = check_json("project", cwd=tmp_path)
    assert code == 1, stderr
    assert {f["path"] for f in findings} == {
        "project/train.py",
        "project/pkg/model.py",
        "project/pkg/deep/er/step.py",
        "project/pkg/explore.ipynb",
    }
    text = run_tfcoach("check", "project", cwd=tmp_path)
    assert text.stdout.splitlines()[-1] == f"{len(findings)} findings in 5 files"


def test_a_file_named_twice_is_checked_once(tmp_path: Path) -> None:
    _write_project(tmp_path / "project")
    _, findings, _ = check_json("project", "project/train.py", cwd=tmp_path)
    assert sum(f["path"] == "project/train.py" for f in findings) == len(PITFALLS_EXPECTED)


# ---------------------------------------------------------------------------
# Input errors


@pytest.mark.parametrize(
    ("fixture", "problem"),
    [
        ("not_utf8.py", r"UTF-8"),
        ("broken.ipynb", r"(JSON|notebook)"),
        ("syntax_error.py", r"(?i)syntax"),
        ("missing.py", r"no such file"),
    ],
)
def test_bad_input_is_one_line_on_stderr_naming_the_file(fixture: str, problem: str) -> None:
    completed = run_tfcoach("check", f"{DATA_ARG}/{fixture}")
    assert completed.returncode == 2
    stderr_lines = completed.stderr.splitlines()
    assert len(stderr_lines) == 1, completed.stderr
    assert f"{DATA_ARG}/{fixture}" in stderr_lines[0]
    assert re.search(problem, stderr_lines[0]), stderr_lines[0]
    assert "Traceback" not in completed.stderr


def test_a_broken_notebook_cell_does_not_hide_the_other_cells() -> None:
    completed = run_tfcoach("check", f"{DATA_ARG}/broken_cell.ipynb")
    assert completed.returncode == 2
    (error,) = completed.stderr.splitlines()
    assert f"{DATA_ARG}/broken_cell.ipynb" in error and "code cell 2" in error
    ((cell, code, line),) = expected_in_notebook(DATA / "broken_cell.ipynb")
    assert (
        f"{DATA_ARG}/broken_cell.ipynb:code cell {cell + 1}:{line}:1: {code} " in completed.stdout
    )
    assert completed.stdout.splitlines()[-1] == "1 finding in 1 file; 1 input error (see above)"


def test_automagic_cells_are_magics_not_syntax_errors(tmp_path: Path) -> None:
    # One-line cells a kernel runs as line magics without `%` (automagic): no input error,
    # and the Python a timing magic runs is checked where it stands.
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(source)
        for source in (
            "import tensorflow as tf\nw = tf.Variable(1.0)\nsteps = tf.constant(3)",
            "pip install --quiet keras-tuner",
            "ls ./data/",
            "time w = w - 0.1",
            "half = %time tf.constant(0.5)",
            "mixed = steps * half",
        )
    ]
    nbformat.write(notebook, str(tmp_path / "magics.ipynb"))
    completed = run_tfcoach("check", "magics.ipynb", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr == ""
    located = re.findall(r"^(\S+:code cell \d+:\d+:\d+): (TFC\d{3}) ", completed.stdout, re.M)
    assert located == [
        ("magics.ipynb:code cell 4:1:6", "TFC001"),
        ("magics.ipynb:code cell 6:1:9", "TFC009"),  # `half` holds what %time returned
    ]


def test_nested_lambdas_are_an_input_error_and_the_rest_is_still_checked(tmp_path: Path) -> None:
    # Issue #24: 500 nested lambdas once made the analysis give up silently, exit 0.
    (tmp_path / "deep.py").write_text(
        "import tensorflow as tf\n\nw = tf.Variable(1.0)\ng = 1.0\nw = w - 0.1 * g\n"
        "f = " + "lambda: " * 500 + "0\n",
        encoding="utf-8",
    )
    for run in ("analysed", "from the cache"):
        completed = run_tfcoach("check", "deep.py", cwd=tmp_path)
        assert completed.returncode == 2, (run, completed)
        (error,) = completed.stderr.splitlines()
        assert error.startswith("tfcoach: deep.py: line 6, column 1605: too deeply nested to check")
        assert "deep.py:5:1: TFC001 " in completed.stdout, run
        assert completed.stdout.splitlines()[-1] == "1 finding in 1 file; 1 input error (see above)"


def test_other_files_are_still_checked_and_the_error_wins() -> None:
    bad = ["not_utf8.py", "broken.ipynb", "syntax_error.py", "missing.py"]
    completed = run_tfcoach(
        "check",
        "--format",
        "json",
        *(f"{DATA_ARG}/{name}" for name in bad),
        f"{DATA_ARG}/pitfalls.py",
    )
    assert completed.returncode == 2
    findings = json.loads(completed.stdout)
    assert {(f["code"], f["line"]) for f in findings} == PITFALLS_EXPECTED
    stderr_lines = completed.stderr.splitlines()
    assert len(stderr_lines) == len(bad)
    for name in bad:
        assert sum(name in line for line in stderr_lines) == 1


def test_usage_errors_exit_two() -> None:
    assert run_tfcoach().returncode == 2
    assert run_tfcoach("check").returncode == 2
    assert run_tfcoach("check", "--format", "xml", f"{DATA_ARG}/clean.py").returncode == 2
    unknown = run_tfcoach("check", "--select", "TFC999", f"{DATA_ARG}/clean.py")
    assert unknown.returncode == 2
    assert "TFC999" in unknown.stderr
    assert unknown.stdout == ""


def test_help_documents_exit_codes_and_that_an_input_error_wins() -> None:
    completed = run_tfcoach("check", "--help")
    assert completed.returncode == 0
    help_text = " ".join(completed.stdout.split())
    assert "exit status: 0 no findings 1 findings were reported 2 usage error" in help_text
    assert "An input error wins over findings" in help_text


# ---------------------------------------------------------------------------
# Rule selection and configuration


def test_select_and_ignore() -> None:
    _, selected, _ = check_json(f"{DATA_ARG}/pitfalls.py", "--select", "TFC002")
    assert {f["code"] for f in selected} == {"TFC002"}
    _, ignored, _ = check_json(f"{DATA_ARG}/pitfalls.py", "--ignore", "TFC002, tfc006")
    assert {f["code"] for f in ignored} == {"TFC001"}
    _, both, _ = check_json(
        f"{DATA_ARG}/pitfalls.py", "--select", "TFC001,TFC002", "--ignore", "TFC002"
    )
    assert {f["code"] for f in both} == {"TFC001"}
    code, none_left, _ = check_json(f"{DATA_ARG}/pitfalls.py", "--select", "TFC012")
    assert (code, none_left) == (0, [])
    # Prefixes select or ignore whole groups, as in ruff.
    _, prefixed, _ = check_json(f"{DATA_ARG}/pitfalls.py", "--select", "TFC00")
    assert {(f["code"], f["line"]) for f in prefixed} == PITFALLS_EXPECTED
    code, all_ignored, _ = check_json(f"{DATA_ARG}/pitfalls.py", "--ignore", "TFC")
    assert (code, all_ignored) == (0, [])


def _configured_project(root: Path, table: str) -> None:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\n\n[tool.tfcoach]\n{table}\n', encoding="utf-8"
    )
    (root / "src").mkdir()
    shutil.copy(DATA / "pitfalls.py", root / "src" / "pitfalls.py")


def test_pyproject_configuration_applies_and_flags_override_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _configured_project(
        project, 'ignore = ["TFC002"]\ncourse-base-url = "https://coach.example/course/"'
    )
    code, findings, stderr = check_json("src", cwd=project)
    assert code == 1, stderr
    assert {f["code"] for f in findings} == {"TFC001", "TFC006"}
    for finding in findings:
        course = finding["course"]
        assert course["url"] == (
            f"https://coach.example/course/{course['module']}#{course['section']}"
        )
    # Run from elsewhere: the pyproject nearest to the *file* still applies.
    _, from_outside, _ = check_json("project/src/pitfalls.py", cwd=tmp_path)
    assert {f["code"] for f in from_outside} == {"TFC001", "TFC006"}
    # A flag replaces the file's list.
    _, overridden, _ = check_json("src", "--ignore", "TFC006", cwd=project)
    assert {f["code"] for f in overridden} == {"TFC001", "TFC002"}


def test_invalid_configuration_is_an_input_error(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _configured_project(project, 'select = ["NOPE1"]')
    completed = run_tfcoach("check", "src", cwd=project)
    assert completed.returncode == 2
    assert "pyproject.toml" in completed.stderr and "NOPE1" in completed.stderr
    assert "src/pitfalls.py" in completed.stderr


# ---------------------------------------------------------------------------
# SARIF

SARIF_LEVELS = ["none", "note", "warning", "error"]


def _strict(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An object schema that rejects property names SARIF 2.1.0 does not define there."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


# A hand-written subset of the SARIF 2.1.0 schema covering every object tfcoach
# emits, with the spec's property names, required members and enumerations.
# Unlisted optional members of these objects are simply absent from our output.
_MESSAGE = _strict({"text": {"type": "string"}, "markdown": {"type": "string"}}, ["text"])
_MULTIFORMAT = _strict({"text": {"type": "string"}, "markdown": {"type": "string"}}, ["text"])
_PROPERTY_BAG = {"type": "object"}
_ARTIFACT_LOCATION = _strict(
    {
        "uri": {"type": "string", "format": "uri-reference"},
        "uriBaseId": {"type": "string"},
        "index": {"type": "integer", "minimum": -1},
        "description": _MESSAGE,
        "properties": _PROPERTY_BAG,
    }
)
_REGION = _strict(
    {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
        "charOffset": {"type": "integer", "minimum": -1},
        "charLength": {"type": "integer", "minimum": 0},
        "snippet": {"type": "object"},
        "message": _MESSAGE,
        "properties": _PROPERTY_BAG,
    }
)
_PHYSICAL_LOCATION = _strict(
    {
        "artifactLocation": _ARTIFACT_LOCATION,
        "region": _REGION,
        "contextRegion": _REGION,
        "properties": _PROPERTY_BAG,
    }
)
_LOCATION = _strict(
    {
        "id": {"type": "integer", "minimum": -1},
        "physicalLocation": _PHYSICAL_LOCATION,
        "logicalLocations": {"type": "array"},
        "message": _MESSAGE,
        "properties": _PROPERTY_BAG,
    }
)
_FIX = _strict(
    {
        "description": _MESSAGE,
        "artifactChanges": {
            "type": "array",
            "minItems": 1,
            "items": _strict(
                {
                    "artifactLocation": _ARTIFACT_LOCATION,
                    "replacements": {
                        "type": "array",
                        "minItems": 1,
                        "items": _strict(
                            {
                                "deletedRegion": _REGION,
                                "insertedContent": _strict(
                                    {"text": {"type": "string"}, "binary": {"type": "string"}}
                                ),
                                "properties": _PROPERTY_BAG,
                            },
                            ["deletedRegion"],
                        ),
                    },
                    "properties": _PROPERTY_BAG,
                },
                ["artifactLocation", "replacements"],
            ),
        },
        "properties": _PROPERTY_BAG,
    },
    ["artifactChanges"],
)
_REPORTING_DESCRIPTOR = _strict(
    {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "shortDescription": _MULTIFORMAT,
        "fullDescription": _MULTIFORMAT,
        "help": _MULTIFORMAT,
        "helpUri": {"type": "string", "format": "uri"},
        "defaultConfiguration": _strict(
            {
                "enabled": {"type": "boolean"},
                "level": {"enum": SARIF_LEVELS},
                "rank": {"type": "number"},
                "parameters": _PROPERTY_BAG,
                "properties": _PROPERTY_BAG,
            }
        ),
        "properties": _PROPERTY_BAG,
    },
    ["id"],
)
_RESULT = _strict(
    {
        "ruleId": {"type": "string"},
        "ruleIndex": {"type": "integer", "minimum": -1},
        "kind": {"enum": ["notApplicable", "pass", "fail", "review", "open", "informational"]},
        "level": {"enum": SARIF_LEVELS},
        "message": _MESSAGE,
        "locations": {"type": "array", "items": _LOCATION},
        "relatedLocations": {"type": "array", "items": _LOCATION},
        "fixes": {"type": "array", "items": _FIX},
        "properties": _PROPERTY_BAG,
    },
    ["message"],
)
_NOTIFICATION = _strict(
    {
        "locations": {"type": "array", "items": _LOCATION},
        "message": _MESSAGE,
        "level": {"enum": SARIF_LEVELS},
        "properties": _PROPERTY_BAG,
    },
    ["message"],
)
SARIF_SUBSET_SCHEMA = _strict(
    {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "items": _strict(
                {
                    "tool": _strict(
                        {
                            "driver": _strict(
                                {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "semanticVersion": {"type": "string"},
                                    "informationUri": {"type": "string", "format": "uri"},
                                    "rules": {"type": "array", "items": _REPORTING_DESCRIPTOR},
                                    "properties": _PROPERTY_BAG,
                                },
                                ["name"],
                            ),
                            "properties": _PROPERTY_BAG,
                        },
                        ["driver"],
                    ),
                    "invocations": {
                        "type": "array",
                        "items": _strict(
                            {
                                "executionSuccessful": {"type": "boolean"},
                                "toolExecutionNotifications": {
                                    "type": "array",
                                    "items": _NOTIFICATION,
                                },
                                "properties": _PROPERTY_BAG,
                            },
                            ["executionSuccessful"],
                        ),
                    },
                    "originalUriBaseIds": {
                        "type": "object",
                        "additionalProperties": _ARTIFACT_LOCATION,
                    },
                    "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                    "results": {"type": "array", "items": _RESULT},
                    "properties": _PROPERTY_BAG,
                },
                ["tool"],
            ),
        },
    },
    ["version", "runs"],
)


def _sarif(*args: str, cwd: Path = REPO_ROOT) -> tuple[int, dict[str, Any]]:
    completed = run_tfcoach("check", "--format", "sarif", *args, cwd=cwd)
    return completed.returncode, json.loads(completed.stdout)


def test_sarif_is_valid_and_complete() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    code, log = _sarif(f"{DATA_ARG}/pitfalls.py", f"{DATA_ARG}/notebook.ipynb")
    assert code == 1
    jsonschema.Draft7Validator(
        SARIF_SUBSET_SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    ).validate(log)
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == REPO_ROOT.as_uri() + "/"

    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == sorted(rule.code for rule in RULES)
    registry = {rule.code: rule for rule in RULES}
    for rule in rules:
        source = registry[rule["id"]]
        assert rule["name"] == source.name
        assert rule["shortDescription"]["text"] == source.summary
        assert rule["fullDescription"]["text"]
        # No course base URL configured: the packaged course's file:// link is not shared.
        assert "helpUri" not in rule
        assert rule["properties"]["course"] == {
            key: value for key, value in course_ref(source.section).items() if key != "url"
        }
        expected_level = {"error": "error", "warning": "warning"}.get(source.severity.value, "note")
        assert rule["defaultConfiguration"]["level"] == expected_level

    _, findings, _ = check_json(f"{DATA_ARG}/pitfalls.py", f"{DATA_ARG}/notebook.ipynb")
    assert len(run["results"]) == len(findings)
    for result, finding in zip(run["results"], findings, strict=True):
        assert result["ruleId"] == finding["code"]
        assert rules[result["ruleIndex"]]["id"] == finding["code"]
        assert result["message"]["text"] == finding["message"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": finding["path"], "uriBaseId": "%SRCROOT%"}
        assert location["region"] == {
            "startLine": finding["line"],
            "startColumn": finding["column"],
            "endLine": finding["end_line"],
            "endColumn": finding["end_column"],
        }
        assert result["properties"]["cell"] == finding["cell"]
        if finding["fix"] is None or finding["cell"] is not None:
            # Notebook fix regions count lines within a cell, not within the .ipynb JSON.
            assert "fixes" not in result
        else:
            (fix,) = result["fixes"]
            assert fix["description"]["text"] == finding["fix"]["description"]
            replacements = fix["artifactChanges"][0]["replacements"]
            assert [r["insertedContent"]["text"] for r in replacements] == [
                edit["new_text"] for edit in finding["fix"]["edits"]
            ]
    assert any("fixes" in result for result in run["results"])


def test_sarif_shares_no_path_of_this_installation(tmp_path: Path) -> None:
    """A SARIF log is uploaded to code-scanning services: without a configured http(s)
    course it names sections, never this machine's install paths."""
    (tmp_path / "pitfalls.py").write_text((DATA / "pitfalls.py").read_text(encoding="utf-8"))
    install = str(Path(course_ref("tracing")["url"].removeprefix("file://")).parent.parent)
    code, log = _sarif("pitfalls.py", cwd=tmp_path)
    assert code == 1 and log["runs"][0]["results"]
    text = json.dumps(log)
    assert install not in text and "site-packages" not in text
    assert all("url" not in r["properties"]["course"] for r in log["runs"][0]["results"])

    project = tmp_path / "configured"
    _configured_project(project, 'course-base-url = "https://coach.example/course"')
    _, log = _sarif("src/pitfalls.py", cwd=project)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rule["helpUri"].startswith("https://coach.example/course/") for rule in rules)
    result = log["runs"][0]["results"][0]
    assert result["properties"]["course"]["url"].startswith("https://coach.example/course/")


def test_sarif_related_locations(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    _retracing_project(tmp_path)
    code, log = _sarif("retrace.py", "retrace.ipynb", cwd=tmp_path)
    assert code == 1
    jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).validate(log)
    in_file, in_notebook = log["runs"][0]["results"]
    artifact = {"uri": "retrace.py", "uriBaseId": "%SRCROOT%"}
    assert in_file["relatedLocations"] == [
        {
            "id": 1,
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": {"startLine": 10, "startColumn": 10, "endLine": 10, "endColumn": 11},
            },
            "message": {"text": "also called with `factor` = 2"},
            "properties": {"cell": None},
        },
        {
            "id": 2,
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": {"startLine": 11, "startColumn": 10, "endLine": 11, "endColumn": 11},
            },
            "message": {"text": "also called with `factor` = 5"},
            "properties": {"cell": None},
        },
    ]
    [related] = in_notebook["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "retrace.ipynb"
    assert related["physicalLocation"]["region"]["startLine"] == 2
    assert related["properties"] == {"cell": 2}
    # No related locations: no empty member.
    _, pitfalls = _sarif(f"{DATA_ARG}/pitfalls.py")
    assert all("relatedLocations" not in result for result in pitfalls["runs"][0]["results"])


def test_sarif_reports_input_errors_as_notifications() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    code, log = _sarif(f"{DATA_ARG}/clean.py", f"{DATA_ARG}/syntax_error.py")
    assert code == 2
    jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).validate(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    uri = notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == f"{DATA_ARG}/syntax_error.py"
    assert log["runs"][0]["results"] == []


def test_sarif_schema_subset_rejects_misspelled_members() -> None:
    # Guards the guard: a typo in a region or a wrong level must fail validation.
    jsonschema = pytest.importorskip("jsonschema")
    _, log = _sarif(f"{DATA_ARG}/pitfalls.py")
    validator = jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA)
    broken = json.loads(json.dumps(log))
    region = broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    region["startcolumn"] = region.pop("startColumn")
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "warn"
    assert not validator.is_valid(broken)


# ---------------------------------------------------------------------------
# rules / rule


def test_rules_lists_every_rule_once() -> None:
    completed = run_tfcoach("rules")
    assert completed.returncode == 0
    lines = completed.stdout.splitlines()
    assert len(lines) == len(RULES)
    codes = [line.split()[0] for line in lines]
    assert codes == sorted(rule.code for rule in RULES)
    assert {f"TFC{number:03d}" for number in range(1, 13)} <= set(codes)
    for rule in RULES:
        (line,) = [line for line in lines if line.startswith(rule.code + " ")]
        assert re.match(
            rf"^{rule.code}\s+{re.escape(rule.name)}\s+{rule.severity.value}\s+"
            rf"{re.escape(rule.summary)}$",
            line,
        ), line


@pytest.mark.parametrize("spelling", ["TFC004", "tfc004"])
def test_rule_prints_docs_and_course_link(spelling: str) -> None:
    rule = next(rule for rule in RULES if rule.code == "TFC004")
    completed = run_tfcoach("rule", spelling)
    assert completed.returncode == 0
    assert completed.stdout.startswith(f"TFC004 {rule.name} ")
    assert rule.docs.strip() in completed.stdout
    for heading in ("What it does", "Why is this bad", "Example", "Use instead"):
        assert heading in completed.stdout
    assert course_ref(rule.section)["url"] in completed.stdout


@pytest.mark.parametrize("code", sorted(rule.code for rule in RULES))
def test_rule_docs_and_course_link_name_the_same_section(code: str) -> None:
    # `tfcoach rule` prints the docs' "Course module" line and then the link;
    # a stale title in the docs would send readers looking for a heading that is not there.
    completed = run_tfcoach("rule", code)
    course_line = completed.stdout.split("## Course module", 1)[1].strip().splitlines()[0]
    rule = next(rule for rule in RULES if rule.code == code)
    ref = course_ref(rule.section)
    assert f"*{ref['title']}*" in course_line, course_line
    assert f"`{rule.section}`" in course_line
    assert f"Course: {ref['title']} ({ref['module']})" in completed.stdout


def test_rule_uses_the_configured_course_base_url(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _configured_project(project, 'course-base-url = "https://coach.example/c"')
    completed = run_tfcoach("rule", "TFC002", cwd=project)
    section = next(rule.section for rule in RULES if rule.code == "TFC002")
    module = course_ref(section)["module"]
    assert f"https://coach.example/c/{module}#{section}" in completed.stdout


def test_unknown_rule_exits_two() -> None:
    completed = run_tfcoach("rule", "TFC999")
    assert completed.returncode == 2
    assert "TFC999" in completed.stderr
    assert completed.stdout == ""


def test_console_script_runs_the_same_cli() -> None:
    script = Path(sys.executable).with_name("tfcoach")
    if not script.is_file():
        pytest.skip("the project is not installed in this environment (no `tfcoach` script)")
    completed = subprocess.run(
        [str(script), "check", "--format", "json", f"{DATA_ARG}/pitfalls.py"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert {(f["code"], f["line"]) for f in json.loads(completed.stdout)} == PITFALLS_EXPECTED
