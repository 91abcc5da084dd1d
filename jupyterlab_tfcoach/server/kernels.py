"""Coach every kernel the server starts: bootstrap the monitor, collect its reports.

One ``ReportHub`` per server. It listens to jupyter_server's kernel action events
(``start`` / ``restart`` / ``shutdown``). For a Python kernel it

1. connects to the kernel's iopub (no browser needed) and keeps a bounded history
   of the ``tfcoach_report`` messages the monitor publishes after each cell;
2. unless ``TfCoach.autoload`` is off, sends one silent ``execute_request`` on
   the kernel's shell channel that loads the monitor (see ``BOOTSTRAP_EXPRESSION``);
3. emits every report on the server's jupyter_events bus (schema
   ``REPORT_SCHEMA_ID``) with the kernel id and, when a session uses the kernel,
   its path.

Closing the race with the user's first cell: the bootstrap is sent from the
kernel action listener, which runs before ``POST /api/kernels`` has answered,
on a socket that retries its connection every 10 ms while the kernel process
binds its ports. A client may only send an ``execute_request`` after the kernel
has answered its ``kernel_info_request`` (the kernel websocket waits for that),
by which time the bootstrap is already queued at the kernel, which runs shell
requests in arrival order. The reply's ``execution_count`` proves it: it is 0
when no user cell ran first, and the hub logs a warning otherwise.

Nothing a kernel sends is executed or interpreted beyond JSON decoding; reports
are stored and forwarded as data, and only once they have the documented shape
(``report_problem``) and are at most ``MAX_REPORT_BYTES`` serialized. The history
of a kernel is bounded by ``history_length`` reports and ``history_bytes`` bytes,
the queue of events not yet emitted by ``MAX_PENDING`` / ``MAX_PENDING_BYTES``.

The hub's iopub socket receives every message of the kernel (iopub topics are not
message types, and the monitor sends its reports without a topic, so there is no
narrower subscription; subscribing to the bare delimiter ``<IDS|MSG>`` would make
ipykernel 7 publish an ``iopub_welcome`` that every other subscriber, jupyter_server's
activity tracker included, rejects as badly signed). Messages are received without
copying their frames into Python (``zmq.Frame``), and only the header frame is
decoded (not verified, not the content) until the message type says it is a report.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import zmq
from zmq.eventloop.zmqstream import ZMQStream

import jupyterlab_tfcoach
from jupyterlab_tfcoach.course.links import CourseLinks

KERNEL_ACTIONS_SCHEMA_ID = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
REPORT_SCHEMA_ID = "https://events.jupyter.org/tfcoach/report/v1"
REPORT_SCHEMA_PATH = Path(__file__).parent / "events" / "report.yaml"
REPORT_MSG_TYPE = "tfcoach_report"
REPORT_SCHEMA = "tfcoach.report/1"
EXTENSION_MODULE = "jupyterlab_tfcoach"
# The folder the server imported the package from (site-packages, or the source tree of
# an editable install).
INSTALLED_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(jupyterlab_tfcoach.__file__)))

# Bounds on what kernels send (docs/report.md, "Limits").
MAX_REPORT_BYTES = 256 * 1024  # one report, as serialized on the wire
MAX_HISTORY_BYTES = 8 * 1024 * 1024  # the reports kept per kernel
MAX_PENDING = 1000  # reports received but not yet emitted on the event bus
MAX_PENDING_BYTES = 16 * 1024 * 1024

# Evaluated as a user expression of an otherwise empty, silent execute_request:
# no output, no history entry, no execution count, and a failure (e.g. the
# package is not importable in that kernel's environment) comes back in the
# reply instead of as a traceback on iopub.
# ``load_for_panel`` loads the monitor through IPython's extension manager and tells it
# the tfcoach panel shows its reports (so it prints nothing under cells).
#
# The package is imported from the kernel's own environment, never from its working
# directory: IPython puts '' (the working directory, where the user's notebooks and
# files are) on sys.path, so a plain ``import jupyterlab_tfcoach`` would run a
# ``jupyterlab_tfcoach.py`` or ``jupyterlab_tfcoach/`` lying next to the notebook. For
# the import of the package and its monitor only, sys.path loses '' and every relative
# entry and every entry that is the working directory (unless it is the folder the
# server itself imported the package from: an editable install opened in its own source
# tree); sys.path is restored right after, so the user's own imports are unchanged. An
# environment without the package still answers ``No module named 'jupyterlab_tfcoach'``
# (MonitorState.NOT_IMPORTABLE), as before: the server's copy is not loaded into another
# environment's interpreter. The code runs with a namespace of its own (nothing is
# added to the user's) and sees nothing of the user's but ``get_ipython()``.
_BOOTSTRAP_SOURCE = """
def load(name, installed_parent, quiet_tensorflow_logs, ipython):
    import importlib, os, sys

    cwd = os.path.realpath(os.getcwd())
    installed = os.path.realpath(installed_parent)

    def from_cwd(entry):
        if not isinstance(entry, str):
            return False
        if not os.path.isabs(entry):
            return True
        real = os.path.realpath(entry)
        return real == cwd and real != installed

    saved = list(sys.path)
    sys.path[:] = [entry for entry in saved if not from_cwd(entry)]
    try:
        importlib.import_module(name + ".monitor.extension")
    finally:
        sys.path[:] = saved
    return sys.modules[name].load_for_panel(ipython, quiet_tensorflow_logs=quiet_tensorflow_logs)
