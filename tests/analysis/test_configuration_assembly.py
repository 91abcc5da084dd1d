"""The one configuration path (``analysis/configuration.py``): the ``Config`` the CLI,
the language server and ``POST tfcoach/api/analyze`` analyse a file with, the problems
the user is told about (one error model, never an exception), and which course link wins.

Real files in ``tmp_path``, read by the real resolver.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.configuration import (
    Configuration,
    Overrides,
    RawOverrides,
    configuration_for,
    read_overrides,
)
from jupyterlab_tfcoach.analysis.project_config import ConfigResolver

FILE_URL = "https://file.example/course"
FRONT_URL = "https://front.example/course"


def write(folder: Path, table: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(f'[project]\nname = "demo"\n\n[tool.tfcoach]\n{table}\n', "utf-8")
    return pyproject


def test_no_file_gives_the_defaults(tmp_path: Path) -> None:
    assert configuration_for(None) == Configuration(Config())
    # A folder with no pyproject.toml (inside a root, so nothing above tmp_path counts).
    nothing = configuration_for(tmp_path / "course" / "nb.ipynb", tmp_path.resolve())
    assert nothing == Configuration(Config()) and nothing.problems == []


def test_a_valid_file_applies(tmp_path: Path) -> None:
    write(tmp_path, f'select = ["TFC00"]\nignore = ["tfc002"]\ncourse-base-url = "{FILE_URL}"')
    configuration = configuration_for(tmp_path / "sub" / "train.py")
    config = configuration.config
    assert (config.select, config.ignore) == ({"TFC00"}, {"TFC002"})
    assert config.course_base_url == FILE_URL
    assert configuration.file_problem is None and configuration.problems == []


def test_an_invalid_file_is_one_problem_and_the_defaults_apply(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "course", 'select = ["NOPE42"]').resolve()
    notebook = tmp_path / "course" / "nb.ipynb"
    overrides = Overrides(ignore=("TFC001",))

    # The CLI's and the language server's search: the file named as the resolver has it.
    unbounded = configuration_for(notebook, overrides=overrides)
    assert unbounded.config == Config(ignore=frozenset({"TFC001"}))  # defaults + overrides
    problem = unbounded.file_problem
    assert problem is not None
    assert problem.detail.startswith(f"{pyproject}: ") and "NOPE42" in problem.detail
    assert problem.message == f"ignoring [tool.tfcoach]: {problem.detail}"
    assert unbounded.problems == [problem.message]
    assert problem.version is not None and problem.version[0] == str(pyproject)

    # The Jupyter server's: relative to its root, which the message never shows.
    root = tmp_path.resolve()
    bounded = configuration_for(notebook, root, overrides)
    assert bounded.config == unbounded.config
    (message,) = bounded.problems
    assert message.startswith("ignoring [tool.tfcoach]: course/pyproject.toml: ")
    assert "NOPE42" in message and str(root) not in message


def test_any_other_failure_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    # A path the file system cannot take (the resolver raises ValueError for it).
    configuration = configuration_for(
        f"{tmp_path}/a\x00b/nb.ipynb", overrides=Overrides(select=("TFC001",))
    )
    assert configuration.problems == [
        "ignoring [tool.tfcoach]: the configuration could not be read (ValueError)"
    ]
    assert configuration.config == Config(select=frozenset({"TFC001"}))


def test_a_file_outside_the_root_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, f'select = ["TFC002"]\ncourse-base-url = "{FILE_URL}"')  # above the root
    root = tmp_path / "root"
    (root / "linked").mkdir(parents=True)
    resolver = ConfigResolver()
    inside = configuration_for(root / "nb.ipynb", root.resolve(), resolver=resolver)
    assert inside == Configuration(Config())
    # A path outside the root reads nothing either.
    outside = configuration_for(tmp_path / "nb.ipynb", root.resolve(), resolver=resolver)
    assert outside == Configuration(Config())
    assert resolver.parses == 0
    # Without a root, the same file applies (as the CLI and the language server search).
    assert configuration_for(root / "nb.ipynb", resolver=resolver).config.select == {"TFC002"}

    try:
        os.symlink(tmp_path / "pyproject.toml", root / "linked" / "pyproject.toml")
    except (OSError, NotImplementedError):
        pytest.skip("no symbolic links here")
    linked = configuration_for(root / "linked" / "nb.ipynb", root.resolve())
    assert linked.config == Config()
    assert linked.problems == [
        "ignoring [tool.tfcoach]: linked/pyproject.toml: a link to a file outside the "
        "server's root; not read"
    ]


def test_overrides_replace_the_files_lists(tmp_path: Path) -> None:
    write(tmp_path, 'select = ["TFC001", "TFC002"]\nignore = ["TFC002"]')
    path = tmp_path / "train.py"
    # A list given replaces the file's (an empty one too); one not given keeps it.
    given = configuration_for(path, overrides=Overrides(ignore=()))
    assert (given.config.select, given.config.ignore) == ({"TFC001", "TFC002"}, frozenset())
    assert given.problems == []

    # As received (JupyterLab's settings): read here, bad entries left out and said.
    raw = configuration_for(path, overrides=RawOverrides({"select": "tfc00, NOPE42"}))
    assert (raw.config.select, raw.config.ignore) == ({"TFC00"}, {"TFC002"})
    (problem,) = raw.problems
    assert problem.startswith("settings: select: unknown rule code 'NOPE42' (known: TFC001..")
    assert problem.endswith("; ignored")

    # Already read, yet not codes: left out the same way, never an exception.
    bad = configuration_for(None, overrides=Overrides(select=("TFC001", "NOPE42")))
    assert bad.config.select == {"TFC001"}
    assert len(bad.override_problems) == 1 and "NOPE42" in bad.override_problems[0]
    assert bad.file_problem is None


def test_read_overrides_names_each_list_as_the_front_end_calls_it() -> None:
    overrides, problems = read_overrides(
        RawOverrides({"select": "TFC001,TFC999", "ignore": "TFC002"}, name="--{key}")
    )
    assert overrides == Overrides(select=("TFC001",), ignore=("TFC002",))
    (problem,) = problems
    assert problem.startswith("--select: unknown rule code 'TFC999' (known: TFC001..")


def test_the_course_link_front_end_over_file_over_default(tmp_path: Path) -> None:
    configured = tmp_path / "configured" / "nb.ipynb"
    write(configured.parent, f'course-base-url = "{FILE_URL}"')
    plain = tmp_path / "plain" / "nb.ipynb"
    write(plain.parent, "ignore = []")
    broken = tmp_path / "broken" / "nb.ipynb"
    write(broken.parent, f'course-base-url = "{FILE_URL}"\nselect = [')

    def url(path: Path | None, overrides: Overrides | RawOverrides | None = None) -> str | None:
        return configuration_for(path, overrides=overrides).config.course_base_url

    # The front end's setting wins (read already, or as received) ...
    assert url(configured, Overrides(course_base_url=FRONT_URL)) == FRONT_URL
    assert url(configured, RawOverrides({}, FRONT_URL)) == FRONT_URL
    assert url(None, Overrides(course_base_url=FRONT_URL)) == FRONT_URL
    assert url(broken, Overrides(course_base_url=FRONT_URL)) == FRONT_URL
    # ... over the file's (a setting that is empty or not set is no setting) ...
    assert url(configured) == FILE_URL
    assert url(configured, Overrides(course_base_url="")) == FILE_URL
    assert url(configured, Overrides(select=("TFC001",))) == FILE_URL
    # ... over the default: None, the packaged course.
    assert url(plain) is None and url(None) is None and url(broken) is None

    # A setting that is not a course URL is left out and said; the file's applies.
    refused = configuration_for(configured, overrides=RawOverrides({}, "javascript:alert(1)"))
    assert refused.config.course_base_url == FILE_URL
    (problem,) = refused.problems
    assert problem.startswith("settings: course-base-url must be an http:// or https:// URL")
    assert problem.endswith("; ignored")
