"""The REST routes under ``tfcoach/api/`` (all under the server's ``base_url``, all
authenticated). What each route takes and answers, and every status code, is described
once, in ``docs/rest.md``; this module only adapts HTTP to the core (``work.py`` runs the
analyses and hovers, in the lanes of ``lanes.py``).

Errors are JSON ``{"message", "reason"}`` like every jupyter_server API error.
Authentication and XSRF come from ``APIHandler``. The paths the routes take stay inside
the server's root: the folder a course notebook is copied into goes through the server's
contents manager (as any Lab file save), and analyze's ``path`` is only used to find the
``pyproject.toml`` that applies (see ``_notebook_location``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import nbformat
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import ensure_async, url_path_join
from tornado import web
from tornado.ioloop import IOLoop

from jupyterlab_tfcoach.analysis import Config
from jupyterlab_tfcoach.analysis.configuration import RawOverrides, configuration_for
from jupyterlab_tfcoach.analysis.positions import (
    code_points_to_units,
    split_lines,
    units_to_code_points,
)
from jupyterlab_tfcoach.course import (
    NoNotebookError,
    UnknownModuleError,
    get_course,
    notebook_for,
)
from jupyterlab_tfcoach.server import lanes, work
from jupyterlab_tfcoach.server.kernels import ReportHub

MAX_ANALYZE_BYTES = 1024 * 1024  # 1 MiB, checked before the body is parsed
# A notebook's contents path, checked before it is used: PATH_MAX's length, and
# more folders than any project has (each part costs a lookup when resolved).
MAX_PATH_CHARS = 4096
MAX_PATH_PARTS = 256
BODY_REFUSED = object()  # json_body() already answered with an error
# Smaller bodies are decoded on the event loop: a thread hop costs more than they do.
DECODE_ON_LOOP_BYTES = 64 * 1024
_TOO_DEEP = "Request body is not valid JSON: arrays or objects are nested too deeply"
_WORKER_DIED = "The analysis worker process ended unexpectedly (out of memory?); try again"
SETTINGS_HUB = "tfcoach_hub"
SETTINGS_COURSE_BASE_URL = "tfcoach_course_base_url"
SETTINGS_STUDY_FEED = "tfcoach_study_feed"


class TfCoachHandler(APIHandler):
    """The base of every tfcoach route (here and ``study_routes.py``): its auth resource,
    JSON errors and a JSON body read within bounds."""

    auth_resource = "tfcoach"

    def json_error(self, status: int, message: str) -> None:
        """Finish with a JSON error body (never echoes HTML)."""
        self.set_status(status)
        self.finish(json.dumps({"message": message, "reason": HTTPStatus(status).phrase}))

    async def json_body(self) -> Any:
        """The request's JSON, or ``BODY_REFUSED`` once a 400/413 has been sent. The size
        is checked before the body is parsed; a large body is decoded in a thread (about
        3 ms per MiB that the event loop, serving every kernel, would otherwise wait)."""
        declared = self.request.headers.get("Content-Length")
        if declared is not None:
            try:
                declared_size = int(declared)
            except ValueError:
                self.json_error(400, "Content-Length is not a number")
                return BODY_REFUSED
            if declared_size > MAX_ANALYZE_BYTES:
                self.json_error(413, _too_large(declared_size))
                return BODY_REFUSED
        body = self.request.body
        if len(body) > MAX_ANALYZE_BYTES:
            self.json_error(413, _too_large(len(body)))
            return BODY_REFUSED
        if len(body) <= DECODE_ON_LOOP_BYTES:
            decoded = _decoded_json(body)
        else:
            decoded = await IOLoop.current().run_in_executor(None, _decoded_json, body)
        if isinstance(decoded, _BodyProblem):
            self.json_error(400, decoded.message)
            return BODY_REFUSED
        return decoded

    @property
    def course_base_url(self) -> str | None:
        value = self.settings.get(SETTINGS_COURSE_BASE_URL)
        return value or None


class ReportsHandler(TfCoachHandler):
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


class AnalyzeHandler(TfCoachHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        payload = await self.json_body()
        if payload is BODY_REFUSED:
            return
        problem = _shape_problem(payload)
        if problem is not None:
            self.json_error(400, problem)
            return
        path = payload.get("path")
        try:
            _check_path(path)  # the bounds, before any work on it
        except ValueError as error:
            self.json_error(400, str(error))
            return
        # Resolving the root and the path follows links on the file system, which can take
        # long (a slow disk, a path through many links): in a thread, not on the event loop
        # that serves every other request and every kernel's messages.
        try:
            root, notebook = await IOLoop.current().run_in_executor(
                None, _located, self._root_setting(), path
            )
        except ValueError as error:
            self.json_error(400, str(error))
            return
        # Reading the configuration and the analysis (pure CPU work on up to 1 MiB) run
        # off the event loop, the analysis in the lane for its size (``lanes.py``): the
        # loop keeps serving every other request and every kernel's messages.
        try:
            answer = await _analyze_configured(
                payload, self.course_base_url, root, notebook, _arrived(self)
            )
        except lanes.WorkerDiedError:
            self.json_error(503, _WORKER_DIED)
            return
        self.finish(answer)
        feed = self.settings.get(SETTINGS_STUDY_FEED)
        if feed is not None:
            try:
                feed.from_analysis(answer, path)  # in a thread: the answer is already sent
            except Exception as error:
                self.log.warning("tfcoach: study feed failed on an analysis: %s", error)

    def _root_setting(self) -> str | None:
        """The folder contents paths are relative to, as configured (None: not a local
        file system); :func:`_resolved_root` finds where it really is."""
        root = getattr(self.contents_manager, "root_dir", None)
        if not isinstance(root, str) or not root:
            root = self.settings.get("server_root_dir")
        if not isinstance(root, str) or not root:
            return None
        return root


class HoverHandler(TfCoachHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        payload = await self.json_body()
        if payload is BODY_REFUSED:
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
        column = units_to_code_points(text, payload["character"])
        # One parse per notebook version (the hovers between two edits share it), off the
        # event loop, in the lane for the notebook's size (``lanes.py``); past its budget
        # the answer is no card.
        arrived = _arrived(self)
        try:
            found = await lanes.hover_lane(sum(map(len, cells))).run(
                work.hover_card,
                cells,
                cell,
                line,
                column,
                work.HOVER_BUDGET_S,
                arrived,
                deadline=_deadline(arrived, work.HOVER_BUDGET_S),
                when_late=lambda started: None,
            )
        except lanes.WorkerDiedError:
            found = None  # the index's worker died (out of memory?): no card
        if found is None:
            self.finish(json.dumps({"card": None}))
            return
        card, start, end = found
        course = get_course().ref(card.section_id, self.course_base_url)
        self.finish(
            json.dumps(
                {
                    "card": {**card.to_json(), "course": course},
                    "range": {
                        "start": code_points_to_units(text, start),
                        "end": code_points_to_units(text, end),
                    },
                }
            )
        )


class CourseHandler(TfCoachHandler):
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


class CourseModuleHandler(TfCoachHandler):
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


class CourseNotebookHandler(TfCoachHandler):
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


def _check_path(path: Any) -> None:
    """Raise ``ValueError`` (a 400) for a contents path over the bounds (more than
    ``MAX_PATH_CHARS`` characters or ``MAX_PATH_PARTS`` parts), or that is absolute,
    has a ``..`` part or a NUL. Only looks at the string, the length first: a path of
    any size is refused in time proportional to the bound, not to the path.
    """
    if not isinstance(path, str) or not path:
        return
    if len(path) > MAX_PATH_CHARS:
        raise ValueError(
            f'"path" has {len(path)} characters, over the limit of {MAX_PATH_CHARS} for a '
            "notebook's contents path"
        )
    parts = path.count("/") + path.count("\\") + 1
    if parts > MAX_PATH_PARTS:
        raise ValueError(
            f'"path" has {parts} parts (folders and the file name), over the limit of '
            f"{MAX_PATH_PARTS} for a notebook's contents path"
        )
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
    if ".." in path.replace("\\", "/").split("/"):
        raise ValueError(
            f'"path" {shown} must not contain ".." (it must stay in the server\'s root)'
        )


def _resolved_root(setting: str | None) -> Path | None:
    """The server's root folder, links resolved (None: none, or it cannot be resolved)."""
    if setting is None:
        return None
    try:
        return Path(os.path.expanduser(setting)).resolve()
    except (OSError, RuntimeError):
        return None


