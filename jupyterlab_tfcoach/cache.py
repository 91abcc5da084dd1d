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

The cache deletes things, so it proves ownership before it touches anything. The
folder given to it (the *root*) may be a path a user mistyped (``--cache-dir .``),
a shared folder (``TFCOACH_CACHE_DIR=~/.cache``) or a link a cloned repository
committed (``.tfcoach_cache -> ..``); so:

- A root is used only when it is tfcoach's: a real folder (not a symbolic link)
  holding a ``CACHEDIR.TAG`` with tfcoach's comment line. A root that does not
  exist is created whole (prepared under a temporary name beside it, then renamed,
  so a concurrent run never sees it half-made); an empty folder is adopted. Any
  other root raises :class:`CacheDirRefused` before anything is read or written:
  the command line reports it as a usage error.
- Each engine folder gets an ``ENGINE.TAG`` when it is created. Pruning considers
  only real folders directly in the root whose ``ENGINE.TAG`` is a regular file
  with exactly tfcoach's text, checks it again right before removing, and then
  removes only the regular files the cache writes there (``*.json`` entries and
  ``.*.tmp`` files of interrupted writes), the tag, and the then empty folder.
  Every step goes through directory descriptors opened with ``O_NOFOLLOW``, so a
  link (to a folder or a file) is never followed and nothing outside the root is
  ever removed; a folder holding anything else keeps it, and keeps its tag.

Entries are JSON, never pickle (a cloned repository could ship a crafted cache
folder, and reading it must not run code), one file per checked path, and are read
as untrusted input: opened without following a link or blocking (a FIFO), only a
regular file of at most :data:`MAX_ENTRY_BYTES`, parsed with a too-deep nesting
counted as a miss, and validated field by field (exact keys, types, ranges, rule
codes with their names and course sections). Each entry names its file's absolute
path, its key and the SHA-256 of the source it describes, and all three must match
the file being checked. Anything else is a miss: the file is analysed again.

Each entry is written to a temporary file and renamed with ``os.replace``, so runs
in parallel (pre-commit splits the files between processes) never read half an
entry, and a cache that cannot be written (read-only checkout) is silently skipped.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import hashlib
import json
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach._version import __version__
from jupyterlab_tfcoach.analysis import AnalysisInputError, Config, analyze_path
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, RelatedLocation, Severity
from jupyterlab_tfcoach.analysis.rules import RULES_BY_CODE

CACHE_DIR_NAME = ".tfcoach_cache"
CACHE_DIR_ENV = "TFCOACH_CACHE_DIR"
_LAYOUT = 2  # bump when the entry format changes (2: engine tags, source checksums)
KEPT_OTHER_ENGINES = 2
_GITIGNORE = "# Created by `tfcoach check`: a cache, never committed.\n*\n"
# https://bford.info/cachedir/ : backup tools skip folders tagged so. The comment line
# is what makes a root tfcoach's: other tools write the same signature.
CACHEDIR_TAG_NAME = "CACHEDIR.TAG"
_CACHEDIR_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55\n"
_CACHEDIR_TFCOACH_LINE = "# This file is a cache directory tag created by tfcoach.\n"
_CACHEDIR_TAG = _CACHEDIR_SIGNATURE + _CACHEDIR_TFCOACH_LINE
# The proof, inside each engine folder, that tfcoach created it and may delete it.
ENGINE_TAG_NAME = "ENGINE.TAG"
_ENGINE_TAG = (
    "# An engine folder of the tfcoach result cache: tfcoach created it, and deletes\n"
    "# the entries it wrote here when this engine is no longer among the last used.\n"
)
_MAX_TAG_BYTES = 4096
# Far above a real entry (a few kB; a file with a thousand findings is under 1 MB),
# low enough that reading a planted one costs nothing noticeable.
MAX_ENTRY_BYTES = 16 * 1024 * 1024

# A regular file is opened as usual; a link is refused (ELOOP) and a FIFO does not block.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_FOLDER_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
# Pruning needs every step relative to a directory descriptor; where the platform lacks
# that, old engines are left in place rather than removed by path.
_CAN_PRUNE = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and {os.open, os.unlink, os.rmdir} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)


class CacheDirRefused(Exception):
    """The cache folder is not one tfcoach may use; nothing in it was read or written."""


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
    """The key of one file's result: ``<SHA-256 of its bytes>-<digest of its kind and the
    rules that run on it>``. The first part is the source checksum its entry carries."""
    setting = hashlib.sha256(f"{kind}\0{','.join(enabled_rules)}".encode()).hexdigest()
    return f"{hashlib.sha256(data).hexdigest()}-{setting[:32]}"


