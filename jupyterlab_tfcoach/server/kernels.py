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
are stored and forwarded as data.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import zmq
from zmq.eventloop.zmqstream import ZMQStream

KERNEL_ACTIONS_SCHEMA_ID = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
REPORT_SCHEMA_ID = "https://events.jupyter.org/tfcoach/report/v1"
REPORT_SCHEMA_PATH = Path(__file__).parent / "events" / "report.yaml"
REPORT_MSG_TYPE = "tfcoach_report"
EXTENSION_MODULE = "jupyterlab_tfcoach"

# Evaluated as a user expression of an otherwise empty, silent execute_request:
# no output, no history entry, no execution count, and a failure (e.g. the
# package is not importable in that kernel's environment) comes back in the
# reply instead of as a traceback on iopub.
# ``load_for_panel`` loads the monitor through IPython's extension manager and tells it
# the tfcoach panel shows its reports (so it prints nothing under cells).


def bootstrap_expression(quiet_tensorflow_logs: bool = True) -> str:
    return (
        f"__import__({EXTENSION_MODULE!r}).load_for_panel(get_ipython(), "
        f"quiet_tensorflow_logs={quiet_tensorflow_logs!r})"
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


class MonitorState(str, enum.Enum):
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
    history: deque[dict[str, Any]]
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


@dataclass
class HubSettings:
    autoload: bool = True
    history_length: int = 200
    bootstrap_timeout: float = 60.0
    quiet_tensorflow_logs: bool = True


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
    _emitter: asyncio.Task[None] | None = None
    # Test and benchmark hook: called with (kernel_id, report) when a report is stored.
    on_report: Callable[[str, dict[str, Any]], None] | None = None

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
            watched = _Watched(kernel_id, deque(maxlen=self.settings.history_length))
            self._kernels[kernel_id] = watched
        self._close_channels(watched)
        session = kernel.session
        watched.iopub = _connect(kernel, "iopub")
        watched.iopub.on_recv(partial(self._on_iopub, watched, session))
        if self.settings.autoload:
            self._bootstrap(watched, kernel)
        else:
            watched.monitor = MonitorState.NOT_REQUESTED
            self._mark_panel(watched, kernel)

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

    def _on_iopub(self, watched: _Watched, session: Any, msg_list: list[bytes]) -> None:
        try:
            _idents, parts = session.feed_identities(msg_list)
            # Peek at the header first: most iopub traffic (streams, rich outputs)
            # is not ours and need not be verified and decoded.
            if session.unpack(parts[1]).get("msg_type") != REPORT_MSG_TYPE:
                return
            msg = session.deserialize(parts)
        except Exception as error:
            self.log.warning("tfcoach: bad iopub message from %s: %s", watched.kernel_id, error)
            return
        report = msg["content"]
        if not isinstance(report, dict):
            self.log.warning("tfcoach: ignoring a non-object report from %s", watched.kernel_id)
            return
        if self._kernels.get(watched.kernel_id) is not watched:
            return
        watched.history.append(report)
        if self.on_report is not None:
            self.on_report(watched.kernel_id, report)
        parent_msg_id = msg["parent_header"].get("msg_id")
        self._enqueue(_Pending(watched.kernel_id, report, parent_msg_id or None))

    def _enqueue(self, pending: _Pending) -> None:
        self._pending.append(pending)
        if self._emitter is None or self._emitter.done():
            self._emitter = asyncio.ensure_future(self._emit_pending())

    async def _emit_pending(self) -> None:
        # One drainer at a time keeps events in arrival order even though looking
        # up the session path awaits; it ends when nothing is left, so no task
        # outlives the server.
        while self._pending:
            pending = self._pending.popleft()
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

    async def _session_path(self, kernel_id: str) -> str | None:
        if self.session_manager is None:
            return None
        try:
            model = await self.session_manager.get_session(kernel_id=kernel_id)
        except Exception:  # no session for this kernel (e.g. started via /api/kernels)
            return None
        path = model.get("path") if isinstance(model, dict) else None
        return path if isinstance(path, str) else None


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
    curve_publickey = getattr(kernel, "curve_publickey", None)
    if curve_publickey is not None:
        # As jupyter_client's own connections when the kernel uses CURVE encryption.
        socket.curve_secretkey = kernel.curve_secretkey
        socket.curve_publickey = curve_publickey
        socket.curve_serverkey = curve_publickey
    if socket_type == zmq.SUB:
        socket.setsockopt(zmq.SUBSCRIBE, b"")
    socket.connect(url)
    return ZMQStream(socket)
