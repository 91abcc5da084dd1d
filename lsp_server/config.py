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


class ConfigResolver:
    """Caches ``[tool.tfcoach]`` per pyproject.toml (re-read when its mtime changes)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._cache: dict[Path, tuple[float, Config]] = {}
        self._warned: set[tuple[Path, float]] = set()

    def _project_config(self, start: Path) -> Config:
        try:
            pyproject = find_pyproject(start)
            if pyproject is None:
                return Config()
            mtime = pyproject.stat().st_mtime
            cached = self._cache.get(pyproject)
            if cached is not None and cached[0] == mtime:
                return cached[1]
            try:
                config = load_config(start)
            except ConfigError as error:
                if (pyproject, mtime) not in self._warned:
                    self._warned.add((pyproject, mtime))
                    self._warn(f"tfcoach: ignoring [tool.tfcoach]: {error}")
                config = Config()
            self._cache[pyproject] = (mtime, config)
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