def _source_checksum(key: str) -> str:
    return key.partition("-")[0]


# ---------------------------------------------------------------------------
# Reading what may not be ours: never through a link, never blocking, never unbounded.


def _read_regular_file(name: str | Path, limit: int, dir_fd: int | None = None) -> bytes | None:
    """The bytes of ``name`` if it is a regular file of at most ``limit`` bytes (not a link,
    FIFO, device or folder); None otherwise or when it cannot be read."""
    try:
        descriptor = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        # Up to one byte past the limit, which tells a file that grew since fstat. A
        # regular file reads short only at its end: one read() for a file read whole.
        data = b""
        wanted = info.st_size + 1
        while True:
            chunk = os.read(descriptor, min(wanted, limit + 1 - len(data)))
            data += chunk
            if len(chunk) < wanted or len(data) > limit:
                break
            wanted = 65536
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _is_cache_tag(data: bytes | None) -> bool:
    """A CACHEDIR.TAG that tfcoach wrote (the signature line, then tfcoach's comment line)."""
    if data is None:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.startswith(_CACHEDIR_SIGNATURE) and _CACHEDIR_TFCOACH_LINE in text


def _is_engine_tag(data: bytes | None) -> bool:
    return data == _ENGINE_TAG.encode()


def _is_entry_file_name(name: str) -> bool:
    """The names of the files the cache writes in an engine folder: entries, and the
    temporary files of writes interrupted before their rename."""
    return name.endswith(".json") or (name.startswith(".") and name.endswith(".tmp"))


class _Root(enum.Enum):
    ABSENT = "absent"  # created on the first write
    EMPTY = "empty"  # adopted on the first write
    OURS = "ours"  # holds tfcoach's CACHEDIR.TAG