def _located(root_setting: str | None, path: Any) -> tuple[Path | None, Path | None]:
    """The resolved root and the real file ``path`` names in it (file system work: run
    it off the event loop). ``ValueError`` as :func:`_notebook_location`."""
    root = _resolved_root(root_setting)
    return root, _notebook_location(root, path)


def _notebook_location(root: Path | None, path: Any) -> Path | None:
    """The real file a contents path names, or None (no path, or no local root).

    Raises ``ValueError`` (a 400) for a path :func:`_check_path` refuses, or that
    resolves (through links) to somewhere outside the root. The file need not exist: a
    notebook not saved yet takes the configuration of its folder.
    """
    _check_path(path)
    if not isinstance(path, str) or not path or root is None:
        return None
    shown = _quote(path)
    try:
        real = (root / path).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise ValueError(f'"path" {shown} cannot be resolved (a symlink loop?)') from None
    if not real.is_relative_to(root):
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


def _configuration(
    payload: dict[str, Any], base_url: str | None, root: Path | None, notebook: Path | None
) -> tuple[Config, list[str]]:
    """The configuration at ``notebook``, with the page's settings and the server's
    course base URL on top, and its problems (shown to the user): the core's one path
    (``analysis/configuration.py``). Only the root's pyproject files count: one above it
    (in /tmp, a shared folder) is not the project's, and a link out of the root is not
    read; messages name the file relative to the root."""
    settings = RawOverrides(payload.get("settings") or {}, base_url, name="settings: {key}")
    configuration = configuration_for(notebook, root, settings)
    return configuration.config, configuration.problems


