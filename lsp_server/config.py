"""The analysis Config for a document: ``[tool.tfcoach]`` from the nearest
``pyproject.toml``, overridden by the editor's settings where they are set
(editor first, like ruff's ``configurationPreference: editorFirst``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from jupyterlab_tfcoach.analysis.config import (
    Config,
    ConfigError,
    find_pyproject,
    load_config,
    normalize_codes,
)
from lsp_server.settings import Settings

log = logging.getLogger(__name__)


def is_known_code(code: str) -> bool:
    """A rule code or prefix the analysis accepts (``TFC001``, ``TFC00``)."""
    try:
        normalize_codes([code], "tfcoach")
    except ConfigError:
        return False
    return True


def _pyproject_stamp(start: Path) -> tuple[tuple[Path, int], ...]:
    """Every ``pyproject.toml`` above ``start`` with its mtime: one ``stat`` each, no
    reads, so an unchanged project is recognised without re-reading any file."""
    start = start.resolve()
    directory = start if start.is_dir() else start.parent
    stamp = []
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        try:
            stamp.append((candidate, candidate.stat().st_mtime_ns))
        except OSError:
            continue
    return tuple(stamp)


class ConfigResolver:
    """Caches ``[tool.tfcoach]`` per start path; re-read only when a ``pyproject.toml``
    above it appears, disappears or changes (mtime)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._cache: dict[Path, tuple[tuple[tuple[Path, int], ...], Config]] = {}
        self._warned: set[tuple[tuple[Path, int], ...]] = set()

    def _project_config(self, start: Path) -> Config:
        try:
            stamp = _pyproject_stamp(start)
            cached = self._cache.get(start)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            config = Config()
            if find_pyproject(start) is not None:
                try:
                    config = load_config(start)
                except ConfigError as error:
                    if stamp not in self._warned:
                        self._warned.add(stamp)
                        self._warn(f"tfcoach: ignoring [tool.tfcoach]: {error}")
            self._cache[start] = (stamp, config)
            return config
        except (OSError, ConfigError) as error:
            log.warning("cannot read project config near %s: %s", start, error)
            return Config()

    def config_for(self, path: Path | None, root: Path | None, settings: Settings) -> Config:
        start = path if path is not None else root
        base = self._project_config(start) if start is not None else Config()
        try:
            return base.overridden(
                select=settings.select,
                ignore=settings.ignore,
                course_base_url=settings.course_base_url,
            )
        except ConfigError as error:  # settings are validated already; belt and braces
            log.warning("invalid editor settings: %s", error)
            return base
