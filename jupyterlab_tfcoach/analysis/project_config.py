"""The one configuration resolver: ``[tool.tfcoach]`` for a file or folder.

The table is read from the nearest ``pyproject.toml`` at or above the file's
folder that has one (like ruff, a ``pyproject.toml`` without it does not stop the
search, so a sub-package's own packaging file does not hide the project
settings). Every front end asks :class:`ConfigResolver` (the CLI, the language
server, the Jupyter server extension, ``analyze_path``), so they agree on what a
file's configuration is.

The Jupyter server passes its root folder as ``root``: the search then stops at
the root (a ``pyproject.toml`` above it, say one planted in ``/tmp``, never
applies), starts nowhere outside it, and a ``pyproject.toml`` that is a link to a
file outside the root is not read (a ``ConfigError`` says so). The CLI and the
language server search up to the file system's root, following links.

Each ``pyproject.toml`` is read and parsed once per version: the result (a
``Config``, "no table here", or the ``ConfigError``) is kept under the file's
path, mtime, size and inode, so an edit, a replacement or a deletion is seen at
the next lookup, and an unchanged file costs one ``stat``. The file is read and
parsed outside the resolver's lock (one slow or large file does not hold up
lookups in other threads), and at most ``MAX_PYPROJECT_BYTES`` of it.

An invalid file is a ``ConfigError`` whose one-line message starts with the file's
path; whatever goes wrong while reading and parsing it (too large, not UTF-8,
nested too deeply for the TOML parser, out of memory, ...) is such an error, never
an exception of another kind. Messages name the file and the key at fault, not
the file's text (:func:`jupyterlab_tfcoach.analysis.config.config_from_table`).

The folders above the start are walked one at a time, never listed all at once (a
path of many parts would otherwise cost memory growing with the square of its
depth), and folders whose ``pyproject.toml`` would be longer than a path can be
are skipped in one step: no file system could open it.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach.analysis.config import Config, ConfigError, config_from_table

PYPROJECT = "pyproject.toml"
# Versions of pyproject files remembered (a long-running server sees many folders).
MAX_ENTRIES = 512
# A project's pyproject.toml is a few KiB; a larger file is refused unread.
MAX_PYPROJECT_BYTES = 1024 * 1024
# The longest path the operating system opens (PATH_MAX; Windows' long paths).
LONGEST_PATH = 32_767 if os.name == "nt" else 4096

_NO_TABLE = None  # a pyproject.toml without [tool.tfcoach]: look further up
_MISSING = object()  # no entry for a version yet
Version = tuple[str, int, int, int]
_Entry = Config | ConfigError | None


def _version_of(path: str, info: os.stat_result) -> Version:
    return (path, info.st_mtime_ns, info.st_size, info.st_ino)


def _version(path: str) -> Version | None:
    """What identifies this version of the file (None: no such regular file)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return _version_of(path, info)


def _folder_of(start: str | Path) -> Path:
    """The folder the search starts in: ``start`` itself or its parent, links
    resolved (a linked file takes the configuration of the folder it really is in)."""
    try:
        begin = Path(start).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        begin = Path(os.path.abspath(start))
    try:
        return begin if begin.is_dir() else begin.parent
    except (OSError, ValueError):
        return begin.parent


def _folders_up(directory: Path, top: Path | None) -> Iterator[str]:
    """``directory`` and its parents, nearest first, up to ``top`` (inclusive) or the
    file system's root; one at a time."""
    folder = str(directory)
    longest = LONGEST_PATH - len(os.sep + PYPROJECT)
    if len(folder) > longest:
        # Cut to the nearest ancestor short enough in one step (one dirname per part
        # would copy the long path once per part).
        cut = folder.rfind(os.sep, 0, longest + 1)
        if cut < 0:
            return
        folder = os.path.dirname(folder[: cut + 1])
    stop = None if top is None else str(top)
    if stop is not None and len(folder) < len(stop):
        return  # the cut left ``top``: nothing inside it can be opened
    while True:
        yield folder
        if folder == stop:
            return
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _parse_toml(path: str, text: str) -> dict[str, Any]:
    # Imported here, not at module level: only reading a pyproject.toml needs the
    # TOML parser, so importing the analysis API (editors, kernels) stays cheaper.
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # tomllib's messages say what was expected and where (line, column), never
        # the text itself.
        raise ConfigError(f"{path}: invalid TOML: {error}") from error


def _too_large(path: str, size: int) -> str:
    return (
        f"{path}: {size} bytes, over the limit of {MAX_PYPROJECT_BYTES} bytes (1 MiB) "
        "for a pyproject.toml; not read"
    )


def _read_text(path: str, version: Version, no_links: bool) -> str:
    """The file's text, through one descriptor: what is checked is what is read."""
    if version[2] > MAX_PYPROJECT_BYTES:
        raise ConfigError(_too_large(path, version[2]), version)
    # Non-blocking: a file replaced by a FIFO since the stat cannot hang the lookup.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if no_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}", version) from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ConfigError(f"{path}: not a regular file; not read", version)
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_PYPROJECT_BYTES:
            chunk = os.read(descriptor, MAX_PYPROJECT_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}", version) from None
    finally:
        os.close(descriptor)
    if size > MAX_PYPROJECT_BYTES:  # it grew since the stat
        raise ConfigError(_too_large(path, size), version)
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: cannot read: not UTF-8 (at byte {error.start})", version
        ) from None


