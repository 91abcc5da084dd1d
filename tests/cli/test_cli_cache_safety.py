"""The result cache deletes only what it wrote and trusts nothing it reads (issue #24).

The issue's three reproductions run ``tfcoach check`` for real, as a subprocess, in
temporary trees: ``--cache-dir .`` in a project, ``TFCOACH_CACHE_DIR`` at a shared
``~/.cache``, and a cloned repository that commits ``.tfcoach_cache -> ..``. Each is
refused with exit status 2 and a message naming the folder, and every file outside the
cache is still there, unchanged. Pruning old engines, run for real too, removes only
folders tagged as tfcoach's engine folders, and in them only the files the cache writes.

A property test builds random cache folders (links out of the root, untagged and
wrongly tagged engine folders, FIFOs, a root that is a link to a tfcoach cache elsewhere,
a link in place of the current engine's folder) and opens and writes the cache in this
process: nothing outside the root is ever removed or written, and inside it only what
the cache wrote.

Last, damaged and forged entries (a FIFO, a link to /dev/zero, JSON nested too deep,
fields of another layout, a checksum of other source, another file's result, an entry
too large) are misses: the file is analysed again and the output is a cache-less run's.
Every run has a timeout, so a read that blocks fails the test instead of hanging it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyterlab_tfcoach._version import __version__
from jupyterlab_tfcoach.cache import (
    CacheDirRefused,
    FileResult,
    ResultCache,
    content_key,
    engine_fingerprint,
)

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "tests" / "data" / "cli"
CACHE = ".tfcoach_cache"
ENGINE_TAG = "ENGINE.TAG"
CACHEDIR_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55\n"
TFCOACH_CACHEDIR_TAG = (
    CACHEDIR_SIGNATURE + "# This file is a cache directory tag created by tfcoach.\n"
)
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONIOENCODING": "utf-8"}
    env.pop("TFCOACH_CACHE_DIR", None)
    return {**env, **extra}


def run_tfcoach(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyterlab_tfcoach.cli", *args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,  # a cache read that blocks (a FIFO, /dev/zero) fails here, not forever
        check=False,
    )


def _stats(completed: subprocess.CompletedProcess[str]) -> str:
    """The ``--verbose`` line: ``tfcoach: N files: H from the cache, A analysed ...``."""
    [line] = [line for line in completed.stderr.splitlines() if " from the cache, " in line]
    return line


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _tree(root: Path) -> dict[str, tuple[str, object]]:
    """Everything under ``root``, links not followed: relative path -> (kind, content)."""
    found: dict[str, tuple[str, object]] = {}
    for directory, folders, files in os.walk(root):
        for name in [*folders, *files]:
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[relative] = ("link", os.readlink(path))
            elif stat.S_ISDIR(mode):
                found[relative] = ("folder", None)
            elif stat.S_ISREG(mode):
                found[relative] = ("file", path.read_bytes())
            else:
                found[relative] = ("special", stat.S_IFMT(mode))
    return found


def _project(root: Path) -> None:
    """A small project: code, tests, docs and notebooks, as the issue's reproduction."""
    _write(root / "pyproject.toml", "[project]\nname = 'demo'\n")
    _write(root / "README.md", "# demo\n")
    shutil.copy(DATA / "pitfalls.py", _write(root / "src" / "train.py", ""))
    _write(root / "tests" / "test_train.py", "def test_nothing():\n    pass\n")
    _write(root / "docs" / "index.md", "# Docs\n")
    _write(root / "docs" / "guide" / "setup.md", "# Setup\n")
    shutil.copy(DATA / "notebook.ipynb", _write(root / "notebooks" / "explore.ipynb", ""))


# ---------------------------------------------------------------------------
# The three reproductions


def test_cache_dir_dot_in_a_project_is_refused_and_nothing_is_deleted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _project(project)
    before = _tree(tmp_path)
    completed = run_tfcoach("check", "--cache-dir", ".", "src/train.py", cwd=project)
    assert completed.returncode == 2
    assert completed.stdout == ""  # nothing was checked
    [message] = completed.stderr.splitlines()
    assert message.startswith(
        f"tfcoach check: cache folder {project.resolve()} is not empty and was not created "
        "by tfcoach"
    )
    assert "--no-cache" in message
    assert _tree(tmp_path) == before  # tests/, docs/ and notebooks/ are all still there


