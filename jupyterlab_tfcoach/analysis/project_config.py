"""The one configuration resolver: ``[tool.tfcoach]`` for a file or folder.

The table is read from the nearest ``pyproject.toml`` at or above the file's
folder that has one (like ruff, a ``pyproject.toml`` without it does not stop the
search, so a sub-package's own packaging file does not hide the project
settings). Every front end asks :class:`ConfigResolver` (the CLI, the language
server, the Jupyter server extension, ``analyze_path``), so they agree on what a
file's configuration is.

Each ``pyproject.toml`` is read and parsed once per version: the result (a
``Config``, "no table here", or the ``ConfigError``) is kept under the file's
path, mtime, size and inode, so an edit, a replacement or a deletion is seen at
the next lookup, and an unchanged file costs one ``stat``. An invalid file is a
``ConfigError`` whose one-line message starts with the file's path.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach.analysis.config import Config, ConfigError, config_from_table

PYPROJECT = "pyproject.toml"
# Versions of pyproject files remembered (a long-running server sees many folders).
MAX_ENTRIES = 512

_NO_TABLE = None  # a pyproject.toml without [tool.tfcoach]: look further up
Version = tuple[str, int, int, int]
_Entry = Config | ConfigError | None


def _version(path: Path) -> Version | None:
    """What identifies this version of the file (None: no such regular file)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)


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


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    # Imported here, not at module level: only reading a pyproject.toml needs the
    # TOML parser, so importing the analysis API (editors, kernels) stays cheaper.
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error


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

    def pyproject_for(self, start: str | Path) -> Path | None:
        """The ``pyproject.toml`` whose ``[tool.tfcoach]`` applies at ``start``, or None
        (also None when the nearest candidate is invalid: ``config_for`` says why)."""
        try:
            found = self._lookup(start)
        except ConfigError:
            return None
        return found[0] if found else None

    def config_for(self, start: str | Path) -> Config:
        """The configuration at ``start`` (a file or a folder; it need not exist):
        defaults when no ``pyproject.toml`` above it has ``[tool.tfcoach]``.
        Raises ``ConfigError`` naming the file when the nearest such file is invalid."""
        found = self._lookup(start)
        return found[1] if found else Config()

    def _lookup(self, start: str | Path) -> tuple[Path, Config] | None:
        directory = _folder_of(start)
        for folder in (directory, *directory.parents):
            candidate = folder / PYPROJECT
            version = _version(candidate)
            if version is None:
                continue
            entry = self._entry(candidate, version)
            if isinstance(entry, ConfigError):
                # A new exception each time: re-raising the cached one would grow its
                # traceback on every lookup of a broken file (every keystroke in an editor).
                raise ConfigError(str(entry), entry.version)
            if entry is not None:
                return candidate, entry
        return None

    def _entry(self, path: Path, version: Version) -> _Entry:
        with self._lock:
            if version in self._entries:
                self._entries.move_to_end(version)
                return self._entries[version]
            entry = self._read(path, version)
            self._entries[version] = entry
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
            return entry

    def _read(self, path: Path, version: Version) -> _Entry:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            return ConfigError(f"{path}: cannot read: {error}", version)
        if "tfcoach" not in text:  # cheap skip for packaging-only pyproject files
            return _NO_TABLE
        self.parses += 1
        try:
            tool = _parse_toml(path, text).get("tool")
            table = tool.get("tfcoach") if isinstance(tool, dict) else None
            if table is None:
                return _NO_TABLE
            return config_from_table(table, str(path))
        except ConfigError as error:
            return ConfigError(str(error), version)


_DEFAULT = ConfigResolver()


def default_resolver() -> ConfigResolver:
    """The process's shared resolver (what ``load_config`` and ``analyze_path`` use)."""
    return _DEFAULT


def load_config(start_path: str | Path = ".") -> Config:
    """Settings from the nearest ``pyproject.toml`` above ``start_path`` (file or folder)."""
    return _DEFAULT.config_for(start_path)
