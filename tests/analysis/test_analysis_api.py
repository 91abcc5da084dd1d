from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import (
    RULES,
    AnalysisInputError,
    AnalysisSyntaxError,
    Config,
    ConfigError,
    analyze_cells,
    analyze_path,
    analyze_source,
    check_cells,
    load_config,
    rule_by_code,
)
from jupyterlab_tfcoach.analysis.noqa import noqa_codes
from jupyterlab_tfcoach.analysis.notebook import join_cells
from jupyterlab_tfcoach.analysis.rules import DOC_HEADINGS
from jupyterlab_tfcoach.analysis.testing import span
from jupyterlab_tfcoach.course import get_course
from tests.course.test_course import ALL_SECTION_IDS, SECTION_IDS

PRINTS = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function
    def step(x):
        print(x)
        return x.numpy()
    """
)


# -- columns ------------------------------------------------------------------


def test_columns_count_characters_not_utf8_bytes():
    source = 'import tensorflow as tf\nw = tf.Variable(1.0)\ns = "é🙂"; w = w - 1\n'
    [finding] = analyze_source(source, Config.from_options(select=["TFC001"]))
    # ``w = w - 1`` starts after 10 characters (but 15 UTF-8 bytes).
    assert span(finding) == (3, 11, 3, 20)
    assert finding.fix is not None
    edit = finding.fix.edits[0]
    assert (edit.column, edit.end_column) == (11, 20)


def test_non_ascii_in_a_comment_before_a_multiline_range():
    source = (
        "import tensorflow as tf  # café\n"
        "@tf.function\n"
        "def f(x):\n"
        "    y = 'ü'; print(x,\n"
        "                   'ö')\n"
    )
    [finding] = analyze_source(source, Config.from_options(select=["TFC002"]))
    assert span(finding) == (4, 14, 5, 24)


# -- selection and suppression ---------------------------------------------------


def test_findings_are_sorted_and_carry_path_and_section():
    findings = analyze_source(PRINTS, path="step.py")
    assert [(f.code, f.line) for f in findings] == [("TFC002", 5), ("TFC011", 6)]
    assert {f.path for f in findings} == {"step.py"}
    assert findings[0].section_id == "side-effects"


def test_noqa_bare_and_with_codes():
    source = PRINTS.replace("print(x)", "print(x)  # noqa").replace(
        "x.numpy()", "x.numpy()  # noqa: TFC002"
    )
    assert [f.code for f in analyze_source(source)] == ["TFC011"]
    source = PRINTS.replace("x.numpy()", "x.numpy()  # NOQA:TFC011, TFC002")
    assert [f.code for f in analyze_source(source)] == ["TFC002"]


def test_noqa_parsing_ignores_strings():
    assert noqa_codes("x = '# noqa'") is None
    assert noqa_codes("x = 1  # noqa") == frozenset()
    assert noqa_codes("x = 1  # noqa: TFC001,TFC002") == {"TFC001", "TFC002"}
    assert noqa_codes("x = 1  # nothing") is None


def test_select_and_ignore():
    assert [f.code for f in analyze_source(PRINTS, Config.from_options(select=["TFC011"]))] == [
        "TFC011"
    ]
    assert [f.code for f in analyze_source(PRINTS, Config.from_options(ignore=["TFC011"]))] == [
        "TFC002"
    ]
    assert analyze_source(PRINTS, Config.from_options(select=["TFC00"], ignore=["TFC002"])) == []
    with pytest.raises(ConfigError, match="TFC999"):
        Config.from_options(select=["TFC999"])


def test_overrides_replace_file_settings():
    config = Config.from_options(select=["TFC002"], course_base_url="https://x.example")
    overridden = config.overridden(select=["TFC011"])
    assert overridden.is_enabled("TFC011") and not overridden.is_enabled("TFC002")
    assert overridden.course_base_url == "https://x.example"


def test_pyproject_discovery(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tfcoach]\nselect = ["TFC002"]\ncourse-base-url = "https://course.example"\n'
    )
    package = tmp_path / "pkg" / "sub"
    package.mkdir(parents=True)
    # A nearer pyproject.toml without [tool.tfcoach] does not hide the project's.
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    script = package / "step.py"
    script.write_text(PRINTS)
    config = load_config(script)
    assert config.course_base_url == "https://course.example"
    assert [f.code for f in analyze_path(script)] == ["TFC002"]


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('select = "TFC00X"', "unknown rule code"),
        ("select = 3", "must be a list"),
        ('colour = "red"', "unknown key"),
        ("course-base-url = 1", "must be a string"),
        ("select = [", "invalid TOML"),
    ],
)
def test_invalid_config_is_a_clear_error(tmp_path: Path, table: str, problem: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.tfcoach]\n{table}\n")
    with pytest.raises(ConfigError, match=problem) as info:
        load_config(tmp_path)
    assert "pyproject.toml" in str(info.value)


@pytest.mark.parametrize(
    "spelling",
    [
        '[tool]\ntfcoach = { ignore = ["TFC002"] }\n',
        'tool.tfcoach.ignore = ["TFC002"]\n',
        '[tool.tfcoach]\nignore = ["TFC002"]\n',
    ],
)
def test_every_toml_spelling_of_the_table_is_read(tmp_path: Path, spelling: str):
    (tmp_path / "pyproject.toml").write_text(spelling)
    script = tmp_path / "step.py"
    script.write_text(PRINTS)
    assert load_config(tmp_path).ignore == frozenset({"TFC002"})
    assert [f.code for f in analyze_path(script)] == ["TFC011"]


def test_a_subtable_is_an_unknown_key_not_silence(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.tfcoach.extra]\nx = 1\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(tmp_path)


def test_no_pyproject_means_defaults(tmp_path: Path):
    assert load_config(tmp_path) == Config()


# -- inputs ---------------------------------------------------------------------


def test_file_without_tensorflow_yields_nothing():
    source = PRINTS.replace("import tensorflow as tf", "import tf_keras as tf")
    assert analyze_source(source) == []
    assert analyze_source("") == []


def test_syntax_error_is_a_syntax_error_subclass():
    with pytest.raises(AnalysisSyntaxError) as info:
        analyze_source("import tensorflow as tf\ndef f(:\n")
    assert isinstance(info.value, SyntaxError)
    assert info.value.lineno == 2
    assert "line 2" in str(info.value)
    with pytest.raises(AnalysisSyntaxError):
        analyze_source("x = 1\0")


def test_notebook_magics_are_masked_and_lines_kept():
    cells = [
        "%load_ext autoreload\nimport tensorflow as tf\n!pip list\nfiles = !ls",
        "%%time\nprint('whole cell magic is skipped')",
        "tf.function?\n@tf.function\ndef f(x):\n    %time y = 1\n    print(x)",
    ]
    [finding] = analyze_cells(cells)
    assert (finding.code, finding.cell, *span(finding)) == ("TFC002", 2, 5, 5, 5, 13)
    joined = join_cells(cells)
    assert joined.syntax_errors == ()
    assert joined.source.count("\n") == sum(len(c.splitlines()) for c in cells)


def test_notebook_cell_with_syntax_error_does_not_hide_others():
    cells = [
        "import tensorflow as tf",
        "def broken(:",
        "@tf.function\ndef f(x):\n    print(x)",
    ]
    result = check_cells(cells)
    assert [(f.cell, f.line) for f in result.findings] == [(2, 3)]
    [error] = result.syntax_errors
    assert (error.cell, error.line) == (1, 1)


def _notebook(cells: list[str], language: str = "python") -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {"language_info": {"name": language}},
            "cells": [
                {"cell_type": "markdown", "id": "m0", "metadata": {}, "source": "# title"},
                *(
                    {
                        "cell_type": "code",
                        "id": f"c{i}",
                        "metadata": {},
                        "execution_count": None,
                        "outputs": [],
                        "source": source.splitlines(keepends=True),
                    }
                    for i, source in enumerate(cells)
                ),
            ],
        }
    )


def test_analyze_path_notebook_counts_code_cells_only(tmp_path: Path):
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(_notebook(["import tensorflow as tf", PRINTS]))
    findings = analyze_path(notebook, Config())
    assert [(f.code, f.cell, f.line, f.path) for f in findings] == [
        ("TFC002", 1, 5, str(notebook)),
        ("TFC011", 1, 6, str(notebook)),
    ]
    other = tmp_path / "r.ipynb"
    other.write_text(_notebook([PRINTS], language="R"))
    assert analyze_path(other, Config()) == []


def test_analyze_path_notebook_with_broken_cell_keeps_findings(tmp_path: Path):
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(_notebook([PRINTS, "x = ("]))
    with pytest.raises(AnalysisInputError, match="code cell 2") as info:
        analyze_path(notebook, Config())
    assert [f.code for f in info.value.findings] == ["TFC002", "TFC011"]


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("bad.py", b"x = '\xff'\n", "not valid UTF-8"),
        ("bad.ipynb", b"{not json", "invalid notebook JSON"),
        ("bad.py", b"import tensorflow as tf\ndef f(:\n", "syntax error at line 2"),
    ],
)
def test_analyze_path_input_errors(tmp_path: Path, name: str, content: bytes, problem: str):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(AnalysisInputError, match=problem) as info:
        analyze_path(path, Config())
    assert info.value.path == str(path)
    assert str(path) in str(info.value)


def test_analyze_path_missing_file(tmp_path: Path):
    with pytest.raises(AnalysisInputError, match="no such file"):
        analyze_path(tmp_path / "missing.py", Config())


# -- the registry --------------------------------------------------------------------


def test_registry_has_twenty_eight_documented_rules():
    assert [rule.code for rule in RULES] == [f"TFC{n:03d}" for n in range(1, 29)]
    for rule in RULES:
        positions = [rule.docs.index(heading) for heading in DOC_HEADINGS]
        assert positions == sorted(positions), rule.code
        assert rule.section in ALL_SECTION_IDS
        assert rule.summary.endswith(".")
        assert rule_by_code(rule.code.lower()) is rule
        assert rule_by_code(rule.name) is rule
    with pytest.raises(KeyError):
        rule_by_code("TFC999")


def test_readme_lists_every_rule_with_its_name_and_severity():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for rule in RULES:
        row = f"| `{rule.code}` | `{rule.name}` | {rule.severity.value} |"
        assert row in readme, row


def test_rule_sections_exist_in_the_course():
    course = get_course()
    for rule in RULES:
        section = course.section(rule.section)
        assert rule.section in SECTION_IDS[section.module_id], rule.code


def test_garbage_collector_state_is_restored():
    import gc

    assert gc.isenabled()
    analyze_source(PRINTS)
    assert gc.isenabled()
    gc.disable()
    try:
        analyze_source(PRINTS)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_sources_and_cells_give_one_result_type():
    from jupyterlab_tfcoach.analysis import Analysis, check_source

    rebound = "import tensorflow as tf\nw = tf.Variable(1.0)\nw = w - 1.0\n"
    ok = check_source(rebound)
    assert isinstance(ok, Analysis)
    assert [f.code for f in ok.findings] == ["TFC001"] and ok.syntax_errors == ()
    broken = check_source("import tensorflow as tf\ndef broken(:\n")
    assert broken.findings == []
    assert [(p.cell, p.line) for p in broken.syntax_errors] == [(None, 2)]
    assert broken.syntax_errors[0].to_json()["cell"] is None
    cells = check_cells(
        ["import tensorflow as tf\n", "def broken(:\n", "w = tf.Variable(1.0)\nw = w - 1.0\n"]
    )
    assert isinstance(cells, Analysis)
    assert [(p.cell, p.line) for p in cells.syntax_errors] == [(1, 1)]
    assert [(f.code, f.cell) for f in cells.findings] == [("TFC001", 2)]