def test_a_cache_variable_at_a_shared_cache_folder_is_refused_and_nothing_is_deleted(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    _project(project)
    shared = tmp_path / "home" / ".cache"
    # Other tools' caches, and another tool's CACHEDIR.TAG: the signature alone is not ours.
    _write(shared / "CACHEDIR.TAG", CACHEDIR_SIGNATURE + "# created by another tool\n")
    _write(shared / "pip" / "http" / "a" / "b" / "wheel", b"\x00wheel")
    _write(shared / "ruff" / "0.4.0" / "123456", "{}")
    _write(shared / "huggingface" / "hub" / "models--bert" / "config.json", "{}")
    _write(shared / "matplotlib" / "fontlist-v330.json", "[]")
    before = _tree(tmp_path)

    refused = run_tfcoach("check", "src", cwd=project, env=_env(TFCOACH_CACHE_DIR=str(shared)))
    assert refused.returncode == 2
    assert refused.stdout == ""
    [message] = refused.stderr.splitlines()
    assert message.startswith(f"tfcoach check: cache folder {shared} is not empty and was not")
    assert _tree(tmp_path) == before

    # A folder of its own under the shared one is created and used; the others stay.
    own = _env(TFCOACH_CACHE_DIR=str(shared / "tfcoach"))
    first = run_tfcoach("check", "--verbose", "src", cwd=project, env=own)
    second = run_tfcoach("check", "--verbose", "src", cwd=project, env=own)
    assert first.returncode == second.returncode == 1, first.stderr
    assert _stats(second).startswith("tfcoach: 1 file: 1 from the cache, 0 analysed;")
    after = {
        path: kind
        for path, kind in _tree(tmp_path).items()
        if not path.startswith("home/.cache/tfcoach/")
    }
    assert after == {**before, "home/.cache/tfcoach": ("folder", None)}


def test_a_committed_cache_link_to_the_parent_is_refused_and_nothing_is_deleted(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    for sibling in ("thesis", "website", "experiments"):
        _project(workspace / sibling)
    clone = workspace / "cloned"
    _write(clone / "pyproject.toml", "[project]\nname = 'cloned'\n")
    shutil.copy(DATA / "pitfalls.py", clone / "train.py")
    os.symlink("..", clone / CACHE)  # what the cloned repository committed
    before = _tree(tmp_path)

    completed = run_tfcoach("check", ".", cwd=clone)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [
        f"tfcoach check: cache folder {clone / CACHE} -> .. is a symbolic link; tfcoach never "
        "follows a link out of its cache. Remove the link, give a real folder with "
        "--cache-dir or TFCOACH_CACHE_DIR, or use --no-cache"
    ]
    # The same link named by the option or the variable is refused alike.
    by_option = run_tfcoach("check", "--cache-dir", CACHE, ".", cwd=clone)
    by_variable = run_tfcoach(
        "check", ".", cwd=clone, env=_env(TFCOACH_CACHE_DIR=str(clone / CACHE))
    )
    assert by_option.returncode == by_variable.returncode == 2
    assert _tree(tmp_path) == before  # the sibling projects are all still there

    without_cache = run_tfcoach("check", "--no-cache", ".", cwd=clone)
    assert without_cache.returncode == 1
    assert "train.py:" in without_cache.stdout


def test_an_empty_folder_is_adopted_and_tagged(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copy(DATA / "pitfalls.py", _write(project / "train.py", ""))
    empty = tmp_path / "empty"
    empty.mkdir()
    first = run_tfcoach("check", "--cache-dir", str(empty), "--verbose", ".", cwd=project)
    second = run_tfcoach("check", "--cache-dir", str(empty), "--verbose", ".", cwd=project)
    assert first.returncode == second.returncode == 1, first.stderr
    assert _stats(second).startswith("tfcoach: 1 file: 1 from the cache, 0 analysed;")
    assert (empty / "CACHEDIR.TAG").read_text(encoding="utf-8") == TFCOACH_CACHEDIR_TAG


# ---------------------------------------------------------------------------
# Pruning old engines, for real


def test_pruning_removes_only_tagged_engine_folders_and_only_what_the_cache_wrote(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    shutil.copy(DATA / "pitfalls.py", _write(project / "train.py", ""))
    outside = tmp_path / "outside"
    first = run_tfcoach("check", ".", cwd=project)
    assert first.returncode == 1, first.stderr
    cache = project / CACHE
    [current] = [path.name for path in cache.iterdir() if path.is_dir()]
    engine_tag = (cache / current / ENGINE_TAG).read_bytes()
    # A tagged engine folder outside the cache, which a followed link would let us prune.
    _write(outside / "engine" / ENGINE_TAG, engine_tag)
    _write(outside / "engine" / "entry.json", "{}")
    _write(outside / "notes.json", "my notes")
    shutil.rmtree(cache / current)  # the next run is a new engine: it prunes

    def engine(name: str, files: dict[str, str] | None = None, tag: bytes = engine_tag) -> Path:
        folder = cache / name
        _write(folder / ENGINE_TAG, tag)
        for relative, text in (files or {"a.json": "{}", ".b.tmp": ""}).items():
            _write(folder / relative, text)
        return folder

    day = 24 * 3600
    folders = [
        engine("0.0.1-newest"),  # the two newest engines are kept whole
        engine("0.0.1-newer"),
        engine("0.0.1-old"),  # removed whole
        engine(  # its entries are removed; what the cache did not write stays, tag too
            "0.0.1-old-with-notes",
            {"a.json": "{}", "notes.txt": "mine", "nested.json/x.json": "{}"},
        ),
        engine("0.0.1-wrong-tag", tag=b"# An engine folder\n"),  # not tfcoach's text
        _write(cache / "user-data" / "results.json", "{}").parent,  # no tag at all
    ]
    os.symlink(outside / "notes.json", cache / "0.0.1-old-with-notes" / "linked.json")
    os.symlink(outside / "engine", cache / "0.0.1-linked-engine")
    (cache / "0.0.1-tag-is-a-link").mkdir()
    os.symlink(outside / "engine" / ENGINE_TAG, cache / "0.0.1-tag-is-a-link" / ENGINE_TAG)
    _write(cache / "0.0.1-tag-is-a-link" / "a.json", "{}")
    folders.append(cache / "0.0.1-tag-is-a-link")
    now = time.time()
    for age, folder in enumerate(folders, start=1):
        os.utime(folder, (now - age * day,) * 2)
    outside_before = _tree(outside)
    cache_before = _tree(cache)

    again = run_tfcoach("check", "--verbose", ".", cwd=project)
    assert again.returncode == 1, again.stderr
    assert " 0 from the cache, 1 analysed" in _stats(again)
    assert _tree(outside) == outside_before
    removed = {
        "0.0.1-old",
        f"0.0.1-old/{ENGINE_TAG}",
        "0.0.1-old/a.json",
        "0.0.1-old/.b.tmp",
        "0.0.1-old-with-notes/a.json",
    }
    [new_engine] = {path.name for path in cache.iterdir() if path.is_dir()} - {
        path.split("/")[0] for path in cache_before
    }
    after = {path: kind for path, kind in _tree(cache).items() if not path.startswith(new_engine)}
    assert after == {path: kind for path, kind in cache_before.items() if path not in removed}


# ---------------------------------------------------------------------------
# The property: nothing outside the root is ever removed, inside only what we wrote

ROOT_KINDS = (
    "absent",
    "empty",
    "tfcoach",  # tagged by tfcoach: used, pruned
    "foreign",  # not empty, not tagged: refused (unless it has no children)
    "another-tools-tag",  # CACHEDIR.TAG of another tool: refused
    "tag-is-a-fifo",  # refused, and reading the tag must not block
    "link-to-a-tfcoach-cache-outside",  # refused: pruning through it would empty it
    "link-to-outside",
    "a-file",
)
CHILD_NAMES = ("0.1.0-aaaa", "0.1.0-bbbb", "0.0.9-cccc", "0.0.8-dddd", "old", "x.json", ".y.tmp")
CHILD_KINDS = (
    "tagged-folder",
    "untagged-folder",
    "wrongly-tagged-folder",
    "folder-whose-tag-is-a-link",
    "link-to-outside-folder",
    "link-to-outside-tagged-folder",
    "link-to-outside-file",
    "file",
    "fifo",
)
REAL_FOLDER_KINDS = frozenset(
    {"tagged-folder", "untagged-folder", "wrongly-tagged-folder", "folder-whose-tag-is-a-link"}
)
CONTENT_NAMES = ("a.json", ".b.tmp", "notes.txt", "c.json", ".d.tmp")
CONTENT_KINDS = ("file", "link-to-outside-file", "link-to-outside-folder", "folder", "fifo")

children_strategy = st.lists(
    st.tuples(
        st.sampled_from(CHILD_NAMES),
        st.sampled_from(CHILD_KINDS),
        st.integers(min_value=0, max_value=20),  # age in days: which engines are newest
        st.lists(
            st.tuples(st.sampled_from(CONTENT_NAMES), st.sampled_from(CONTENT_KINDS)),
            max_size=4,
            unique_by=lambda item: item[0],
        ),
    ),
    max_size=7,
    unique_by=lambda child: child[0],
)


def _outside(outside: Path, engine_tag: bytes) -> None:
    """What must survive: plain files with the cache's names, tagged engine folders and a
    whole tfcoach cache with old engines, all reachable only through links."""
    _write(outside / "a.json", "{}")
    _write(outside / ".b.tmp", "")
    _write(outside / ENGINE_TAG, engine_tag)
    _write(outside / "engine" / ENGINE_TAG, engine_tag)
    _write(outside / "engine" / "a.json", "{}")
    _write(outside / "plain" / "c.json", "{}")
    _write(outside / "tfcoach-cache" / "CACHEDIR.TAG", TFCOACH_CACHEDIR_TAG)
    for number in range(4):
        _write(outside / "tfcoach-cache" / f"0.0.{number}-old" / ENGINE_TAG, engine_tag)
        _write(outside / "tfcoach-cache" / f"0.0.{number}-old" / "a.json", "{}")


def _make(path: Path, kind: str, outside: Path, engine_tag: bytes) -> None:
    if kind == "file":
        _write(path, "{}")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind in ("folder", "untagged-folder"):
        _write(path / "inner.json", "{}")
    elif kind == "tagged-folder":
        _write(path / ENGINE_TAG, engine_tag)
    elif kind == "wrongly-tagged-folder":
        _write(path / ENGINE_TAG, engine_tag + b"# edited\n")
    elif kind == "folder-whose-tag-is-a-link":
        path.mkdir()
        os.symlink(outside / ENGINE_TAG, path / ENGINE_TAG)
    elif kind == "link-to-outside-folder":
        os.symlink(outside / "plain", path)
    elif kind == "link-to-outside-tagged-folder":
        os.symlink(outside / "engine", path)
    elif kind == "link-to-outside-file":
        os.symlink(outside / "a.json", path)
    else:
        raise AssertionError(kind)


def _removable(path: str, before: dict[str, tuple[str, object]], engine_tag: bytes) -> bool:
    """Whether the cache may have removed ``path`` (relative to its root): a tagged real
    folder directly in the root, its tag, or a regular file the cache writes in it."""
    folder, _, name = path.partition("/")
    if before.get(folder) != ("folder", None):
        return False
    if before.get(f"{folder}/{ENGINE_TAG}") != ("file", engine_tag):
        return False
    if not name:
        return True
    if "/" in name or before[path][0] != "file":
        return False
    return (
        name in (ENGINE_TAG,)
        or name.endswith(".json")
        or (name.startswith(".") and name.endswith(".tmp"))
    )


@needs_fifo
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    root_kind=st.sampled_from(ROOT_KINDS),
    children=children_strategy,
    squat_engine_folder=st.booleans(),
)
def test_the_cache_never_removes_or_writes_outside_its_root(
    root_kind: str,
    children: list[tuple[str, str, int, list[tuple[str, str]]]],
    squat_engine_folder: bool,
) -> None:
    engine_name = f"{__version__}-{engine_fingerprint()}"
    with tempfile.TemporaryDirectory() as base_name:
        base = Path(base_name)
        outside = base / "outside"
        engine_tag = _engine_tag()
        _outside(outside, engine_tag)
        source = _write(base / "project" / "train.py", (DATA / "pitfalls.py").read_bytes())
        root = base / "project" / CACHE

        has_children = root_kind in ("tfcoach", "foreign", "another-tools-tag", "tag-is-a-fifo")
        squatted = has_children and squat_engine_folder
        if root_kind == "link-to-a-tfcoach-cache-outside":
            os.symlink(outside / "tfcoach-cache", root)
        elif root_kind == "link-to-outside":
            os.symlink(outside / "plain", root)
        elif root_kind == "a-file":
            _write(root, "not a folder")
        elif root_kind != "absent":
            root.mkdir()
        if root_kind == "tfcoach":
            _write(root / "CACHEDIR.TAG", TFCOACH_CACHEDIR_TAG)
        elif root_kind == "another-tools-tag":
            _write(root / "CACHEDIR.TAG", CACHEDIR_SIGNATURE + "# another tool\n")
        elif root_kind == "tag-is-a-fifo":
            os.mkfifo(root / "CACHEDIR.TAG")
        now = time.time()
        if has_children:
            for name, kind, age, contents in children:
                _make(root / name, kind, outside, engine_tag)
                if kind in REAL_FOLDER_KINDS:
                    for content_name, content_kind in contents:
                        _make(root / name / content_name, content_kind, outside, engine_tag)
                os.utime(root / name, (now - age * 86400,) * 2, follow_symlinks=False)
            if squatted:  # a link where this engine's folder goes
                os.symlink(outside / "engine", root / engine_name)
        outside_before = _tree(outside)
        root_before = _tree(root) if root.is_dir() and not root.is_symlink() else {}
        root_mode = root.lstat().st_mode if os.path.lexists(root) else None

        refuse = root_kind not in ("absent", "empty", "tfcoach") and (
            root_kind != "foreign" or bool(children) or squatted
        )
        key = content_key(source.read_bytes(), ".py", ["TFC001"])
        try:
            cache = ResultCache(root)
        except CacheDirRefused:
            refused = True
        else:
            refused = False
            assert cache.get(source, key) is None
            cache.put(source, key, FileResult(()))
            stored = cache.get(source, key)
            assert stored == (None if squatted else FileResult(()))

        assert refused == refuse
        assert _tree(outside) == outside_before
        if refused:
            assert root.lstat().st_mode == root_mode
            assert (_tree(root) if root_before else {}) == root_before
            return
        root_after = _tree(root)
        for path, kind in root_before.items():
            if root_after.get(path) != kind:
                assert _removable(path, root_before, engine_tag), path
        if squatted:
            return  # no folder of this engine was created: nothing was pruned
        # Liveness: of the tagged engine folders, at most two others keep entries.
        kept = {
            path.partition("/")[0]
            for path, (kind, _) in root_after.items()
            if kind == "file"
            and path.endswith(".json")
            and _removable(path, root_before, engine_tag)
        }
        assert len(kept - {engine_name}) <= 2


@functools.cache
def _engine_tag() -> bytes:
    """The ENGINE.TAG tfcoach writes, as found in a cache it made."""
    with tempfile.TemporaryDirectory() as base_name:
        root = Path(base_name) / "cache"
        source = _write(Path(base_name) / "a.py", "x = 1\n")
        ResultCache(root).put(source, content_key(b"x = 1\n", ".py", []), FileResult(()))
        [tag] = root.glob(f"*/{ENGINE_TAG}")
        return tag.read_bytes()


# ---------------------------------------------------------------------------
# Entries are read defensively


def _entries(project: Path) -> dict[str, Path]:
    """The cache's entry of each checked file, by file name."""
    found = {}
    for entry in (project / CACHE).glob("*/*.json"):
        found[Path(json.loads(entry.read_text(encoding="utf-8"))["path"]).name] = entry
    return found


def _replace_with_fifo(entry: Path, entries: dict[str, Path]) -> None:
    entry.unlink()
    os.mkfifo(entry)


def _replace_with_a_link_to_dev_zero(entry: Path, entries: dict[str, Path]) -> None:
    entry.unlink()
    os.symlink("/dev/zero", entry)


def _replace_with_a_link_to_a_copy(entry: Path, entries: dict[str, Path]) -> None:
    copy = entry.parents[3] / "elsewhere.json"  # beside the project: a valid entry, linked
    shutil.move(entry, copy)
    os.symlink(copy, entry)


def _nest_too_deep(entry: Path, entries: dict[str, Path]) -> None:
    entry.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")


def _edit(change: Callable[[dict[str, object]], None]) -> Callable[[Path, dict[str, Path]], None]:
    def damage(entry: Path, entries: dict[str, Path]) -> None:
        record = json.loads(entry.read_text(encoding="utf-8"))
        change(record)
        entry.write_text(json.dumps(record), encoding="utf-8")

    return damage


def _forge_other_source(record: dict[str, object]) -> None:
    # No findings, "for" the clean file's source: a checksum of other source than the key's.
    record["findings"] = []
    record["source_sha256"] = hashlib.sha256((DATA / "clean.py").read_bytes()).hexdigest()


def _another_files_result(entry: Path, entries: dict[str, Path]) -> None:
    shutil.copy(entries["clean.py"], entry)  # the clean file's entry: no findings


def _too_large(entry: Path, entries: dict[str, Path]) -> None:
    with entry.open("a", encoding="utf-8") as stream:
        stream.write(" " * (16 * 1024 * 1024))  # still valid JSON, beyond any real entry


def _set_first_finding(field: str, value: object) -> Callable[[dict[str, object]], None]:
    def change(record: dict[str, object]) -> None:
        findings = record["findings"]
        assert isinstance(findings, list)
        findings[0][field] = value

    return change


DAMAGES: dict[str, Callable[[Path, dict[str, Path]], None]] = {
    "a FIFO": _replace_with_fifo,
    "a link to /dev/zero": _replace_with_a_link_to_dev_zero,
    "a link to a valid entry elsewhere": _replace_with_a_link_to_a_copy,
    "JSON nested too deep": _nest_too_deep,
    "a field of another layout": _edit(lambda record: record.update(trusted=True)),
    "a string for a line": _edit(_set_first_finding("span", ["3", 5, 3, 13])),
    "a negative line": _edit(_set_first_finding("span", [-3, 5, 3, 13])),
    "an unknown rule": _edit(_set_first_finding("code", "TFC999")),
    "a rule's code with another's name": _edit(_set_first_finding("name", "not-this-rule")),
    "a checksum of other source": _edit(_forge_other_source),
    "another file's result": _another_files_result,
    "an entry too large": _too_large,
}


@needs_fifo
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_or_forged_entry_is_analysed_again(tmp_path: Path, damage: str) -> None:
    project = tmp_path / "project"
    shutil.copy(DATA / "pitfalls.py", _write(project / "pitfalls.py", ""))
    shutil.copy(DATA / "clean.py", project / "clean.py")
    fresh = run_tfcoach("check", "--no-cache", ".", cwd=project)
    assert fresh.returncode == 1 and "pitfalls.py:" in fresh.stdout
    run_tfcoach("check", ".", cwd=project)
    entries = _entries(project)
    assert sorted(entries) == ["clean.py", "pitfalls.py"]
    DAMAGES[damage](entries["pitfalls.py"], entries)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere_before = elsewhere.read_bytes() if elsewhere.exists() else None

    again = run_tfcoach("check", "--verbose", ".", cwd=project)
    assert again.returncode == 1, again.stderr
    assert "Traceback" not in again.stderr
    assert _stats(again).startswith("tfcoach: 2 files: 1 from the cache, 1 analysed;")
    assert again.stdout == fresh.stdout  # no finding hidden, none invented
    # The entry was written again, in place of what was there (never through a link).
    healed = run_tfcoach("check", "--verbose", ".", cwd=project)
    assert _stats(healed).startswith("tfcoach: 2 files: 2 from the cache, 0 analysed;")
    assert healed.stdout == fresh.stdout
    assert stat.S_ISREG(entries["pitfalls.py"].lstat().st_mode)
    if elsewhere_before is not None:
        assert elsewhere.read_bytes() == elsewhere_before