def _is_inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


class ConfigResolver:
    """``[tool.tfcoach]`` for any path, each ``pyproject.toml`` version parsed once.

    Thread-safe (the Jupyter server analyses in a thread pool). ``parses`` counts
    the files parsed so far.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: OrderedDict[Version, _Entry] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self.parses = 0

    def pyproject_for(self, start: str | Path, root: Path | None = None) -> Path | None:
        """The ``pyproject.toml`` whose ``[tool.tfcoach]`` applies at ``start``, or None
        (also None when the nearest candidate is invalid: ``config_for`` says why)."""
        try:
            found = self._lookup(start, root)
        except ConfigError:
            return None
        return found[0] if found else None

    def config_for(self, start: str | Path, root: Path | None = None) -> Config:
        """The configuration at ``start`` (a file or a folder; it need not exist):
        defaults when no ``pyproject.toml`` above it has ``[tool.tfcoach]``.
        Raises ``ConfigError`` naming the file when the nearest such file is invalid.

        With ``root`` (an absolute folder, links resolved) only ``pyproject.toml``
        files in ``root`` and its subfolders count, and none that links outside it."""
        found = self._lookup(start, root)
        return found[1] if found else Config()

    def _lookup(self, start: str | Path, root: Path | None) -> tuple[Path, Config] | None:
        directory = _folder_of(start)
        if root is not None and not _is_inside(directory, root):
            return None
        for folder in _folders_up(directory, root):
            candidate = os.path.join(folder, PYPROJECT)
            source = candidate if root is None else self._inside(candidate, root)
            if source is None:
                continue
            version = _version(source)
            if version is None:
                continue
            entry = self._entry(source, version, no_links=root is not None)
            if isinstance(entry, ConfigError):
                # A new exception each time: re-raising the cached one would grow its
                # traceback on every lookup of a broken file (every keystroke in an editor).
                raise ConfigError(str(entry), entry.version)
            if entry is not None:
                return Path(source), entry
        return None

    @staticmethod
    def _inside(candidate: str, root: Path) -> str | None:
        """The real file ``candidate`` names when it is in ``root`` (None: there is no
        such file). A link to a file outside ``root`` is a ``ConfigError``."""
        try:
            info = os.lstat(candidate)
        except (OSError, ValueError):
            return None
        if not stat.S_ISLNK(info.st_mode):
            return candidate
        try:
            real = Path(candidate).resolve(strict=True)
        except (OSError, RuntimeError):  # a dangling link, a loop: nothing to read
            return None
        if not _is_inside(real, root):
            raise ConfigError(
                f"{candidate}: a link to a file outside the server's root; not read",
                _version_of(candidate, info),
            )
        return str(real)

    def _entry(self, path: str, version: Version, no_links: bool) -> _Entry:
        with self._lock:
            entry = self._entries.get(version, _MISSING)
            if entry is not _MISSING:
                self._entries.move_to_end(version)
                return entry  # type: ignore[return-value]
        # Read and parsed without the lock: other threads' lookups go on meanwhile (two
        # threads meeting the same new version may both parse it; both agree).
        entry, parsed = self._read(path, version, no_links)
        with self._lock:
            self.parses += int(parsed)
            self._entries[version] = entry
            self._entries.move_to_end(version)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return entry

    def _read(self, path: str, version: Version, no_links: bool) -> tuple[_Entry, bool]:
        """The file's entry, and whether it was parsed. Never raises."""
        parsed = False
        try:
            text = _read_text(path, version, no_links)
            if "tfcoach" not in text:  # cheap skip for packaging-only pyproject files
                return _NO_TABLE, parsed
            parsed = True
            tool = _parse_toml(path, text).get("tool")
            table = tool.get("tfcoach") if isinstance(tool, dict) else None
            if table is None:
                return _NO_TABLE, parsed
            return config_from_table(table, path), parsed
        except ConfigError as error:
            return ConfigError(str(error), version), parsed
        except RecursionError:
            return ConfigError(f"{path}: nested too deeply to parse", version), parsed
        except MemoryError:
            return ConfigError(f"{path}: too large to parse (out of memory)", version), parsed
        except Exception as error:  # a configuration problem, whatever it is, not a crash
            problem = type(error).__name__
            return ConfigError(f"{path}: cannot be read ({problem})", version), parsed


_DEFAULT = ConfigResolver()


def default_resolver() -> ConfigResolver:
    """The process's shared resolver (what ``load_config`` and ``analyze_path`` use)."""
    return _DEFAULT


def load_config(start_path: str | Path = ".") -> Config:
    """Settings from the nearest ``pyproject.toml`` above ``start_path`` (file or folder)."""
    return _DEFAULT.config_for(start_path)