def _inspect_root(root: Path) -> _Root:
    shown = os.path.abspath(root)
    try:
        info = os.lstat(root)
    except (FileNotFoundError, NotADirectoryError):
        return _Root.ABSENT
    except OSError as error:
        raise CacheDirRefused(
            f"cache folder {shown} cannot be examined ({error.strerror})"
        ) from None
    if stat.S_ISLNK(info.st_mode):
        with contextlib.suppress(OSError):
            shown += f" -> {os.readlink(root)}"
        raise CacheDirRefused(
            f"cache folder {shown} is a symbolic link; tfcoach never follows a link out of "
            "its cache. Remove the link, give a real folder with --cache-dir or "
            f"{CACHE_DIR_ENV}, or use --no-cache"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise CacheDirRefused(f"cache folder {shown} exists and is not a folder")
    if _is_cache_tag(_read_regular_file(root / CACHEDIR_TAG_NAME, _MAX_TAG_BYTES)):
        return _Root.OURS
    try:
        with os.scandir(root) as entries:
            empty = next(entries, None) is None
    except OSError as error:
        raise CacheDirRefused(f"cache folder {shown} cannot be read ({error.strerror})") from None
    if empty:
        return _Root.EMPTY
    raise CacheDirRefused(
        f"cache folder {shown} is not empty and was not created by tfcoach (it has no "
        f"{CACHEDIR_TAG_NAME} of tfcoach); tfcoach keeps its cache only in a new or empty "
        f"folder. Choose one with --cache-dir or {CACHE_DIR_ENV}, or use --no-cache"
    )


# ---------------------------------------------------------------------------
# The cache


class ResultCache:
    """Entries under ``<root>/<version>-<engine>/``, one JSON file per checked path.

    Raises :class:`CacheDirRefused` when ``root`` is a symbolic link, not a folder, or a
    folder that is neither empty nor tfcoach's."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root_state = _inspect_root(root)
        self._folder = root / f"{__version__}-{engine_fingerprint()}"
        self._prepared = False
        self._broken = False
        self._readable = False  # whether our engine folder exists: else every look-up misses
        if self._root_state is _Root.OURS:
            try:
                # A link or a file in place of our engine folder is not ours to write through.
                self._readable = stat.S_ISDIR(os.lstat(self._folder).st_mode)
                self._broken = not self._readable
            except FileNotFoundError:
                pass
            except OSError:
                self._broken = True

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
        if not self._readable:
            return None
        absolute, entry = self._entry(path)
        data = _read_regular_file(entry, MAX_ENTRY_BYTES)
        if data is None:
            return None  # absent, or not a regular file of a sane size
        try:
            return _result_from_record(
                json.loads(data), absolute, key, str(path) if shown is None else shown
            )
        except (ValueError, KeyError, TypeError, RecursionError):
            # Half-written by a crashed writer, nested too deep, or not ours: a miss.
            return None

    def put(self, path: Path, key: str, result: FileResult) -> None:
        if self._broken:
            return
        absolute, entry = self._entry(path)
        record = {
            "path": absolute,
            "key": key,
            "source_sha256": _source_checksum(key),
            **_result_record(result),
        }
        text = json.dumps(record, separators=(",", ":"))  # ASCII: characters are bytes
        if len(text) > MAX_ENTRY_BYTES:
            return  # would be refused when read back
        try:
            self._prepare()
            _write_atomically(entry, text)
        except (OSError, CacheDirRefused):
            self._broken = True  # read-only, full, or taken meanwhile: run without a cache

    def _prepare(self) -> None:
        if self._prepared:
            return
        if self._root_state is _Root.ABSENT:
            self._create_root()
        elif self._root_state is _Root.EMPTY:
            _write_root_files(self.root)
        elif not os.path.lexists(self.root / ".gitignore"):
            _write_atomically(self.root / ".gitignore", _GITIGNORE)
        self._root_state = _Root.OURS
        if self._make_engine_folder():
            self._prune_engines()
        self._prepared = True

    def _create_root(self) -> None:
        """Create the root already tagged: prepared under a temporary name beside it and
        renamed, so that no run ever sees it without its CACHEDIR.TAG."""
        import tempfile  # imported here, as in _write_atomically: a warm run needs neither

        parent = self.root.parent
        parent.mkdir(parents=True, exist_ok=True)
        staging = tempfile.mkdtemp(dir=parent, prefix=f".{self.root.name}.", suffix=".tmp")
        try:
            os.chmod(staging, 0o777 & ~_umask())  # mkdtemp gives 0o700
            _write_root_files(Path(staging))
            os.rename(staging, self.root)
        except OSError:
            for name in (".gitignore", CACHEDIR_TAG_NAME):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(staging, name))
            with contextlib.suppress(OSError):
                os.rmdir(staging)
            # Another run created it first (its rename won), or it cannot be created.
            state = _inspect_root(self.root)
            if state is _Root.ABSENT:
                raise
            if state is _Root.EMPTY:
                _write_root_files(self.root)

    def _make_engine_folder(self) -> bool:
        """Make sure this engine's folder exists and is tagged; True if this run created it."""
        try:
            os.mkdir(self._folder)
            created = True
        except FileExistsError:
            created = False  # another run of the same engine, or an earlier one
        if not stat.S_ISDIR(os.lstat(self._folder).st_mode):
            raise OSError(f"{self._folder} is not a folder")  # never write through a link
        if not _is_engine_tag(_read_regular_file(self._folder / ENGINE_TAG_NAME, _MAX_TAG_BYTES)):
            _write_atomically(self._folder / ENGINE_TAG_NAME, _ENGINE_TAG)
        self._readable = True
        return created

    def _prune_engines(self) -> None:
        """A new engine started: keep the entries of the two engines written to last
        (several Python versions in turn, as tox runs them), delete the older ones
        (every edit of the analysis in a development checkout makes a new engine).
        Only folders tagged as engine folders count; anything else is not ours."""
        if not _CAN_PRUNE:
            return
        try:
            root = os.open(self.root, _FOLDER_FLAGS)
        except OSError:
            return
        try:
            engines = []
            with os.scandir(root) as entries:
                for entry in entries:
                    if entry.name == self._folder.name:
                        continue
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            modified = _engine_folder_time(root, entry.name)
                            if modified is not None:
                                engines.append((modified, entry.name))
            for _, name in sorted(engines, reverse=True)[KEPT_OTHER_ENGINES:]:
                with contextlib.suppress(OSError):
                    _remove_engine_folder(root, name)
        finally:
            os.close(root)


def _engine_folder_time(root: int, name: str) -> int | None:
    """The modification time of the tagged engine folder ``name`` of ``root``, else None."""
    folder = os.open(name, _FOLDER_FLAGS, dir_fd=root)
    try:
        tag = _read_regular_file(ENGINE_TAG_NAME, _MAX_TAG_BYTES, dir_fd=folder)
        return os.fstat(folder).st_mtime_ns if _is_engine_tag(tag) else None
    finally:
        os.close(folder)


def _remove_engine_folder(root: int, name: str) -> None:
    """Remove what the cache wrote in the engine folder ``name`` of ``root``, and the
    folder if nothing else is left. Each name is resolved in the folder's descriptor
    without following links: ``unlink`` removes a link, never what it points to."""
    folder = os.open(name, _FOLDER_FLAGS, dir_fd=root)
    try:
        if not _is_engine_tag(_read_regular_file(ENGINE_TAG_NAME, _MAX_TAG_BYTES, dir_fd=folder)):
            return
        others = []
        with os.scandir(folder) as entries:
            for entry in entries:
                if _is_entry_file_name(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.name, dir_fd=folder)
                        continue
                others.append(entry.name)
        if others != [ENGINE_TAG_NAME]:
            return  # something the cache did not write: it stays, and the tag with it
        os.unlink(ENGINE_TAG_NAME, dir_fd=folder)
    finally:
        os.close(folder)
    os.rmdir(name, dir_fd=root)  # fails, harmlessly, if a file appeared meanwhile


def _write_root_files(folder: Path) -> None:
    for name, text in ((".gitignore", _GITIGNORE), (CACHEDIR_TAG_NAME, _CACHEDIR_TAG)):
        if not os.path.lexists(folder / name):
            _write_atomically(folder / name, text)


@functools.cache
def _umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _write_atomically(path: Path, text: str) -> None:
    import tempfile

    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):
            # What open() would give (mkstemp gives 0o600).
            os.fchmod(descriptor, 0o666 & ~_umask())
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)  # replaces a link or FIFO of that name, never its target
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---------------------------------------------------------------------------
# Entries: findings as JSON, read back checking every field.

