"""The one configuration resolver (``analysis/project_config.py``) and the one reader
of rule-code lists (``analysis/config.parse_codes``) every front end uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis.config import Config, ConfigError, normalize_codes, parse_codes
from jupyterlab_tfcoach.analysis.project_config import ConfigResolver
from lsp_server.settings import parse_settings

SECONDS = 1_000_000_000


def write(path: Path, text: str, mtime_s: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_s * SECONDS, mtime_s * SECONDS))


def test_one_parse_per_version_of_the_file(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    write(pyproject, '[tool.tfcoach]\nignore = ["TFC002"]\n', 1_000_000)
    resolver = ConfigResolver()
    starts = [tmp_path, tmp_path / "a.py", tmp_path / "sub" / "b.ipynb", tmp_path / "x" / "y"]
    for _ in range(3):
        for start in starts:
            assert resolver.config_for(start).ignore == {"TFC002"}
    assert resolver.parses == 1

    # Same size, new mtime: a new version, read once.
    write(pyproject, '[tool.tfcoach]\nignore = ["TFC001"]\n', 1_000_001)
    for start in starts:
        assert resolver.config_for(start).ignore == {"TFC001"}
    assert resolver.parses == 2

    # Same mtime, another size: a new version too.
    write(pyproject, '[tool.tfcoach]\nignore = ["TFC00"]\n', 1_000_001)
    assert resolver.config_for(tmp_path).ignore == {"TFC00"}
    assert resolver.parses == 3

    # Deleted: the defaults, nothing parsed.
    pyproject.unlink()
    assert resolver.config_for(tmp_path) == Config()
    assert resolver.parses == 3


def test_a_packaging_only_pyproject_is_not_parsed_and_does_not_stop_the_search(
    tmp_path: Path,
) -> None:
    write(tmp_path / "pyproject.toml", '[tool.tfcoach]\nselect = ["TFC001"]\n', 1_000_000)
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'pkg'\n", 1_000_000)
    resolver = ConfigResolver()
    assert resolver.config_for(tmp_path / "pkg" / "m.py").select == {"TFC001"}
    assert resolver.pyproject_for(tmp_path / "pkg" / "m.py") == tmp_path / "pyproject.toml"
    assert resolver.parses == 1


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[tool.tfcoach]\nselect = [\n", "invalid TOML"),
        ('[tool.tfcoach]\nselect = ["NOPE42"]\n', "unknown rule code 'NOPE42'"),
        ("[tool.tfcoach]\nselect = 3\n", "must be a list"),
        ('[tool.tfcoach]\ncolour = "red"\n', "unknown key"),
        ('[tool.tfcoach]\ncourse-base-url = "javascript:x"\n', "course-base-url"),
    ],
)
def test_an_error_is_one_line_naming_the_file_and_parsed_once(
    tmp_path: Path, text: str, fragment: str
) -> None:
    pyproject = tmp_path / "sub" / "pyproject.toml"
    write(pyproject, text, 1_000_000)
    resolver = ConfigResolver()
    for _ in range(3):
        with pytest.raises(ConfigError) as caught:
            resolver.config_for(tmp_path / "sub" / "nb.ipynb")
        message = str(caught.value)
        assert message.startswith(f"{pyproject}: ") and fragment in message
        assert "\n" not in message
        assert caught.value.version is not None and caught.value.version[0] == str(pyproject)
    assert resolver.parses == 1
    assert resolver.pyproject_for(tmp_path / "sub") is None


def test_an_unreadable_pyproject_is_an_error_naming_it(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_bytes(b"[tool.tfcoach]\nignore = ['\xff']\n")
    with pytest.raises(ConfigError, match="cannot read") as caught:
        ConfigResolver().config_for(tmp_path)
    assert str(pyproject) in str(caught.value)


def test_one_reader_of_code_lists() -> None:
    # A list, or one string separated by commas and/or spaces; case and blanks do not matter.
    for value in (["tfc001", " TFC00 "], "TFC001, tfc00", "TFC001 TFC00", ("TFC001", "TFC00")):
        assert parse_codes(value, "x") == parse_codes(["TFC001", "TFC00"], "x")
    assert parse_codes(["TFC001", "TFC00"], "x").codes == ("TFC001", "TFC00")
    assert parse_codes(None, "x").codes is None
    assert parse_codes("", "x").codes == ()
    bad = parse_codes(["TFC001", "NOPE1", "TFC999"], "--select")
    assert bad.codes == ("TFC001",)
    assert [p.split(":")[0] for p in bad.problems] == ["--select", "--select"]
    assert "NOPE1" in bad.problems[0] and "TFC999" in bad.problems[1]
    assert parse_codes(5, "tfcoach.select").problems == (
        "tfcoach.select: must be a list of rule codes like TFC001",
    )
    with pytest.raises(ConfigError, match="--ignore: unknown rule code 'TFC0X'"):
        normalize_codes(["TFC0X"], "--ignore")
    assert normalize_codes("tfc", "x") == {"TFC"}


def test_the_editors_settings_use_the_same_reader() -> None:
    parsed = parse_settings({"tfcoach": {"select": "tfc00, TFC011", "ignore": ["XYZ9", "TFC002"]}})
    assert parsed.settings.select == ("TFC00", "TFC011")
    assert parsed.settings.ignore == ("TFC002",)
    assert parsed.warnings == [parse_codes(["XYZ9"], "tfcoach.ignore").problems[0] + "; ignored"]