"""


def bootstrap_expression(
    quiet_tensorflow_logs: bool = True, installed_parent: str = INSTALLED_PARENT
) -> str:
    """A user expression that loads the monitor for the panel (see ``_BOOTSTRAP_SOURCE``)."""
    return (
        f"(lambda ns: exec({_BOOTSTRAP_SOURCE!r}, ns) or ns['load']("
        f"{EXTENSION_MODULE!r}, {installed_parent!r}, {quiet_tensorflow_logs!r}, "
        "get_ipython()))({})"
    )


BOOTSTRAP_EXPRESSION = bootstrap_expression()
# With autoload off the monitor is not loaded, but a user may load it by hand: this
# tells it (through the kernel's environment) that the panel shows its reports.
PANEL_ENV = "TFCOACH_PANEL"
PANEL_MARK_EXPRESSION = f"__import__('os').environ.__setitem__({PANEL_ENV!r}, '1')"
_LOADED_REPRS = frozenset({"'loaded'", "'already loaded'"})
_NOT_IMPORTABLE = f"No module named {EXTENSION_MODULE!r}"

# How often a not-yet-connected bootstrap/iopub socket retries while the kernel
# process starts (ZeroMQ's default is 100 ms).
_RECONNECT_INTERVAL_MS = 10
# The iopub socket lives as long as the kernel, so it is the one that keeps knocking on
# the ports of a kernel that died (before its restarter revives it or gives up, or for
# ever under a kernel manager without a restarter). ZeroMQ doubles its retry interval
# after each failed attempt, 10 -> 20 -> 40 -> 80 -> 100 ms, and starts again at 10 ms
# once a connection was made and lost. The cap stays small because the same retries run
# while a kernel starts: the iopub socket must be connected by the time the first cell's
# report is published (the kernel binds its ports well over 100 ms before it runs a
# cell). The bootstrap's shell socket keeps the fixed 10 ms: it is closed once the
# kernel answers, and the race with the user's first cell needs it early.
IOPUB_RECONNECT_MAX_MS = 100


class MonitorState(enum.StrEnum):
    """What the hub knows about the monitor in one kernel."""

    PENDING = "pending"  # bootstrap sent, no reply yet
    LOADED = "loaded"
    NOT_IMPORTABLE = "not-importable"
    FAILED = "failed"
    TIMEOUT = "timeout"
    NOT_REQUESTED = "not-requested"  # autoload is off


@dataclass
class _Watched:
    """The hub's state for one Python kernel."""

    kernel_id: str
    history: deque[dict[str, Any]] = field(default_factory=deque)
    sizes: deque[int] = field(default_factory=deque)  # serialized bytes of each report
    history_bytes: int = 0
    iopub: ZMQStream | None = None
    shell: ZMQStream | None = None
    bootstrap_msg_id: str | None = None
    bootstrap_timer: asyncio.TimerHandle | None = None
    monitor: MonitorState = MonitorState.NOT_REQUESTED
    cells_before_monitor: int = 0


