"""The result cache of ``tfcoach check``: each file's findings, reused while nothing changed.

Like ruff's ``.ruff_cache``, the cache is a folder, ``.tfcoach_cache``, in the project
root: the nearest folder at or above the working directory that has a
``pyproject.toml``, else the working directory (``--cache-dir`` or the
``TFCOACH_CACHE_DIR`` environment variable choose another). It holds a
``.gitignore`` of ``*``, so it is never committed, and may be deleted at any time.

An entry is reused only when everything the analysis depends on is unchanged:

- the file's content (SHA-256 of its bytes) and kind (``.py`` or ``.ipynb``);
- the rules the file's configuration enables, the only part of ``[tool.tfcoach]``
  the analysis reads (course links are added when the output is written);
- the engine: tfcoach's version, the Python version (``ast`` differs between
  them), and the name, size and modification time of every module of the
  analysis package, so an edited rule in a development checkout never serves
  stale findings. When a new engine starts, the entries of all but the two
  engines used last are deleted.

Entries are JSON, never pickle (a cloned repository could ship a crafted cache
folder, and reading it must not run code), one file per checked path. Each is
written to a temporary file and renamed with ``os.replace``, so runs in parallel
(pre-commit splits the files between processes) never read half an entry; an
unreadable, truncated or foreign entry is a miss, and a cache that cannot be
written (read-only checkout) is silently skipped.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach._version import __version__
from jupyterlab_tfcoach.analysis import AnalysisInputError, Config, analyze_path
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, RelatedLocation, Severity

CACHE_DIR_NAME = ".tfcoach_cache"
CACHE_DIR_ENV = "TFCOACH_CACHE_DIR"
_LAYOUT = 1  # bump when the entry format changes
KEPT_OTHER_ENGINES = 2
_GITIGNORE = "# Created by `tfcoach check`: a cache, never committed.\n*\n"
# https://bford.info/cachedir/ : backup tools skip folders tagged so.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tfcoach.\n"
)


@dataclass(frozen=True)
class FileResult:
    """What checking one file gave: its findings and its input problem, if any."""

    findings: tuple[Finding, ...]
    problem: str | None = None


def analyze_file(path: Path, config: Config) -> FileResult:
    """One file's result; a module-level function so that pool workers can run it."""
    try:
        return FileResult(tuple(analyze_path(path, config)))
    except AnalysisInputError as error:
        # A notebook with one broken cell still has findings in the others.
        return FileResult(tuple(error.findings), error.problem)


