"""``tfcoach check`` on real trees, run for real as a subprocess: special files, symlink
loops, unreadable folders, the size limit, the result cache, the process pool, notebooks
read without nbformat, and the pre-commit hook.

Every run has a temporary working directory (so a cache folder, if any, lands there,
never in the repository) and a timeout (a FIFO opened for reading would hang forever).
Timing is the benchmark's business (``benchmarks/bench_check.py``), not these tests'.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "tests" / "data" / "cli"
CACHE = ".tfcoach_cache"
POOL_MIN_FILES = 16  # jupyterlab_tfcoach.cli.POOL_MIN_FILES, as a user would not import it


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONIOENCODING": "utf-8"}
    env.pop("TFCOACH_CACHE_DIR", None)
    return {**env, **extra}


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "jupyterlab_tfcoach.cli", *args]


def run_tfcoach(
    *args: str, cwd: Path, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *_command(*args)],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def _copy(name: str, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / name, target)
    return target


def _small_project(root: Path) -> None:
    _copy("pitfalls.py", root / "pitfalls.py")
    _copy("clean.py", root / "pkg" / "clean.py")
    _copy("notebook.ipynb", root / "pkg" / "explore.ipynb")


def _big_project(root: Path, files: int) -> None:
    """``files`` files with findings, notebooks among them, over a few folders."""
    pitfalls = (DATA / "pitfalls.py").read_text(encoding="utf-8")
    for index in range(files):
        folder = root / f"part{index % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        if index % 5 == 0:
            shutil.copy(DATA / "notebook.ipynb", folder / f"explore_{index}.ipynb")
        else:
            # Different content per file: nothing can be shared between files by accident.
            (folder / f"module_{index}.py").write_text(
                f"# module {index}\n" + pitfalls, encoding="utf-8"
            )


def _stderr_lines(completed: subprocess.CompletedProcess[str]) -> list[str]:
    return completed.stderr.splitlines()


def _stats(completed: subprocess.CompletedProcess[str]) -> str:
    """The ``--verbose`` line: ``tfcoach: N files: H from the cache, A analysed ...``."""
    [line] = [line for line in _stderr_lines(completed) if " from the cache, " in line]
    return line


# ---------------------------------------------------------------------------
# Special files, symlink loops, unreadable folders, the size limit


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_a_folder_is_skipped_with_a_note_and_does_not_hang(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _copy("pitfalls.py", tree / "train.py")
    os.mkfifo(tree / "x.py")
    completed = run_tfcoach("check", "tree", cwd=tmp_path)
    # A note, not an input error: the findings of the other file decide the status.
    assert completed.returncode == 1, completed.stderr
    assert _stderr_lines(completed) == ["tfcoach: note: tree/x.py: skipped, a FIFO"]
    assert completed.stdout.splitlines()[-1].endswith("findings in 1 file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_explicitly_is_an_input_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "x.py")
    completed = run_tfcoach("check", "x.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert _stderr_lines(completed) == ["tfcoach: x.py: not a regular file or folder (a FIFO)"]


def test_a_symlink_loop_in_a_folder_is_one_input_error(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _copy("pitfalls.py", tree / "train.py")
    os.symlink("b.py", tree / "a.py")
    os.symlink("a.py", tree / "b.py")
    completed = run_tfcoach("check", "tree", cwd=tmp_path)
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert _stderr_lines(completed) == [
        "tfcoach: tree/a.py: symlink loop (too many levels of symbolic links)",
        "tfcoach: tree/b.py: symlink loop (too many levels of symbolic links)",
    ]
    # The other file is still checked and reported.
    assert "tree/train.py:" in completed.stdout
    assert completed.stdout.splitlines()[-1].endswith("in 1 file; 2 input errors (see above)")


def test_a_symlink_loop_named_as_the_folder_is_one_input_error(tmp_path: Path) -> None:
    os.symlink("loop", tmp_path / "loop")
    completed = run_tfcoach("check", "loop", cwd=tmp_path)
    assert completed.returncode == 2
    assert _stderr_lines(completed) == [
        "tfcoach: loop: symlink loop (too many levels of symbolic links)"
    ]


def test_links_to_folders_are_not_followed_links_to_files_are_checked(tmp_path: Path) -> None:
    _copy("pitfalls.py", tmp_path / "elsewhere" / "train.py")
    tree = tmp_path / "tree"
    tree.mkdir()
    os.symlink("../elsewhere", tree / "linked_folder")
    os.symlink(tree, tree / "self")  # a cycle, were links to folders followed
    os.symlink("../elsewhere/train.py", tree / "linked_file.py")
    completed = run_tfcoach("check", "--format", "json", "tree", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr == ""
    assert {finding["path"] for finding in json.loads(completed.stdout)} == {"tree/linked_file.py"}


def _without_read_override() -> tuple[str, ...] | None:
    """A command prefix under which chmod 000 really blocks this process, or None.

    Root reads any folder whatever its mode (CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH):
    there the run drops those two capabilities with util-linux's ``setpriv``, so the
    kernel refuses the read as it would for any user.
    """
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set", "-dac_override,-dac_read_search")
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False, timeout=30)
    return prefix if probe.returncode == 0 else None


def test_an_unreadable_folder_is_one_input_error(tmp_path: Path) -> None:
    prefix = _without_read_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: chmod 000 does not stop root reading")
    tree = tmp_path / "tree"
    _copy("pitfalls.py", tree / "train.py")
    _copy("pitfalls.py", tree / "locked" / "hidden_from_us.py")
    (tree / "locked").chmod(0)
    try:
        completed = run_tfcoach("check", "tree", cwd=tmp_path, prefix=prefix)
    finally:
        (tree / "locked").chmod(0o755)
    assert completed.returncode == 2
    assert _stderr_lines(completed) == [
        "tfcoach: tree/locked: cannot read folder: Permission denied"
    ]
    assert "Traceback" not in completed.stderr
    assert "tree/train.py:" in completed.stdout
    assert "hidden_from_us" not in completed.stdout


def test_a_file_above_the_size_limit_is_reported_not_read(tmp_path: Path) -> None:
    _copy("clean.py", tmp_path / "clean.py")
    # 25 MB of NUL bytes (sparse: no disk used). Read, it would be a syntax error.
    with open(tmp_path / "generated.py", "wb") as stream:
        stream.truncate(25_000_000)
    completed = run_tfcoach("check", ".", cwd=tmp_path)
    assert completed.returncode == 2
    assert _stderr_lines(completed) == [
        "tfcoach: generated.py: 25.0 MB, above the 20 MB limit (--max-file-size): not read"
    ]
    assert completed.stdout == "0 findings in 1 file; 1 input error (see above)\n"


def test_the_size_limit_is_an_option(tmp_path: Path) -> None:
    _copy("pitfalls.py", tmp_path / "train.py")  # about 1 kB
    small = run_tfcoach("check", "--max-file-size", "0.0005", "train.py", cwd=tmp_path)
    assert small.returncode == 2
    assert "train.py: 1.0 kB, above the 0.0005 MB limit (--max-file-size): not read" in small.stderr
    assert "TFC00" not in small.stdout
    enough = run_tfcoach("check", "--max-file-size", "0.01", "train.py", cwd=tmp_path)
    assert enough.returncode == 1, enough.stderr
    assert "train.py:" in enough.stdout


# ---------------------------------------------------------------------------
# The result cache


def test_a_second_run_reuses_the_cache_and_prints_the_same(tmp_path: Path) -> None:
    _small_project(tmp_path)
    first = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    assert _stats(first).startswith("tfcoach: 3 files: 0 from the cache, 3 analysed;")
    cache = tmp_path / CACHE
    assert cache.is_dir()
    assert (cache / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"

    second = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert second.returncode == 1
    assert _stats(second).startswith("tfcoach: 3 files: 3 from the cache, 0 analysed;")
    assert second.stdout == first.stdout
    for output_format in ("json", "sarif"):
        cached = run_tfcoach("check", "--format", output_format, ".", cwd=tmp_path)
        fresh = run_tfcoach("check", "--format", output_format, "--no-cache", ".", cwd=tmp_path)
        assert cached.stdout == fresh.stdout


def test_editing_a_file_invalidates_its_entry_only(tmp_path: Path) -> None:
    _small_project(tmp_path)
    run_tfcoach("check", ".", cwd=tmp_path)
    (tmp_path / "pitfalls.py").write_text(
        "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    print(x)\n", encoding="utf-8"
    )
    edited = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert _stats(edited).startswith("tfcoach: 3 files: 2 from the cache, 1 analysed;")
    fresh = run_tfcoach("check", "--no-cache", ".", cwd=tmp_path)
    assert edited.stdout == fresh.stdout
    assert "pitfalls.py:6:5: TFC002" in edited.stdout


def test_changing_the_configuration_invalidates(tmp_path: Path) -> None:
    _small_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    before = run_tfcoach("check", "--format", "json", ".", cwd=tmp_path)
    assert "TFC002" in {finding["code"] for finding in json.loads(before.stdout)}

    (tmp_path / "pyproject.toml").write_text('[tool.tfcoach]\nignore = ["TFC002"]\n')
    after = run_tfcoach("check", "--verbose", "--format", "json", ".", cwd=tmp_path)
    assert _stats(after).startswith("tfcoach: 3 files: 0 from the cache, 3 analysed;")
    codes = {finding["code"] for finding in json.loads(after.stdout)}
    assert codes and "TFC002" not in codes
    # --select on the command line is configuration too.
    selected = run_tfcoach("check", "--verbose", "--select", "TFC001", ".", cwd=tmp_path)
    assert " 0 from the cache" in _stats(selected)
    assert "TFC001" in selected.stdout and "TFC006" not in selected.stdout


def test_the_cache_lives_in_the_project_root_and_git_ignores_it(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _small_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    untracked = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    completed = run_tfcoach("check", ".", cwd=tmp_path / "pkg")  # from a subfolder
    assert completed.returncode == 1
    assert (tmp_path / CACHE).is_dir() and not (tmp_path / "pkg" / CACHE).exists()
    after = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert after == untracked


def test_the_cache_folder_can_be_moved(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _small_project(project)
    option = run_tfcoach("check", "--cache-dir", "../by-option", ".", cwd=project)
    assert option.returncode == 1
    variable = run_tfcoach(
        "check", ".", cwd=project, env=_env(TFCOACH_CACHE_DIR=str(tmp_path / "by-variable"))
    )
    assert variable.stdout == option.stdout
    for folder in ("by-option", "by-variable"):
        assert len(list((tmp_path / folder).rglob("*.json"))) == 3, folder
    assert not (project / CACHE).exists()


def test_entries_of_old_engines_are_pruned(tmp_path: Path) -> None:
    # Each tfcoach version, Python version or edit of the analysis is an engine with its
    # own folder of entries: a new one keeps the two used last and deletes the others.
    _small_project(tmp_path)
    run_tfcoach("check", ".", cwd=tmp_path)
    cache = tmp_path / CACHE
    [current] = [path.name for path in cache.iterdir() if path.is_dir()]
    # The tag tfcoach writes in each engine folder it creates: only a tagged one is deleted.
    engine_tag = (cache / current / "ENGINE.TAG").read_bytes()
    shutil.rmtree(cache / current)
    day = 24 * 3600
    for age, name in enumerate(("0.0.1-newest", "0.0.1-older", "0.0.1-oldest"), start=1):
        (cache / name).mkdir()
        (cache / name / "ENGINE.TAG").write_bytes(engine_tag)
        (cache / name / "entry.json").write_text("{}", encoding="utf-8")
        os.utime(cache / name, (os.path.getmtime(cache) - age * day,) * 2)
    again = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert " 0 from the cache, 3 analysed" in _stats(again)
    folders = sorted(path.name for path in cache.iterdir() if path.is_dir())
    assert folders == sorted([current, "0.0.1-newest", "0.0.1-older"])


def test_no_cache_writes_no_cache_folder(tmp_path: Path) -> None:
    _small_project(tmp_path)
    completed = run_tfcoach("check", "--no-cache", "--verbose", ".", cwd=tmp_path)
    assert completed.returncode == 1
    assert _stats(completed).endswith("; no cache")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pitfalls.py", "pkg"]


def test_a_damaged_cache_is_a_miss_not_a_crash(tmp_path: Path) -> None:
    _small_project(tmp_path)
    first = run_tfcoach("check", ".", cwd=tmp_path)
    entries = list((tmp_path / CACHE).rglob("*.json"))
    assert len(entries) == 3
    for number, entry in enumerate(entries):
        text = entry.read_text(encoding="utf-8")
        # Truncated, not JSON at all, and valid JSON of the wrong shape.
        entry.write_text([text[: len(text) // 2], "\0garbage", '{"findings": 3}'][number % 3])
    again = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert _stats(again).startswith("tfcoach: 3 files: 0 from the cache, 3 analysed;")
    assert again.stdout == first.stdout
    assert "Traceback" not in again.stderr


def test_concurrent_runs_share_the_cache_safely(tmp_path: Path) -> None:
    _big_project(tmp_path, 30)
    expected = run_tfcoach("check", "--no-cache", ".", cwd=tmp_path)
    runs = [
        subprocess.Popen(
            _command("check", "--jobs", "1", "."),
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    for run, (stdout, stderr) in zip(runs, outputs, strict=True):
        assert run.returncode == 1, stderr
        assert stderr == ""
        assert stdout == expected.stdout
    again = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert _stats(again).startswith("tfcoach: 30 files: 30 from the cache, 0 analysed;")
    assert again.stdout == expected.stdout
    # Every write went through a temporary file and a rename: none is left behind.
    assert [path.name for path in (tmp_path / CACHE).rglob("*.tmp")] == []


# ---------------------------------------------------------------------------
# The process pool


def test_the_pool_gives_the_findings_of_the_serial_run(tmp_path: Path) -> None:
    files = POOL_MIN_FILES + 8
    _big_project(tmp_path, files)
    serial = run_tfcoach("check", "--no-cache", "--jobs", "1", "--verbose", ".", cwd=tmp_path)
    pooled = run_tfcoach("check", "--no-cache", "--jobs", "2", "--verbose", ".", cwd=tmp_path)
    assert _stats(serial) == f"tfcoach: {files} files: 0 from the cache, {files} analysed; no cache"
    assert _stats(pooled) == (
        f"tfcoach: {files} files: 0 from the cache, {files} analysed in 2 processes; no cache"
    )
    assert pooled.returncode == serial.returncode == 1
    assert pooled.stdout == serial.stdout
    assert serial.stdout.splitlines()[-1].endswith(f"findings in {files} files")
    as_json = [
        run_tfcoach("check", "--no-cache", "--jobs", jobs, "--format", "json", ".", cwd=tmp_path)
        for jobs in ("1", "2")
    ]
    assert json.loads(as_json[0].stdout) == json.loads(as_json[1].stdout)
    # What the pool wrote to the cache reads back the same.
    run_tfcoach("check", "--jobs", "2", ".", cwd=tmp_path)
    cached = run_tfcoach("check", "--verbose", ".", cwd=tmp_path)
    assert f" {files} from the cache" in _stats(cached)
    assert cached.stdout == serial.stdout


# ---------------------------------------------------------------------------
# Notebooks without nbformat

_IN_PROCESS = """\
import sys
from jupyterlab_tfcoach.cli import main