@dataclass(frozen=True)
class _Pending:
    kernel_id: str
    report: dict[str, Any]
    parent_msg_id: str | None
    size: int


@dataclass
class HubSettings:
    autoload: bool = True
    history_length: int = 200
    bootstrap_timeout: float = 60.0
    quiet_tensorflow_logs: bool = True
    history_bytes: int = MAX_HISTORY_BYTES
    report_bytes: int = MAX_REPORT_BYTES
    # ``c.TfCoach.course_base_url``: the links of stored and emitted reports follow it.
    course_base_url: str | None = None


@dataclass
class ReportHub:
    """Per-server registry of coached kernels and their report histories."""

    kernel_manager: Any
    event_logger: Any
    session_manager: Any
    settings: HubSettings
    log: logging.Logger | logging.LoggerAdapter[Any]
    _kernels: dict[str, _Watched] = field(default_factory=dict)
    _pending: deque[_Pending] = field(default_factory=deque)
    _pending_bytes: int = 0
    _emitter: asyncio.Task[None] | None = None
    # Test and benchmark hook: called with (kernel_id, report) when a report is stored.
    on_report: Callable[[str, dict[str, Any]], None] | None = None
    # Called with (report, session path or None) once a report is emitted, on the loop: the
    # study feed (``study_feed.py``); whatever it raises is logged, never delivered.
    on_delivered: Callable[[dict[str, Any], str | None], None] | None = None

    # ------------------------------------------------------------------ queries

    def reports(self, kernel_id: str) -> list[dict[str, Any]] | None:
        """The kernel's reports, oldest first; ``None`` for a kernel the server doesn't run."""
        if kernel_id not in self.kernel_manager:
            self._forget(kernel_id)
            return None
        watched = self._kernels.get(kernel_id)
        return list(watched.history) if watched else []

    def monitor_state(self, kernel_id: str) -> MonitorState | None:
        watched = self._kernels.get(kernel_id)
        return watched.monitor if watched else None

    def cells_before_monitor(self, kernel_id: str) -> int:
        watched = self._kernels.get(kernel_id)
        return watched.cells_before_monitor if watched else 0

    def watched_kernels(self) -> list[str]:
        return list(self._kernels)

    # ------------------------------------------------------------- lifecycle

    async def on_kernel_action(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        """jupyter_events listener for ``kernel_actions/v1``."""
        kernel_id = data.get("kernel_id")
        if data.get("status") != "success" or not kernel_id:
            return
        action = data.get("action")
        if action in ("start", "restart"):
            # No await before attaching: the bootstrap must be queued before the
            # server answers the request that started the kernel.
            self.attach(kernel_id)
        elif action == "shutdown":
            self._forget(kernel_id)

    def attach(self, kernel_id: str) -> None:
        """(Re)connect to a kernel that just started or restarted and bootstrap it."""
        try:
            kernel = self.kernel_manager.get_kernel(kernel_id)
        except KeyError:
            return
        language = _kernel_language(kernel)
        if language is None or not language.lower().startswith("python"):
            self.log.info(
                "tfcoach: kernel %s (%s) is not a Python kernel (language %r): not coached",
                kernel_id,
                getattr(kernel, "kernel_name", "?"),
                language,
            )
            self._forget(kernel_id)
            return
        if not all(hasattr(kernel, name) for name in ("session", "context", "get_connection_info")):
            self.log.info(
                "tfcoach: kernel %s has no local ZeroMQ channels (remote kernel?): not coached",
                kernel_id,
            )
            return
        watched = self._kernels.get(kernel_id)
        if watched is None:
            watched = _Watched(kernel_id)
            self._kernels[kernel_id] = watched
            self._on_death(kernel, kernel_id)
        self._close_channels(watched)
        session = kernel.session
        watched.iopub = _connect(kernel, "iopub")
        # Frames are not copied: most of what arrives is never decoded.
        watched.iopub.on_recv(partial(self._on_iopub, watched, session), copy=False)
        if self.settings.autoload:
            self._bootstrap(watched, kernel)
        else:
            watched.monitor = MonitorState.NOT_REQUESTED
            self._mark_panel(watched, kernel)

    def _on_death(self, kernel: Any, kernel_id: str) -> None:
        """Stop reconnecting to a kernel its restarter gave up on.

        The hub's sockets retry their connection every 10 ms (that is what lets the
        bootstrap reach a starting kernel first); jupyter_server removes a kernel that
        died for good from its map without a ``shutdown`` event, so without this the
        sockets would go on trying to reach the dead ports for the server's lifetime.
        """
        add = getattr(kernel, "add_restart_callback", None)
        if add is None:
            return
        try:
            add(partial(self._forget, kernel_id), "dead")
        except Exception as error:  # a kernel manager without restart events
            self.log.debug("tfcoach: no restart callbacks for %s: %s", kernel_id, error)

    def _forget(self, kernel_id: str) -> None:
        watched = self._kernels.pop(kernel_id, None)
        if watched is not None:
            self._close_channels(watched)

    def _close_channels(self, watched: _Watched) -> None:
        if watched.bootstrap_timer is not None:
            watched.bootstrap_timer.cancel()
            watched.bootstrap_timer = None
        for stream in (watched.iopub, watched.shell):
            if stream is not None and not stream.closed():
                stream.close(linger=0)
        watched.iopub = None
        watched.shell = None
        watched.bootstrap_msg_id = None

    # ------------------------------------------------------------- bootstrap

    def _mark_panel(self, watched: _Watched, kernel: Any) -> None:
        """Fire and forget: the reply says nothing the hub needs."""
        shell = _connect(kernel, "shell")
        content = {
            "code": "",
            "silent": True,
            "store_history": False,
            "user_expressions": {"tfcoach_panel": PANEL_MARK_EXPRESSION},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        kernel.session.send(shell, "execute_request", content)
        shell.on_recv(lambda _message: None)
        watched.shell = shell

    def _bootstrap(self, watched: _Watched, kernel: Any) -> None:
        session = kernel.session
        shell = _connect(kernel, "shell")
        content = {
            "code": "",
            "silent": True,
            "store_history": False,
            "user_expressions": {
                "tfcoach": bootstrap_expression(self.settings.quiet_tensorflow_logs)
            },
            "allow_stdin": False,
            "stop_on_error": False,
        }
        msg = session.send(shell, "execute_request", content)
        watched.shell = shell
        watched.bootstrap_msg_id = msg["header"]["msg_id"]
        watched.monitor = MonitorState.PENDING
        watched.cells_before_monitor = 0
        shell.on_recv(partial(self._on_shell, watched, session))
        loop = asyncio.get_running_loop()
        watched.bootstrap_timer = loop.call_later(
            self.settings.bootstrap_timeout,
            self._bootstrap_timed_out,
            watched,
            watched.bootstrap_msg_id,
        )

    def _bootstrap_timed_out(self, watched: _Watched, msg_id: str) -> None:
        if watched.bootstrap_msg_id != msg_id:
            return
        watched.monitor = MonitorState.TIMEOUT
        self.log.warning(
            "tfcoach: kernel %s did not answer the monitor bootstrap within %.0f s",
            watched.kernel_id,
            self.settings.bootstrap_timeout,
        )
        if watched.shell is not None:
            watched.shell.close(linger=0)
            watched.shell = None
        watched.bootstrap_timer = None
        watched.bootstrap_msg_id = None

    def _on_shell(self, watched: _Watched, session: Any, msg_list: list[bytes]) -> None:
        try:
            _idents, parts = session.feed_identities(msg_list)
            msg = session.deserialize(parts)
        except Exception as error:
            self.log.warning("tfcoach: bad shell message from %s: %s", watched.kernel_id, error)
            return
        if (
            msg["msg_type"] != "execute_reply"
            or msg["parent_header"].get("msg_id") != watched.bootstrap_msg_id
        ):
            return
        if watched.bootstrap_timer is not None:
            watched.bootstrap_timer.cancel()
            watched.bootstrap_timer = None
        watched.bootstrap_msg_id = None
        if watched.shell is not None:
            watched.shell.close(linger=0)
            watched.shell = None
        self._judge_bootstrap(watched, msg["content"])

    def _judge_bootstrap(self, watched: _Watched, reply: dict[str, Any]) -> None:
        kernel_id = watched.kernel_id
        outcome = reply.get("user_expressions", {}).get("tfcoach")
        if reply.get("status") != "ok" or not isinstance(outcome, dict):
            watched.monitor = MonitorState.FAILED
            self.log.warning(
                "tfcoach: could not load the monitor in kernel %s (reply status %r, %s)",
                kernel_id,
                reply.get("status"),
                reply.get("evalue") or "no user_expressions support",
            )
            return
        if outcome.get("status") == "ok":
            text = outcome.get("data", {}).get("text/plain")
            if text in _LOADED_REPRS:
                watched.monitor = MonitorState.LOADED
                ran_before = reply.get("execution_count") or 0
                watched.cells_before_monitor = int(ran_before)
                if ran_before:
                    self.log.warning(
                        "tfcoach: %d cell(s) ran in kernel %s before the monitor loaded; "
                        "they have no report",
                        ran_before,
                        kernel_id,
                    )
                else:
                    self.log.info("tfcoach: monitor loaded in kernel %s", kernel_id)
                return
            watched.monitor = MonitorState.FAILED
            self.log.warning("tfcoach: loading the monitor in kernel %s said %s", kernel_id, text)
            return
        ename, evalue = outcome.get("ename"), outcome.get("evalue")
        if ename in ("ModuleNotFoundError", "ImportError") and evalue == _NOT_IMPORTABLE:
            watched.monitor = MonitorState.NOT_IMPORTABLE
            self.log.info(
                "tfcoach: %s is not importable in kernel %s: monitor not loaded",
                EXTENSION_MODULE,
                kernel_id,
            )
            return
        watched.monitor = MonitorState.FAILED
        self.log.warning(
            "tfcoach: loading the monitor in kernel %s failed: %s: %s", kernel_id, ename, evalue
        )

    # --------------------------------------------------------------- reports

    def _on_iopub(self, watched: _Watched, session: Any, frames: list[zmq.Frame]) -> None:
        kernel_id = watched.kernel_id
        try:
            _idents, parts = session.feed_identities(frames, copy=False)
            # Peek at the header first: most iopub traffic (streams, rich outputs) is
            # not ours, and its signature and content are neither checked nor decoded.
            if session.unpack(parts[1].bytes).get("msg_type") != REPORT_MSG_TYPE:
                return
            size = len(parts[4])  # the content frame: the report as serialized
            if size > self.settings.report_bytes:
                self.log.warning(
                    "tfcoach: dropped a report of %d bytes from kernel %s (limit %d)",
                    size,
                    kernel_id,
                    self.settings.report_bytes,
                )
                return
            msg = session.deserialize(parts, copy=False)
        except Exception as error:
            self.log.warning("tfcoach: bad iopub message from %s: %s", kernel_id, error)
            return
        report = msg["content"]
        problem = report_problem(report)
        if problem is not None:
            self.log.warning(
                "tfcoach: dropped a malformed report from kernel %s: %s", kernel_id, problem
            )
            return
        if self._kernels.get(kernel_id) is not watched:
            return
        report = with_course_links(report, self.settings.course_base_url)
        # What is kept and re-sent is the report with the server's links: count that.
        size = len(json.dumps(report, separators=(",", ":")).encode())
        self._store(watched, report, size)
        if self.on_report is not None:
            self.on_report(kernel_id, report)
        parent_msg_id = msg["parent_header"].get("msg_id")
        self._enqueue(_Pending(kernel_id, report, parent_msg_id or None, size))

    def _store(self, watched: _Watched, report: dict[str, Any], size: int) -> None:
        """Keep the newest reports within ``history_length`` reports and ``history_bytes``."""
        watched.history.append(report)
        watched.sizes.append(size)
        watched.history_bytes += size
        while len(watched.history) > 1 and (
            len(watched.history) > self.settings.history_length
            or watched.history_bytes > self.settings.history_bytes
        ):
            watched.history.popleft()
            watched.history_bytes -= watched.sizes.popleft()

    def _enqueue(self, pending: _Pending) -> None:
        self._pending.append(pending)
        self._pending_bytes += pending.size
        dropped = 0
        while len(self._pending) > 1 and (
            len(self._pending) > MAX_PENDING or self._pending_bytes > MAX_PENDING_BYTES
        ):
            self._pending_bytes -= self._pending.popleft().size
            dropped += 1
        if dropped:
            self.log.warning(
                "tfcoach: %d report event(s) dropped: the event bus is behind", dropped
            )
        if self._emitter is None or self._emitter.done():
            self._emitter = asyncio.ensure_future(self._emit_pending())

    async def _emit_pending(self) -> None:
        # One drainer at a time keeps events in arrival order even though looking
        # up the session path awaits; it ends when nothing is left, so no task
        # outlives the server.
        while self._pending:
            pending = self._pending.popleft()
            self._pending_bytes -= pending.size
            data: dict[str, Any] = {"kernel_id": pending.kernel_id, "report": pending.report}
            path = await self._session_path(pending.kernel_id)
            if path is not None:
                data["path"] = path
            if pending.parent_msg_id is not None:
                data["parent_msg_id"] = pending.parent_msg_id
            try:
                self.event_logger.emit(schema_id=REPORT_SCHEMA_ID, data=data)
            except Exception as error:
                self.log.warning(
                    "tfcoach: report from kernel %s not emitted: %s", pending.kernel_id, error
                )
            if self.on_delivered is not None:
                try:
                    self.on_delivered(pending.report, path)
                except Exception as error:
                    self.log.warning("tfcoach: study feed failed on a report: %s", error)

    async def _session_path(self, kernel_id: str) -> str | None:
        if self.session_manager is None:
            return None
        try:
            model = await self.session_manager.get_session(kernel_id=kernel_id)
        except Exception:  # no session for this kernel (e.g. started via /api/kernels)
            return None
        path = model.get("path") if isinstance(model, dict) else None
        return path if isinstance(path, str) else None


# Top-level keys of a report and the JSON types each may have (docs/report.md).
_REPORT_FIELDS: dict[str, tuple[type, ...]] = {
    "schema": (str,),
    "execution_count": (int, type(None)),
    "cell_id": (str, type(None)),
    "monitor_ms": (int, float),
    "traces": (list,),
    "variables": (list,),
    "error": (dict, type(None)),
    "notes": (list,),
}
# What the monitor computes from the entries (docs/report.md, "What a report means"):
# absent from reports of older monitors, of this type when present.
_OPTIONAL_REPORT_FIELDS: dict[str, tuple[type, ...]] = {
    "level": (str,),
    "summary": (str,),
    "counts": (dict,),
}


def report_problem(report: Any) -> str | None:
    """Why ``report`` is not a ``tfcoach.report/1`` report, or None.

    The shape the panel and the REST clients rely on: every top-level key with its
    type, traces and variables as objects, notes as objects (or strings, from older
    monitors); ``level``, ``summary`` and ``counts`` with their type when present. Extra
    keys are allowed.
    """
    if not isinstance(report, dict):
        return f"a JSON {type(report).__name__}, not an object"
    if report.get("schema") != REPORT_SCHEMA:
        return f"schema is not {REPORT_SCHEMA!r}"
    for key, types in _REPORT_FIELDS.items():
        if key not in report:
            return f"no {key!r}"
        value = report[key]
        if key == "execution_count" and _integral_float(value):
            continue  # JSON has one number type: 7.0 is the integer 7 (kept as 7)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"{key!r} is a {type(value).__name__}"
    for key, types in _OPTIONAL_REPORT_FIELDS.items():
        if key in report and not isinstance(report[key], types):
            return f"{key!r} is a {type(report[key]).__name__}"
    for key in ("traces", "variables"):
        if not all(isinstance(item, dict) for item in report[key]):
            return f"{key!r} holds something that is not an object"
    if not all(isinstance(item, (dict, str)) for item in report["notes"]):
        return "'notes' holds something that is neither an object nor a string"
    return None


def _integral_float(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


def with_course_links(report: dict[str, Any], base_url: str | None) -> dict[str, Any]:
    """``report`` with the server's link in each ``course`` object that names a section.

    The kernel names sections (``{"module", "section", "title"}``); the server knows the
    course base URL the page and the REST clients must follow, so links are made here,
    once, for the stored and the emitted report alike. A section this server's course
    does not know keeps what the kernel sent (a kernel with another tfcoach version),
    with ``url`` set to ``None`` when it had none.
    """
    links = CourseLinks(base_url)

    def linked(value: Any) -> Any:
        if not isinstance(value, dict) or not isinstance(value.get("section"), str):
            return value
        ref = links.ref(value["section"])
        if ref is not None:
            return ref
        return {**value, "url": value.get("url") if isinstance(value.get("url"), str) else None}

    def each(items: list[Any]) -> list[Any]:
        return [
            {**item, "course": linked(item.get("course"))}
            if isinstance(item, dict) and "course" in item
            else item
            for item in items
        ]

    enriched = dict(report)
    if _integral_float(report["execution_count"]):
        enriched["execution_count"] = int(report["execution_count"])
    enriched["traces"] = each(report["traces"])
    enriched["variables"] = each(report["variables"])
    enriched["notes"] = each(report["notes"])
    error = report["error"]
    if isinstance(error, dict) and "course" in error:
        enriched["error"] = {**error, "course": linked(error["course"])}
    return enriched


def _kernel_language(kernel: Any) -> str | None:
    try:
        spec = kernel.kernel_spec
    except Exception:
        return None
    language = getattr(spec, "language", None)
    return language if isinstance(language, str) else None


def _connect(kernel: Any, channel: str) -> ZMQStream:
    """A ZMQStream on one of the kernel's channels, retrying every 10 ms until it binds."""
    info = kernel.get_connection_info()
    port = info[f"{channel}_port"]
    transport, ip = info["transport"], info["ip"]
    url = f"tcp://{ip}:{port}" if transport == "tcp" else f"{transport}://{ip}-{port}"
    socket_type = zmq.SUB if channel == "iopub" else zmq.DEALER
    # ZMQStream needs a plain (not asyncio) socket, whatever the context makes by default.
    socket = kernel.context.socket(socket_type, socket_class=zmq.Socket)
    socket.linger = 1000
    socket.setsockopt(zmq.RECONNECT_IVL, _RECONNECT_INTERVAL_MS)
    if channel == "iopub":
        socket.setsockopt(zmq.RECONNECT_IVL_MAX, IOPUB_RECONNECT_MAX_MS)
    curve_publickey = getattr(kernel, "curve_publickey", None)
    if curve_publickey is not None:
        # As jupyter_client's own connections when the kernel uses CURVE encryption.
        socket.curve_secretkey = kernel.curve_secretkey
        socket.curve_publickey = curve_publickey
        socket.curve_serverkey = curve_publickey
    if socket_type == zmq.SUB:
        # Everything: the monitor's reports have no topic to subscribe to (see the module
        # docstring).
        socket.setsockopt(zmq.SUBSCRIBE, b"")
    socket.connect(url)
    return ZMQStream(socket)
