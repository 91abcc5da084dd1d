"""The one configuration resolver (``analysis/project_config.py``) and the one reader
of rule-code lists (``analysis/config.parse_codes``) every front end uses."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_tfcoach.analysis.config import Config, ConfigError, normalize_codes, parse_codes
from jupyterlab_tfcoach.analysis.project_config import MAX_PYPROJECT_BYTES, ConfigResolver
from lsp_server.settings import parse_settings

REPO_ROOT = Path(__file__).resolve().parents[2]

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


def padded(table: str, size: int) -> str:
    """A pyproject.toml with ``table`` as its ``[tool.tfcoach]``, padded with comments
    to exactly ``size`` bytes."""
    head = f"[tool.tfcoach]\n{table}\n"
    line = "# " + "x" * 77 + "\n"
    lines, rest = divmod(size - len(head), len(line))
    return head + line * lines + "#" * (rest - 1) + "\n" * (rest > 0)


def test_a_pyproject_over_1_mib_is_an_error_and_not_parsed(tmp_path: Path) -> None:
    resolver = ConfigResolver()
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(padded('ignore = ["TFC001"]', MAX_PYPROJECT_BYTES), encoding="utf-8")
    assert resolver.config_for(tmp_path).ignore == {"TFC001"}  # at the limit: read
    pyproject.write_text(padded('ignore = ["TFC002"]', 2 * 1024 * 1024), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resolver.config_for(tmp_path)
    assert str(caught.value) == (
        f"{pyproject}: 2097152 bytes, over the limit of 1048576 bytes (1 MiB) for a "
        "pyproject.toml; not read"
    )
    assert resolver.parses == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # tomllib recurses once per level: RecursionError, before any TOML error.
        ("[tool.tfcoach]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("[tool.tfcoach]\nx = " + "{a = " * 100_000 + "1" + "}" * 100_000 + "\n", "nested"),
    ],
)
def test_whatever_fails_in_the_parser_is_a_config_error(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    resolver = ConfigResolver()
    for _ in range(2):  # remembered as any other error of that version
        with pytest.raises(ConfigError, match=message):
            resolver.config_for(tmp_path / "nb.ipynb")
    assert resolver.parses == 1


def test_with_a_root_only_pyprojects_inside_it_count(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(tmp_path / "pyproject.toml", '[tool.tfcoach]\nselect = ["TFC002"]\n', 1_000_000)
    write(tmp_path / "outside" / "pyproject.toml", '[tool.tfcoach]\nignore = ["TFC"]\n', 1)
    write(root / "inside" / "pyproject.toml", '[tool.tfcoach]\nignore = ["TFC001"]\n', 1)
    (root / "linked").mkdir(parents=True)
    (root / "aliased").mkdir()
    os.symlink(tmp_path / "outside" / "pyproject.toml", root / "linked" / "pyproject.toml")
    os.symlink(root / "inside" / "pyproject.toml", root / "aliased" / "pyproject.toml")
    resolver = ConfigResolver()
    # Above the root: not the project's.
    assert resolver.config_for(root / "nb.ipynb", root=root) == Config()
    assert resolver.config_for(root / "a" / "b" / "nb.ipynb", root=root) == Config()
    assert resolver.pyproject_for(root / "nb.ipynb", root=root) is None
    # Without a root (the CLI, the language server) the search goes on up, links followed.
    assert resolver.config_for(root / "nb.ipynb").select == {"TFC002"}
    assert resolver.config_for(root / "linked" / "nb.ipynb").ignore == {"TFC"}
    # Linked from outside: not read, said.
    with pytest.raises(ConfigError) as caught:
        resolver.config_for(root / "linked" / "nb.ipynb", root=root)
    linked = root / "linked" / "pyproject.toml"
    assert str(caught.value) == f"{linked}: a link to a file outside the server's root; not read"
    # Linked from inside: read; a start outside the root: nothing applies.
    assert resolver.config_for(root / "aliased" / "nb.ipynb", root=root).ignore == {"TFC001"}
    assert resolver.config_for(tmp_path / "outside" / "nb.ipynb", root=root) == Config()


def test_a_deep_path_is_walked_up_in_little_memory(tmp_path: Path) -> None:
    # 5,000 parts (10 KiB): listing every parent at once took 96 MiB here, and 20,000 parts
    # took 1.5 GiB in the Jupyter server.
    write(tmp_path / "pyproject.toml", '[tool.tfcoach]\nignore = ["TFC002"]\n', 1_000_000)
    start = tmp_path.joinpath(*["p"] * 5_000, "nb.ipynb")
    resolver = ConfigResolver()
    tracemalloc.start()
    try:
        assert resolver.config_for(start).ignore == {"TFC002"}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"{peak / 2**20:.1f} MiB"


def test_a_long_parse_does_not_hold_up_other_lookups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The big file's parse is held open until the small project's lookup has answered:
    # parsed under the resolver's lock, that lookup would wait for the parse and never
    # answer in time. (No clock decides: a wall-clock version of this test failed on a
    # busy machine.)
    import tomllib

    entries = "".join(f"k{i} = [1, 2, 3]\n" for i in range(1_000))
    write(tmp_path / "big" / "pyproject.toml", f"[tool.tfcoach]\n[tool.other]\n{entries}", 1)
    write(tmp_path / "small" / "pyproject.toml", '[tool.tfcoach]\nignore = ["TFC001"]\n', 1)
    parsing_big, small_answered = threading.Event(), threading.Event()
    real_loads = tomllib.loads

    def held_open_for_the_big_file(text: str, **kwargs: Any) -> dict[str, Any]:
        if "[tool.other]" in text:
            parsing_big.set()
            small_answered.wait(timeout=30)
        return real_loads(text, **kwargs)

    monkeypatch.setattr(tomllib, "loads", held_open_for_the_big_file)
    resolver = ConfigResolver()
    assert resolver.config_for(tmp_path / "small").ignore == {"TFC001"}
    parsing = threading.Thread(target=resolver.config_for, args=(tmp_path / "big",))
    parsing.start()
    assert parsing_big.wait(timeout=30)
    answers: list[set[str]] = []
    lookup = threading.Thread(
        target=lambda: answers.append(resolver.config_for(tmp_path / "small").ignore)
    )
    lookup.start()
    lookup.join(timeout=10)
    answered_during_the_parse = not lookup.is_alive()
    small_answered.set()
    lookup.join()
    parsing.join()
    assert answered_during_the_parse
    assert answers == [{"TFC001"}]
    assert resolver.parses == 2


def run_check(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "jupyterlab_tfcoach.cli", "check", "--no-cache", "nb.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (padded('ignore = ["TFC002"]', 2 * 1024 * 1024), "2097152 bytes, over the limit"),
        ("[tool.tfcoach]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ],
)
def test_the_cli_reports_a_pyproject_it_cannot_take_as_a_config_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    (tmp_path / "nb.py").write_text("import tensorflow as tf\nx = 1\n", encoding="utf-8")
    completed = run_check(tmp_path)
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    pyproject = tmp_path / "pyproject.toml"
    assert f"nb.py: configuration error: {pyproject}: {problem}" in completed.stderr