code = main(sys.argv[1:])
heavy = sorted(name for name in ("nbformat", "jsonschema") if name in sys.modules)
print(f"exit {code}; imported: {heavy}")
"""


def _check_in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, "check", "--no-cache", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def test_checking_a_notebook_does_not_import_nbformat(tmp_path: Path) -> None:
    _copy("notebook.ipynb", tmp_path / "explore.ipynb")
    completed = _check_in_process("explore.ipynb", cwd=tmp_path)
    assert completed.stdout.splitlines()[-1] == "exit 1; imported: []", completed.stderr
    assert "explore.ipynb:code cell 2:3:" in completed.stdout


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "invalid notebook JSON: Expecting property name"),
        ("[1, 2]", "invalid notebook JSON: the top level is not an object"),
        ('{"cells": []}', "invalid notebook JSON: no integer 'nbformat' version"),
        ('{"nbformat": 4, "metadata": {}}', "invalid notebook JSON: no 'cells' list"),
        ('{"nbformat": 4, "cells": [7]}', "invalid notebook JSON: cells[0] is not an object"),
        (
            '{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}',
            "invalid notebook JSON: cells[0]: 'source' is not text",
        ),
        (
            '{"nbformat": 4, "metadata": [], "cells": []}',
            "invalid notebook JSON: 'metadata' is not an object",
        ),
    ],
)
def test_a_malformed_notebook_is_a_clear_input_error(
    tmp_path: Path, content: str, problem: str
) -> None:
    (tmp_path / "bad.ipynb").write_text(content, encoding="utf-8")
    completed = _check_in_process("bad.ipynb", cwd=tmp_path)
    assert completed.stdout.splitlines()[-1] == "exit 2; imported: []"
    [line] = _stderr_lines(completed)
    assert line.startswith(f"tfcoach: bad.ipynb: {problem}"), line
    assert "Traceback" not in completed.stderr


def test_an_old_format_notebook_is_still_read(tmp_path: Path) -> None:
    # nbformat 3 (IPython 2): cells in worksheets, code in "input". Only nbformat
    # converts it, so this is where it gets imported.
    notebook = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": "old"},
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "markdown", "source": "# Old", "metadata": {}},
                    {
                        "cell_type": "code",
                        "input": "import tensorflow as tf\n\nw = tf.Variable(1.0)\nw = w - 0.1",
                        "language": "python",
                        "outputs": [],
                        "metadata": {},
                    },
                ]
            }
        ],
    }
    (tmp_path / "old.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    completed = run_tfcoach("check", "--no-cache", "old.ipynb", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert "old.ipynb:code cell 1:4:1: TFC001 " in completed.stdout


# ---------------------------------------------------------------------------
# pre-commit


def test_the_pre_commit_hook_runs_tfcoach_check_on_python_and_notebooks() -> None:
    yaml = pytest.importorskip("yaml")
    [hook] = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "tfcoach"
    assert hook["entry"] == "tfcoach check"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "jupyter"]
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'tfcoach = "jupyterlab_tfcoach.cli:main"' in pyproject  # the entry's command
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "id: tfcoach" in readme and "--format sarif" in readme


def test_pre_commit_style_file_arguments_are_checked(tmp_path: Path) -> None:
    # pre-commit appends the staged files' names to the entry, several per run.
    _small_project(tmp_path)
    completed = run_tfcoach(
        "check", "pitfalls.py", "pkg/clean.py", "pkg/explore.ipynb", cwd=tmp_path
    )
    assert completed.returncode == 1
    assert completed.stdout.splitlines()[-1].endswith("in 3 files")
