"""REST routes of docs/findings.md, all under the server's ``base_url``, all authenticated.

- ``GET  tfcoach/api/kernels/{kernel_id}/reports`` -> ``{"reports": [...]}`` (oldest first)
- ``POST tfcoach/api/analyze`` ``{"source": str}`` | ``{"cells": [str, ...]}``, optionally
  with ``"path": str`` (the notebook's contents path, relative to the server's root) and
  ``"settings": {"select": [str, ...], "ignore": [str, ...]}`` (JupyterLab's, each
  optional) -> ``{"findings": [CLI JSON objects], "syntax_errors": [{cell, line, column,
  message}]}``, plus ``"config_error": str`` when the ``pyproject.toml`` that applies, or
  the settings, are invalid (the findings then use the defaults and the valid settings).
  The configuration is ``[tool.tfcoach]`` of the nearest ``pyproject.toml`` above the
  path's folder (the CLI's and the language server's resolver), with the settings' lists
  replacing the file's where given; a path that is absolute, has a ``..`` part or leads
  out of the root through a link is a 400
- ``POST tfcoach/api/hover`` ``{"cells": [str, ...], "cell": int, "line": int, "character": int}``
  (0-based line in the cell, UTF-16 character as the browser counts) ->
  ``{"card": null}`` or ``{"card": {title, receiver, bound_to, bound_where, written,
  summary, pitfall, course}, "range": {"start", "end"}}`` (UTF-16 offsets on that line)
- ``GET  tfcoach/api/course`` -> ``{"modules": [{id, title, sections: [{id, title, url}]}]}``
- ``GET  tfcoach/api/course/{module_id}`` -> ``{id, title, markdown, sections, notebook}``
- ``POST tfcoach/api/course/{module_id}/notebook`` ``{"directory": str}``
  -> ``{"path": str, "created": bool}``: copies the module's notebook into that
  folder of the server's contents (if no file of that name is there) and says where

Errors are JSON ``{"message", "reason"}`` like every jupyter_server API error. A body
nested deeper than Python's JSON decoder goes (``[[[...]]]``) is a 400 like any other
body that is not the expected JSON.
Authentication and XSRF come from ``APIHandler`` (403 without a valid token or
login cookie; POST with a cookie but no XSRF token: 403). Course modules are
looked up by id among the packaged ones. The paths routes take stay inside the
server's root: the folder a course notebook is copied into goes through the
server's contents manager (as any Lab file save), and analyze's ``path`` is only
used to find the ``pyproject.toml`` that applies (see ``_notebook_location``).
"""

from __future__ import annotations

import json
import os
from http import HTTPStatus
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import nbformat
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import ensure_async, url_path_join
from tornado import web
from tornado.ioloop import IOLoop

from jupyterlab_tfcoach.analysis import (
    Config,
    ConfigError,
    check_cells,
    check_source,
)
from jupyterlab_tfcoach.analysis.config import parse_codes
from jupyterlab_tfcoach.analysis.positions import split_lines
from jupyterlab_tfcoach.analysis.project_config import default_resolver
from jupyterlab_tfcoach.course import (
    NoNotebookError,
    UnknownModuleError,
    get_course,
    notebook_for,
)
from jupyterlab_tfcoach.hover import index_cells
from jupyterlab_tfcoach.server.kernels import ReportHub

MAX_ANALYZE_BYTES = 1024 * 1024  # 1 MiB, checked before the body is parsed
_BAD_BODY = object()  # json_body() already answered with an error
_TOO_DEEP = "Request body is not valid JSON: arrays or objects are nested too deeply"
SETTINGS_HUB = "tfcoach_hub"
SETTINGS_COURSE_BASE_URL = "tfcoach_course_base_url"


class _TfCoachHandler(APIHandler):
    auth_resource = "tfcoach"

    def json_error(self, status: int, message: str) -> None:
        """Finish with a JSON error body (never echoes HTML)."""
        self.set_status(status)
        self.finish(json.dumps({"message": message, "reason": HTTPStatus(status).phrase}))

    def json_body(self) -> Any:
        """The request's JSON, or ``_BAD_BODY`` once a 400/413 has been sent. The size
        is checked before the body is parsed."""
        declared = self.request.headers.get("Content-Length")
        if declared is not None:
            try:
                declared_size = int(declared)
            except ValueError:
                self.json_error(400, "Content-Length is not a number")
                return _BAD_BODY
            if declared_size > MAX_ANALYZE_BYTES:
                self.json_error(413, _too_large(declared_size))
                return _BAD_BODY
        body = self.request.body
        if len(body) > MAX_ANALYZE_BYTES:
            self.json_error(413, _too_large(len(body)))
            return _BAD_BODY
        try:
            return json.loads(body.decode("utf-8"))
        except UnicodeDecodeError:
            self.json_error(400, "Request body is not UTF-8")
        except json.JSONDecodeError as error:
            self.json_error(400, f"Request body is not valid JSON: {error}")
        except RecursionError:
            self.json_error(400, _TOO_DEEP)
        return _BAD_BODY

    @property
    def course_base_url(self) -> str | None:
        value = self.settings.get(SETTINGS_COURSE_BASE_URL)
        return value or None


