"""The analysis Config for a document: ``[tool.tfcoach]`` from the nearest
``pyproject.toml`` (the core resolver, :mod:`jupyterlab_tfcoach.analysis.project_config`),
overridden by the editor's settings where they are set (editor first, like ruff's
``configurationPreference: editorFirst``).

An invalid ``pyproject.toml`` is reported through ``report_error`` (the server shows
it with ``window/showMessage`` and logs it) once per version of that file, not on
every keystroke; the document is then analysed with the defaults and the editor's
settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from jupyterlab_tfcoach.analysis.config import Config, ConfigError
from jupyterlab_tfcoach.analysis.config import is_known_code as is_known_code
from jupyterlab_tfcoach.analysis.project_config import ConfigResolver, default_resolver
from lsp_server.settings import Settings

log = logging.getLogger(__name__)

# Broken pyproject versions remembered as reported (each is one message to the user).
_MAX_REPORTED = 256


class DocumentConfigs:
    """Each document's Config: the project's, with the editor's settings on top."""

    def __init__(
        self, report_error: Callable[[str], None], resolver: ConfigResolver | None = None
    ) -> None:
        self._report_error = report_error
        self._resolver = resolver or default_resolver()
        self._reported: set[object] = set()

    def project_config(self, start: Path) -> Config:
        try:
            return self._resolver.config_for(start)
        except ConfigError as error:
            key = error.version if error.version is not None else str(error)
            if key not in self._reported:
                if len(self._reported) >= _MAX_REPORTED:
                    self._reported.clear()
                self._reported.add(key)
                self._report_error(f"tfcoach: ignoring [tool.tfcoach]: {error}")
            return Config()

    def config_for(self, path: Path | None, root: Path | None, settings: Settings) -> Config:
        start = path if path is not None else root
        base = self.project_config(start) if start is not None else Config()
        try:
            return base.overridden(
                select=settings.select,
                ignore=settings.ignore,
                course_base_url=settings.course_base_url,
            )
        except ConfigError as error:  # settings are validated already; belt and braces
            log.warning("invalid editor settings: %s", error)
            return base