def _arrived(handler: web.RequestHandler) -> float:
    """When the request arrived (wall clock, as ``work.py`` counts budgets): tornado's
    clock starts when the request's headers were read, so the time its body took to come
    in, and any wait since, count against the budget."""
    return time.time() - handler.request.request_time()


def _deadline(arrived: float, budget_seconds: float) -> float:
    """The ``time.monotonic()`` time a request that ``arrived`` runs out of its budget."""
    return time.monotonic() - work.waited_since(arrived) + budget_seconds


async def _analyze_configured(
    payload: dict[str, Any],
    base_url: str | None,
    root: Path | None,
    notebook: Path | None,
    arrived: float,
) -> str:
    """The analyze route's answer, as JSON text. The configuration is read in a thread
    (files), the analysis runs in the lane for the code's size, within the analysis
    budget from ``arrived``: a request still waiting for a worker at its deadline gets
    the "not started" note, one still running past the grace the "stopped" note
    (``work.late_json``)."""
    budget_seconds = work.ANALYZE_BUDGET_S
    # The server's own course_base_url is the front end's setting: it wins over the file's.
    config, problems = await IOLoop.current().run_in_executor(
        None, _configuration, payload, base_url, root, notebook
    )
    code = {"source": payload["source"]} if "source" in payload else {"cells": payload["cells"]}
    return await lanes.analysis_lane(lanes.code_chars(code)).run(
        work.analysis_json,
        code,
        config.course_base_url,
        config,
        problems,
        budget_seconds,
        arrived,
        deadline=_deadline(arrived, budget_seconds),
        when_late=lambda started: work.late_json(started, problems, budget_seconds, arrived),
        # A running analysis stops at its next budget check and answers what it found.
        grace=work.ANALYZE_GRACE_S,
    )


def _analyze(
    payload: dict[str, Any],
    base_url: str | None,
    budget_seconds: float = work.ANALYZE_BUDGET_S,
    config: Config | None = None,
) -> dict[str, Any]:
    """Findings as CLI JSON objects, plus where the code does not parse (the route's
    answer without its configuration problems; see ``work.analysis_answer``).

    Code being edited often does not parse: that is a result, not a bad request.
    ``syntax_errors`` lists it (``cell`` null for ``source``; for ``cells``, the
    cells left out while the others were still analysed).

    The analysis has ``budget_seconds``: past it, the findings made so far are returned
    with ``"notes": ["analysis stopped after N ms ..."]``; ``notes`` is absent otherwise.
    """
    return work.analysis_answer(payload, base_url, config, budget_seconds)


@dataclass(frozen=True)
class _BodyProblem:
    """Why a request body is not JSON (the 400's message)."""

    message: str


def _decoded_json(body: bytes) -> Any:
    """``body`` as JSON, or the :class:`_BodyProblem` that says why it is not (thread-safe:
    nothing but the bytes is touched, so it may run off the event loop)."""
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return _BodyProblem("Request body is not UTF-8")
    except json.JSONDecodeError as error:
        return _BodyProblem(f"Request body is not valid JSON: {error}")
    except RecursionError:
        return _BodyProblem(_TOO_DEEP)


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