class ReportsHandler(_TfCoachHandler):
    # Reports are kernel output: authorize them like kernel reads.
    auth_resource = "kernels"

    @web.authenticated
    @authorized
    def get(self, kernel_id: str) -> None:
        hub: ReportHub = self.settings[SETTINGS_HUB]
        reports = hub.reports(kernel_id)
        if reports is None:
            self.json_error(404, f"No kernel with id {_quote(kernel_id)}")
            return
        self.finish(json.dumps({"reports": reports}))


class AnalyzeHandler(_TfCoachHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        payload = self.json_body()
        if payload is _BAD_BODY:
            return
        problem = _shape_problem(payload)
        if problem is not None:
            self.json_error(400, problem)
            return
        root = self._root_dir()
        try:
            notebook = _notebook_location(root, payload.get("path"))
        except ValueError as error:
            self.json_error(400, str(error))
            return
        # Reading the configuration and the analysis (pure CPU work on up to 1 MiB) run
        # in a thread: keep the event loop (and every kernel's messages) moving.
        result = await IOLoop.current().run_in_executor(
            None, _analyze_configured, payload, self.course_base_url, root, notebook
        )
        self.finish(json.dumps(result))

    def _root_dir(self) -> Path | None:
        """The folder contents paths are relative to (None: not a local file system)."""
        root = getattr(self.contents_manager, "root_dir", None)
        if not isinstance(root, str) or not root:
            root = self.settings.get("server_root_dir")
        if not isinstance(root, str) or not root:
            return None
        try:
            return Path(os.path.expanduser(root)).resolve()
        except (OSError, RuntimeError):
            return None


class HoverHandler(_TfCoachHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        payload = self.json_body()
        if payload is _BAD_BODY:
            return
        problem = _hover_problem(payload)
        if problem is not None:
            self.json_error(400, problem)
            return
        cells: tuple[str, ...] = tuple(payload["cells"])
        cell, line = payload["cell"], payload["line"]
        lines = split_lines(cells[cell]) if cell < len(cells) else []
        if line >= len(lines):
            self.finish(json.dumps({"card": None}))
            return
        text = lines[line]
        column = _code_points(text, payload["character"])
        # One parse per notebook version (the hovers between two edits share it), off the
        # event loop: a large notebook must not stall the server's other requests.
        found = await IOLoop.current().run_in_executor(
            None, lambda: index_cells(cells).card_at(cell, line, column)
        )
        if found is None:
            self.finish(json.dumps({"card": None}))
            return
        card, start, end = found
        course = get_course().ref(card.section_id, self.course_base_url)
        self.finish(
            json.dumps(
                {
                    "card": {**card.to_json(), "course": course},
                    "range": {"start": _utf16(text[:start]), "end": _utf16(text[:end])},
                }
            )
        )


class CourseHandler(_TfCoachHandler):
    @web.authenticated
    @authorized
    def get(self) -> None:
        course = get_course()
        base_url = self.course_base_url
        modules = [
            {
                "id": module.id,
                "title": module.title,
                "sections": [_section_json(s.id, base_url) for s in module.sections],
                "notebook": module.notebook.name if module.notebook else None,
            }
            for module in course.modules
        ]
        self.finish(json.dumps({"modules": modules}))


class CourseModuleHandler(_TfCoachHandler):
    @web.authenticated
    @authorized
    def get(self, module_id: str) -> None:
        course = get_course()
        try:
            module = course.module(module_id)
        except UnknownModuleError:
            self.json_error(404, f"No course module with id {_quote(module_id)}")
            return
        base_url = self.course_base_url
        self.finish(
            json.dumps(
                {
                    "id": module.id,
                    "title": module.title,
                    "markdown": module.markdown,
                    "sections": [_section_json(s.id, base_url) for s in module.sections],
                    "notebook": module.notebook.name if module.notebook else None,
                }
            )
        )


class CourseNotebookHandler(_TfCoachHandler):
    # It writes a file into the user's folders: authorize it like a contents write.
    auth_resource = "contents"

    @web.authenticated
    @authorized
    async def post(self, module_id: str) -> None:
        try:
            packaged = notebook_for(module_id)
        except UnknownModuleError:
            self.json_error(404, f"No course module with id {_quote(module_id)}")
            return
        except NoNotebookError:
            self.json_error(404, f"The course module {_quote(module_id)} has no notebook")
            return
        try:
            payload = json.loads(self.request.body.decode("utf-8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError):
            self.json_error(400, 'Expected a JSON object {"directory": str}')
            return
        except RecursionError:
            self.json_error(400, _TOO_DEEP)
            return
        directory = payload.get("directory", "") if isinstance(payload, dict) else None
        if not isinstance(directory, str):
            self.json_error(400, '"directory" must be a string (a folder of the server\'s root)')
            return
        directory = directory.strip("/")
        path = f"{directory}/{packaged.name}" if directory else packaged.name
        contents = self.contents_manager
        try:
            if not await ensure_async(contents.dir_exists(directory)):
                self.json_error(404, f"No folder {_quote(directory)}")
                return
            # A copy the learner already has (and may have edited) is opened as it is.
            created = not await ensure_async(contents.file_exists(path))
            if created:
                notebook = nbformat.read(packaged, as_version=nbformat.NO_CONVERT)
                model = {"type": "notebook", "format": "json", "content": notebook}
                await ensure_async(contents.save(model, path))
        except web.HTTPError as error:
            self.json_error(error.status_code, error.log_message or error.reason or "")
            return
        self.finish(json.dumps({"path": path, "created": created}))


def _section_json(section_id: str, base_url: str | None) -> dict[str, str]:
    ref = get_course().ref(section_id, base_url)
    return {"id": ref["section"], "title": ref["title"], "url": ref["url"]}


def _shape_problem(payload: Any) -> str | None:
    """Why the analyze payload has the wrong shape, or None."""
    if not isinstance(payload, dict):
        return 'Expected a JSON object {"source": str} or {"cells": [str, ...]}'
    has_source, has_cells = "source" in payload, "cells" in payload
    if has_source == has_cells:
        return 'Expected exactly one of "source" (a string) or "cells" (a list of strings)'
    if has_source and not isinstance(payload["source"], str):
        return '"source" must be a string'
    if has_cells:
        cells = payload["cells"]
        if not isinstance(cells, list):
            return '"cells" must be a list of strings'
        for index, cell in enumerate(cells):
            if not isinstance(cell, str):
                return f'"cells"[{index}] must be a string'
    if payload.get("path") is not None and not isinstance(payload["path"], str):
        return "\"path\" must be a string (the notebook's path in the server's contents)"
    settings = payload.get("settings")
    if settings is not None:
        if not isinstance(settings, dict):
            return '"settings" must be an object {"select": [str, ...], "ignore": [str, ...]}'
        for key in ("select", "ignore"):
            value = settings.get(key)
            if value is not None and (
                not isinstance(value, list) or not all(isinstance(c, str) for c in value)
            ):
                return f'"settings"."{key}" must be a list of rule codes (strings)'
    return None


def _notebook_location(root: Path | None, path: Any) -> Path | None:
    """The real file a contents path names, or None (no path, or no local root).

    Raises ``ValueError`` (a 400) for a path that is absolute, has a ``..`` part, has a
    NUL, or resolves (through links) to somewhere outside the root. The file need not
    exist: a notebook not saved yet takes the configuration of its folder.
    """
    if not isinstance(path, str) or not path:
        return None
    shown = _quote(path)
    if "\x00" in path:
        raise ValueError(f'"path" {shown} contains a NUL character')
    if (
        path.startswith(("/", "\\"))
        or PureWindowsPath(path).drive
        or PurePosixPath(path).is_absolute()
    ):
        raise ValueError(
            f'"path" {shown} must be relative to the server\'s root (a contents path such as '
            '"folder/notebook.ipynb"), not absolute'
        )
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        raise ValueError(
            f'"path" {shown} must not contain ".." (it must stay in the server\'s root)'
        )
    if root is None:
        return None
    try:
        real = (root / path).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise ValueError(f'"path" {shown} cannot be resolved (a symlink loop?)') from None
    if real != root and root not in real.parents:
        raise ValueError(f'"path" {shown} leads outside the server\'s root (through a link)')
    return real


def _hover_problem(payload: Any) -> str | None:
    """Why the hover payload has the wrong shape, or None."""
    expected = 'Expected {"cells": [str, ...], "cell": int, "line": int, "character": int}'
    if not isinstance(payload, dict) or not isinstance(payload.get("cells"), list):
        return expected
    if not all(isinstance(cell, str) for cell in payload["cells"]):
        return '"cells" must be a list of strings'
    for key in ("cell", "line", "character"):
        value = payload.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f'"{key}" must be a non-negative integer'
    return None


def _utf16(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (the browser's string offsets)."""
    return len(text.encode("utf-16-le")) // 2


def _code_points(line: str, character: int) -> int:
    """A UTF-16 offset on ``line`` -> a code-point index."""
    count = 0
    for index, char in enumerate(line):
        if count >= character:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def _configuration(
    payload: dict[str, Any], root: Path | None, notebook: Path | None
) -> tuple[Config, list[str]]:
    """The project's ``[tool.tfcoach]`` at ``notebook`` (through the core resolver), with
    the page's settings on top; and the problems found (shown to the user)."""
    problems: list[str] = []
    config = Config()
    if notebook is not None:
        try:
            config = default_resolver().config_for(notebook)
        except ConfigError as error:
            problems.append(f"ignoring [tool.tfcoach]: {_relative_message(error, root)}")
    settings = payload.get("settings") or {}
    overrides: dict[str, tuple[str, ...] | None] = {}
    for key in ("select", "ignore"):
        parsed = parse_codes(settings.get(key), f"settings: {key}")
        problems.extend(f"{problem}; ignored" for problem in parsed.problems)
        overrides[key] = parsed.codes
    return config.overridden(select=overrides["select"], ignore=overrides["ignore"]), problems


def _relative_message(error: ConfigError, root: Path | None) -> str:
    """The resolver's message (it starts with the file's absolute path), with the path
    relative to the server's root, as the user knows it, when the file is inside it."""
    message = str(error)
    if root is None or error.version is None:
        return message
    path_text = str(error.version[0])
    if not message.startswith(path_text):
        return message
    try:
        relative = Path(path_text).relative_to(root)
    except ValueError:
        return message
    return relative.as_posix() + message[len(path_text) :]


def _analyze_configured(
    payload: dict[str, Any], base_url: str | None, root: Path | None, notebook: Path | None
) -> dict[str, Any]:
    config, problems = _configuration(payload, root, notebook)
    # The server's own course_base_url is the front end's setting: it wins over the file's.
    answer = _analyze(payload, base_url or config.course_base_url, config=config)
    if problems:
        answer["config_error"] = "\n".join(problems)
    return answer


def _analyze(
    payload: dict[str, Any],
    base_url: str | None,
    budget_seconds: float = 10.0,
    config: Config | None = None,
) -> dict[str, Any]:
    """Findings as CLI JSON objects, plus where the code does not parse.

    Code being edited often does not parse: that is a result, not a bad request.
    ``syntax_errors`` lists it (``cell`` null for ``source``; for ``cells``, the
    cells left out while the others were still analysed).

    The analysis has ``budget_seconds`` (it runs in a thread of the shared server):
    past it, the findings made so far are returned with ``"notes": ["analysis stopped
    after N ms ..."]``; ``notes`` is absent otherwise.
    """
    from jupyterlab_tfcoach.analysis.budget import time_budget

    with time_budget(budget_seconds) as budget:
        if "source" in payload:
            result = check_source(payload["source"], config)
        else:
            result = check_cells(payload["cells"], config)
    course = get_course()
    answer: dict[str, Any] = {
        "findings": [f.to_json(course.ref(f.section_id, base_url)) for f in result.findings],
        "syntax_errors": [problem.to_json() for problem in result.syntax_errors],
    }
    if budget.note is not None:
        answer["notes"] = [budget.note]
    return answer


def _too_large(size: int) -> str:
    return f"Request body of {size} bytes is over the limit of {MAX_ANALYZE_BYTES} bytes (1 MiB)"


def _quote(value: str, limit: int = 80) -> str:
    """An id from the URL, shortened and JSON-quoted for an error message."""
    return json.dumps(value[:limit])


def handlers(base_url: str) -> list[tuple[str, type[APIHandler]]]:
    def route(*parts: str) -> str:
        return url_path_join(base_url, "tfcoach", "api", *parts)

    return [
        (route("kernels", "(?P<kernel_id>[^/]+)", "reports"), ReportsHandler),
        (route("analyze"), AnalyzeHandler),
        (route("hover"), HoverHandler),
        (route("course"), CourseHandler),
        (route("course", "(?P<module_id>[^/]+)"), CourseModuleHandler),
        (route("course", "(?P<module_id>[^/]+)", "notebook"), CourseNotebookHandler),
    ]