def default_cache_dir(cwd: Path) -> Path:
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured)
    for folder in (cwd, *cwd.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / CACHE_DIR_NAME
    return cwd / CACHE_DIR_NAME


def engine_fingerprint() -> str:
    """tfcoach's version, Python's, and the analysis modules' names, sizes and times."""
    from jupyterlab_tfcoach import analysis

    digest = hashlib.sha256(f"{_LAYOUT}\0{__version__}\0{sys.version}\0".encode())
    package = os.path.dirname(os.path.abspath(analysis.__file__))
    for directory, subdirectories, names in os.walk(package):
        subdirectories[:] = sorted(name for name in subdirectories if name != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                try:
                    info = os.stat(path)
                except OSError:
                    continue  # removed while we looked (an editor saving)
                relative = os.path.relpath(path, package)
                digest.update(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def content_key(data: bytes, kind: str, enabled_rules: Sequence[str]) -> str:
    """The key of one file's result: its bytes, its kind and the rules that run on it."""
    digest = hashlib.sha256(f"{kind}\0{','.join(enabled_rules)}\0".encode())
    digest.update(data)
    return digest.hexdigest()


class ResultCache:
    """Entries under ``<root>/<version>-<engine>/``, one JSON file per checked path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folder = root / f"{__version__}-{engine_fingerprint()}"
        self._prepared = False
        self._broken = False

    @property
    def writable(self) -> bool:
        """False once a write failed (read-only checkout, full disk): entries are only read."""
        return not self._broken

    def _entry(self, path: Path) -> tuple[str, Path]:
        absolute = os.path.abspath(path)
        name = hashlib.sha256(os.fsencode(absolute)).hexdigest()[:32]
        return absolute, self._folder / f"{name}.json"

    def get(self, path: Path, key: str, shown: str | None = None) -> FileResult | None:
        """The entry of ``path`` if it was written under ``key``; its findings carry
        ``shown`` as their path (as ``analyze_path`` gives ``str(path)``)."""
        absolute, entry = self._entry(path)
        try:
            with open(entry, "rb") as stream:
                record = json.loads(stream.read())
            if record["path"] != absolute or record["key"] != key:
                return None
            result = _result_from_record(record, str(path) if shown is None else shown)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # absent, half-written by a crashed writer, or not ours
        return result

    def put(self, path: Path, key: str, result: FileResult) -> None:
        if self._broken:
            return
        absolute, entry = self._entry(path)
        record = {"path": absolute, "key": key, **_result_record(result)}
        try:
            self._prepare()
            _write_atomically(entry, json.dumps(record, separators=(",", ":")))
        except OSError:
            self._broken = True  # read-only or full: run without a cache, say nothing

    def _prepare(self) -> None:
        if self._prepared:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            if not (self.root / name).exists():
                _write_atomically(self.root / name, text)
        if not self._folder.is_dir():
            self._folder.mkdir(exist_ok=True)
            self._prune_engines()
        self._prepared = True

    def _prune_engines(self) -> None:
        """A new engine started: keep the entries of the two engines written to last
        (several Python versions in turn, as tox runs them), delete the older ones
        (every edit of the analysis in a development checkout makes a new engine)."""
        import shutil  # imported here, as tempfile below: a warm run needs neither

        others = []
        for other in self.root.iterdir():
            with contextlib.suppress(OSError):
                if other.is_dir() and not other.is_symlink() and other != self._folder:
                    others.append((other.stat().st_mtime_ns, other))
        for _, stale in sorted(others, reverse=True)[KEPT_OTHER_ENGINES:]:
            shutil.rmtree(stale, ignore_errors=True)


@functools.cache
def _file_mode() -> int:
    """0o666 less the umask: what ``open`` would give (``mkstemp`` gives 0o600)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _write_atomically(path: Path, text: str) -> None:
    import tempfile

    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(descriptor, _file_mode())
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---------------------------------------------------------------------------
# Entries: findings as JSON, read back checking every type.


def _result_record(result: FileResult) -> dict[str, Any]:
    return {
        "problem": result.problem,
        "findings": [_finding_record(finding) for finding in result.findings],
    }


def _finding_record(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "span": [finding.line, finding.column, finding.end_line, finding.end_column],
        "section_id": finding.section_id,
        "cell": finding.cell,
        "fix": None
        if finding.fix is None
        else {
            "description": finding.fix.description,
            "edits": [
                [edit.line, edit.column, edit.end_line, edit.end_column, edit.new_text]
                for edit in finding.fix.edits
            ],
        },
        "related": [
            [r.line, r.column, r.end_line, r.end_column, r.message, r.cell] for r in finding.related
        ],
    }


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not text")
    return value


def _number(value: object) -> int:
    if type(value) is not int:
        raise TypeError("not an integer")
    return value


def _optional_number(value: object) -> int | None:
    return None if value is None else _number(value)


def _result_from_record(record: dict[str, Any], path: str) -> FileResult:
    problem = record["problem"]
    return FileResult(
        tuple(_finding_from_record(item, path) for item in record["findings"]),
        None if problem is None else _text(problem),
    )


def _finding_from_record(item: dict[str, Any], path: str) -> Finding:
    line, column, end_line, end_column = item["span"]
    fix = item["fix"]
    return Finding(
        code=_text(item["code"]),
        name=_text(item["name"]),
        severity=Severity(item["severity"]),
        message=_text(item["message"]),
        line=_number(line),
        column=_number(column),
        end_line=_number(end_line),
        end_column=_number(end_column),
        section_id=_text(item["section_id"]),
        cell=_optional_number(item["cell"]),
        path=path,
        fix=None
        if fix is None
        else Fix(
            _text(fix["description"]),
            tuple(
                Edit(_number(a), _number(b), _number(c), _number(d), _text(text))
                for a, b, c, d, text in fix["edits"]
            ),
        ),
        related=tuple(
            RelatedLocation(
                _number(a),
                _number(b),
                _number(c),
                _number(d),
                _text(message),
                _optional_number(cell),
            )
            for a, b, c, d, message, cell in item["related"]
        ),
    )