_RECORD_FIELDS = frozenset({"path", "key", "source_sha256", "problem", "findings"})
_FINDING_FIELDS = frozenset(
    {"code", "name", "severity", "message", "span", "section_id", "cell", "fix", "related"}
)
_FIX_FIELDS = frozenset({"description", "edits"})


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


def _fields(value: object, names: frozenset[str]) -> dict[str, Any]:
    """``value`` as a JSON object with exactly the fields ``names``."""
    if type(value) is not dict or value.keys() != names:
        raise TypeError("not an object of this layout")
    return value


def _items(value: object, length: int | None = None) -> list[Any]:
    if type(value) is not list or (length is not None and len(value) != length):
        raise TypeError("not a list of this layout")
    return value


def _text(value: object) -> str:
    if type(value) is not str:
        raise TypeError("not text")
    return value


def _number(value: object) -> int:
    """A line, column or cell: an integer (not a bool, not a float), never negative."""
    if type(value) is not int or value < 0:
        raise TypeError("not a position")
    return value


def _optional_number(value: object) -> int | None:
    return None if value is None else _number(value)


def _result_from_record(record: object, absolute: str, key: str, path: str) -> FileResult:
    """The result an entry holds, if the entry is of this layout and describes the file
    ``absolute`` with the source and settings of ``key``; raises otherwise."""
    fields = _fields(record, _RECORD_FIELDS)
    if (
        fields["path"] != absolute
        or fields["key"] != key
        or fields["source_sha256"] != _source_checksum(key)
    ):
        raise ValueError("another file, source or configuration")
    problem = fields["problem"]
    return FileResult(
        tuple(_finding_from_record(item, path) for item in _items(fields["findings"])),
        None if problem is None else _text(problem),
    )


def _finding_from_record(item: object, path: str) -> Finding:
    fields = _fields(item, _FINDING_FIELDS)
    rule = RULES_BY_CODE[_text(fields["code"])]
    if fields["name"] != rule.name or fields["section_id"] != rule.section:
        raise ValueError("a rule's code with another rule's name or course section")
    line, column, end_line, end_column = _items(fields["span"], 4)
    fix = fields["fix"]
    if fix is not None:
        fix = _fields(fix, _FIX_FIELDS)
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=Severity(_text(fields["severity"])),
        message=_text(fields["message"]),
        line=_number(line),
        column=_number(column),
        end_line=_number(end_line),
        end_column=_number(end_column),
        section_id=rule.section,
        cell=_optional_number(fields["cell"]),
        path=path,
        fix=None
        if fix is None
        else Fix(
            _text(fix["description"]),
            tuple(
                Edit(_number(a), _number(b), _number(c), _number(d), _text(text))
                for a, b, c, d, text in (_items(edit, 5) for edit in _items(fix["edits"]))
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
            for a, b, c, d, message, cell in (
                _items(location, 6) for location in _items(fields["related"])
            )
        ),
    )
