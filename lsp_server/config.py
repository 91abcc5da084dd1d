"""The analysis Config for a document: the core's one configuration path
(:func:`jupyterlab_tfcoach.analysis.configuration.configuration_for`), with
``[tool.tfcoach]`` from the nearest ``pyproject.toml`` overridden by the editor's
settings where they are set (editor first, like ruff's ``configurationPreference:
editorFirst``), the editor's course base URL included.

An invalid ``pyproject.toml`` is reported through ``report_error`` (the server shows
it with ``window/showMessage`` and logs it) once per version of that file, not on
every keystroke; the document is then analysed with the defaults and the editor's
settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.config import is_known_code as is_known_code
from jupyterlab_tfcoach.analysis.configuration import FileProblem, Overrides, configuration_for
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

    def config_for(self, path: Path | None, root: Path | None, settings: Settings) -> Config:
        """``path``'s configuration; without a document, the workspace root's. The search
        is not bounded by the workspace (a project may open one of its subfolders)."""
        start = path if path is not None else root
        overrides = Overrides(settings.select, settings.ignore, settings.course_base_url)
        configuration = configuration_for(start, None, overrides, self._resolver)
        if configuration.file_problem is not None:
            self._report_once(configuration.file_problem)
        for problem in configuration.override_problems:  # settings are validated already
            log.warning("invalid editor settings: %s", problem)
        return configuration.config

    def _report_once(self, problem: FileProblem) -> None:
        key = problem.version if problem.version is not None else problem.detail
        if key not in self._reported:
            if len(self._reported) >= _MAX_REPORTED:
                self._reported.clear()
            self._reported.add(key)
            self._report_error(f"tfcoach: {problem.message}")
