"""Test harnesses shared by the suite: a real IPython kernel, JupyterLab and Notebook 7.

Fixtures in ``conftest.py`` wrap these; the classes are importable so a test
module can build its own (e.g. a kernel with a different environment).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_TEST_TIMEOUT = 240.0


def quiet_env(**extra: str) -> dict[str, str]:
    """The environment for child processes: TensorFlow's C++ logging off."""
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra)
    return env


@dataclass
class Execution:
    """What one ``execute_request`` produced: its reply and every iopub message."""

    msg_id: str
    reply: dict[str, Any]
    iopub: list[dict[str, Any]] = field(default_factory=list)

    def of_type(self, msg_type: str) -> list[dict[str, Any]]:
        return [m for m in self.iopub if m["header"]["msg_type"] == msg_type]

    @property
    def stdout(self) -> str:
        return "".join(
            m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == "stdout"
        )

    @property
    def stderr(self) -> str:
        return "".join(
            m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == "stderr"
        )

    @property
    def reports(self) -> list[dict[str, Any]]:
        return [m["content"] for m in self.of_type("tfcoach_report")]

    @property
    def report(self) -> dict[str, Any]:
        found = self.reports
        assert len(found) == 1, f"expected one tfcoach_report, got {len(found)}: {self.iopub}"
        return found[0]


class KernelSession:
    """A real IPython kernel started with jupyter_client, driven cell by cell."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=env or quiet_env(), cwd=str(REPO_ROOT))
        self.client: BlockingKernelClient = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def execute(self, code: str, timeout: float = 120, **kwargs: Any) -> Execution:
        """Run ``code`` and collect every iopub message parented to it until idle."""
        msg_id = self.client.execute(code, **kwargs)
        execution = Execution(msg_id=msg_id, reply={})
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"cell did not finish in {timeout}s: {code[:80]!r}")
            try:
                msg = self.client.get_iopub_msg(timeout=remaining)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            execution.iopub.append(msg)
            if (
                msg["header"]["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"
            ):
                break
        # The shell channel may still hold other replies (e.g. the kernel_info_reply of
        # wait_for_ready): take the one answering this request.
        while True:
            remaining = max(deadline - time.monotonic(), 1.0)
            reply = self.client.get_shell_msg(timeout=remaining)
            if reply["parent_header"].get("msg_id") == msg_id:
                execution.reply = reply["content"]
                return execution

    def shutdown(self) -> None:
        try:
            self.client.stop_channels()
        finally:
            self.manager.shutdown_kernel(now=True)


# --------------------------------------------------------- kernels with the monitor

# All a cell that prints nothing may produce: anything else (streams, displays,
# comms, errors) from such a cell would be the monitor's doing.
QUIET_MESSAGE_TYPES = ("status", "execute_input", "tfcoach_report")
# The top-level keys of a report (docs/report.md, schema/report.schema.json).
REPORT_KEYS = (
    "schema",
    "execution_count",
    "cell_id",
    "monitor_ms",
    "traces",
    "variables",
    "error",
    "notes",
)
# What the monitor computes from those entries (docs/report.md, "What a report means"):
# optional in the schema, so that reports of older monitors still validate.
REPORT_MEANING_KEYS = ("level", "summary", "counts")
IMPORTS = "import numpy as np\nimport tensorflow as tf\nimport keras"
# Load the monitor as the server extension does (its reports go to the panel, none are
# shown under cells); ``%load_ext`` in a kernel no panel listens to shows them inline.
LOAD_FOR_PANEL = "__import__('jupyterlab_tfcoach').load_for_panel(get_ipython());"


def start_kernel(panel: bool = True) -> KernelSession:
    """A kernel that imports the package from the work tree. ``panel``: as the server
    extension starts kernels (its panel shows the reports, sent on iopub); otherwise a
    plain kernel, where the monitor shows reports under cells instead."""
    extra = {"PYTHONPATH": str(REPO_ROOT)}
    if panel:
        extra["TFCOACH_PANEL"] = "1"
    return KernelSession(env=quiet_env(**extra))


@dataclass(frozen=True)
class KernelSetup:
    """How a test module's ``kernel`` fixture (conftest.py) prepares its kernel.

    A module sets ``KERNEL = KernelSetup(...)``; without it the kernel gets the default.
    ``before_load`` runs first (e.g. TensorFlow imported before the monitor, as when the
    server loads it into a running kernel), then the monitor is loaded as the server
    extension loads it (unless ``load_monitor`` is false: the module's tests load it),
    then ``after_load``.
    """

    before_load: str = ""
    load_monitor: bool = True
    after_load: str = IMPORTS

    def start(self) -> Iterator[KernelSession]:
        session = start_kernel()
        try:
            if self.before_load:
                run(session, self.before_load)
            if self.load_monitor:
                run(session, LOAD_FOR_PANEL)
                if self.after_load:
                    run(session, self.after_load)
            yield session
        finally:
            session.shutdown()


def run(kernel: KernelSession, code: str, *, ok: bool = True, timeout: float = 180) -> Execution:
    """Run one cell; by default it must succeed."""
    execution = kernel.execute(code, timeout=timeout)
    if ok:
        assert execution.reply["status"] == "ok", (code, execution.reply, execution.iopub)
    return execution


def _tensorflow_tracing_warning(message: dict[str, Any]) -> bool:
    """TensorFlow's own "N out of the last M calls to <function ...> triggered tf.function
    retracing" warning: it counts traces of every function with the same code across the
    kernel (Keras makes a step function per model), so it appears or not with the tests a
    module's kernel ran before (split differently across workers): not the monitor's."""
    text = (
        message.get("content", {}).get("text", "")
        if message["header"]["msg_type"] == "stream"
        else ""
    )
    return text.startswith("WARNING:tensorflow:") and "triggered tf.function retracing" in text


def run_quiet(kernel: KernelSession, code: str, timeout: float = 180) -> dict[str, Any]:
    """Run a cell that prints nothing; the monitor must not print either. Its report."""
    # A trailing `pass` keeps IPython from displaying the last expression's value.
    execution = run(kernel, f"{code}\npass", timeout=timeout)
    noise = [
        m
        for m in execution.iopub
        if m["header"]["msg_type"] not in QUIET_MESSAGE_TYPES and not _tensorflow_tracing_warning(m)
    ]
    assert not noise, f"unexpected output for {code!r}: {noise}"
    return checked_report(execution)


def checked_report(execution: Execution) -> dict[str, Any]:
    """The one tfcoach_report of an execution, checked against the schema's shape."""
    report = execution.report
    messages = execution.of_type("tfcoach_report")
    assert messages[0]["parent_header"]["msg_id"] == execution.msg_id
    # Published before the kernel goes idle.
    kinds = [m["header"]["msg_type"] for m in execution.iopub]
    assert kinds.index("tfcoach_report") < len(kinds) - 1
    assert set(report) == {*REPORT_KEYS, *REPORT_MEANING_KEYS}
    assert report["schema"] == "tfcoach.report/1"
    assert report["execution_count"] == execution.reply["execution_count"]
    assert isinstance(report["monitor_ms"], float) and report["monitor_ms"] >= 0
    for trace in report["traces"]:
        assert set(trace) == {
            "function",
            "defined_at",
            "new_traces",
            "total_traces",
            "retraces",
            "reasons",
            "course",
        }
        for reason in trace["reasons"]:
            keys = {"kind", "argument", "before", "after", "text", "counts_as", "count"}
            assert set(reason) == keys
            # 0: a further argument that changed in a trace an earlier reason counts.
            assert isinstance(reason["count"], int) and reason["count"] >= 0
            assert reason["counts_as"] in ("first_trace", "retrace", "tip")
            assert reason["kind"] in (
                "first_trace",
                "last_batch",
                "shape",
                "dtype",
                "python_value",
                "kind",
                "other",
                "side_effect",
                "stale_value",
            )
        # A retrace is a trace: however its reasons are grouped, never more of them.
        assert trace["retraces"] <= trace["new_traces"], trace
        assert set(trace["course"]) == {"module", "section", "title"}
    for change in report["variables"]:
        assert set(change) == {"name", "change", "before", "after", "text", "course"}
        assert change["change"] in (
            "rebound_to_tensor",
            "attribute_rebound",
            "trainable_flag",
            "trainable_count",
            "stopped_learning",
        )
        assert set(change["course"]) == {"module", "section", "title"}
    if report["error"] is not None:
        assert set(report["error"]) == {"type", "message", "explanation", "course"}
    for note in report["notes"]:
        assert set(note) == {"text", "course", "kind"}, note
        assert note["kind"] == ("information" if note["course"] is None else "coaching")
        assert isinstance(note["text"], str) and note["text"]
        # Only notes about tfcoach itself have no course section.
        if not note["text"].startswith("tfcoach "):
            assert set(note["course"]) == {"module", "section", "title"}, note
    json.dumps(report)
    return report


def value_of(kernel: KernelSession, expression: str) -> Any:
    """Evaluate ``expression`` in the kernel and return it through JSON (via stdout)."""
    execution = run(kernel, f"import json as _json\nprint(_json.dumps({expression}))")
    return json.loads(execution.stdout)


def trace_for(report: dict[str, Any], function: str) -> dict[str, Any]:
    found = [trace for trace in report["traces"] if trace["function"] == function]
    assert len(found) == 1, (function, report["traces"])
    return found[0]


def note_texts(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"]]


def changes_of(report: dict[str, Any], change: str) -> list[dict[str, Any]]:
    return [entry for entry in report["variables"] if entry["change"] == change]


def error_of_failing_cell(kernel: KernelSession, code: str) -> dict[str, Any]:
    """Run a cell that must raise; its report's ``error`` entry (which must be there)."""
    execution = run(kernel, code, ok=False)
    assert execution.reply["status"] == "error", code
    error = checked_report(execution)["error"]
    assert error is not None, execution.reply["evalue"]
    return error


def fix_in(text: str) -> str:
    """The last code span after ``Fix:``: the code the learner is told to write."""
    fix = text.split("Fix: ", 1)
    assert len(fix) == 2, text
    return re.findall(r"`([^`]+)`", fix[1])[-1]


def runs_without_error_entry(kernel: KernelSession, code: str) -> None:
    """Run a cell that must succeed, and its report has no ``error`` entry."""
    assert checked_report(run(kernel, code))["error"] is None


# What jupyter_server logs when its port is taken (with ``port_retries=0`` it then exits).
PORT_TAKEN = "is already in use"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LabServer:
    """``jupyter lab`` on a free loopback port with a token and fresh temporary dirs."""

    # What to run (``python -m <module>``) and the app class its options belong to.
    module = "jupyterlab"
    app_class = "LabApp"
    label = "jupyter lab"

    def __init__(
        self, root: Path, token: str = "tfcoach-test-token", port: int | None = None
    ) -> None:
        """``port``: a server started again on a stopped one's root and port (its pages
        reload from the same address)."""
        self.root = root
        self.token = token
        # A port we picked may be taken by another process before the server binds it
        # (tests run in parallel): the server then exits at once (no retry on another port,
        # which would leave ``url`` wrong) and ``wait_until_up`` starts it on a new one.
        self._port_picked_here = port is None
        self.port = port or free_port()
        notebooks = root / "notebooks"
        workspaces = root / "workspaces"
        settings = root / "settings"
        for folder in (notebooks, workspaces, settings):
            folder.mkdir(parents=True, exist_ok=True)
        self.notebook_dir = notebooks
        # The news popup would cover the panel in screenshots.
        news = settings / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True, exist_ok=True)
        (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
        self.log_path = root / f"{self.label.replace(' ', '-')}.log"
        self._start()

    def _start(self) -> None:
        self.url = f"http://127.0.0.1:{self.port}"
        app = self.app_class
        notebooks, root, token = self.notebook_dir, self.root, self.token
        workspaces, settings = root / "workspaces", root / "settings"
        command = [
            sys.executable,
            "-m",
            self.module,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={notebooks}",
            f"--{app}.workspaces_dir={workspaces}",
            f"--{app}.user_settings_dir={settings}",
            "--ServerApp.open_browser=False",
            # Tests drive commands through window.jupyterapp.
            f"--{app}.expose_app_in_browser=True",
        ]
        if os.geteuid() == 0:
            command.append("--allow-root")
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # Its own data folder too: the study store (and the study feed) write there.
            env=quiet_env(
                JUPYTER_CONFIG_DIR=str(root / "config"), JUPYTER_DATA_DIR=str(root / "data")
            ),
            start_new_session=True,
        )

    def wait_until_up(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        starts = 1
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._log.close()
                log = self.log_path.read_text()
                if self._port_picked_here and starts < 3 and PORT_TAKEN in log:
                    starts += 1
                    self.port = free_port()
                    self._start()
                    continue
                raise RuntimeError(f"{self.label} exited: {log}")
            try:
                with urllib.request.urlopen(self.api_url("api/status"), timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"{self.label} not up in {timeout}s: {self.log_path.read_text()}")

    def api_url(self, path: str) -> str:
        return f"{self.url}/{path}?token={self.token}"

    def lab_url(self, path: str = "lab") -> str:
        return f"{self.url}/{path}?token={self.token}"

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self._log.close()


class NotebookServer(LabServer):
    """``jupyter notebook`` (Notebook 7, built on JupyterLab) set up like ``LabServer``.

    Its pages are ``tree``, ``notebooks/<path>``...: ``lab_url("notebooks/x.ipynb")``.
    """

    module = "notebook"
    app_class = "JupyterNotebookApp"
    label = "jupyter notebook"


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def on_server_loop(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on pytest-jupyter's loop, where the server lives.

    The suite runs pytest-asyncio in auto mode (for the language-server tests),
    which would run an ``async def`` test on a loop of its own and every request
    to the server would time out. The test becomes a plain function taking the
    extra fixture ``jp_asyncio_loop``.
    """
    signature = inspect.signature(test)
    takes_loop = "jp_asyncio_loop" in signature.parameters

    def run(**kwargs: Any) -> None:
        loop = kwargs["jp_asyncio_loop"] if takes_loop else kwargs.pop("jp_asyncio_loop")
        loop.run_until_complete(asyncio.wait_for(test(**kwargs), SERVER_TEST_TIMEOUT))

    parameters = list(signature.parameters.values())
    if not takes_loop:
        parameters.append(inspect.Parameter("jp_asyncio_loop", inspect.Parameter.KEYWORD_ONLY))
    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    run.__name__ = test.__name__
    run.__qualname__ = test.__qualname__
    run.__module__ = test.__module__
    run.__doc__ = test.__doc__
    return run


CONFIGURABLE_HTTP_PROXY = REPO_ROOT / "node_modules" / ".bin" / "configurable-http-proxy"

_HUB_CONFIG = """\
# Written by tests.harness.ClassroomHub: a JupyterHub for a class, on loopback only.
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = {bind_url!r}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = {db_url!r}
c.JupyterHub.cookie_secret_file = {cookie_secret!r}
c.JupyterHub.pid_file = {pid_file!r}
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = {proxy_api_url!r}
c.ConfigurableHTTPProxy.pid_file = {proxy_pid_file!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set({users!r})
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {home_template!r}
c.Spawner.cmd = [{python!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.args = {spawner_args!r}
c.Spawner.default_url = "/lab"
c.Spawner.environment = {{"TF_CPP_MIN_LOG_LEVEL": "2"}}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# The teacher: a service whose token manages the students' tokens.
c.JupyterHub.services = [{{"name": "teacher", "api_token": {teacher_token!r}}}]
c.JupyterHub.load_roles = [
    {{"name": "teacher", "scopes": ["admin:users", "tokens"], "services": ["teacher"]}}
]
"""


class ClassroomHub:
    """A real JupyterHub (``python -m jupyterhub``) with ``configurable-http-proxy`` from
    ``node_modules``, the dummy authenticator and one local single-user JupyterLab per student
    (``SimpleLocalProcessSpawner``: every server runs as this Unix user, in its own home under
    ``root/home``). Everything listens on free loopback ports; database, cookie secret, pid files
    and homes live in ``root``."""

    def __init__(self, root: Path, users: tuple[str, ...] = ("alice", "bob")) -> None:
        self.root = root
        self.users = users
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.teacher_token = "tfcoach-teacher-" + os.urandom(16).hex()
        self.log_path = root / "jupyterhub.log"
        self.stop_seconds = 0.0
        for user in users:
            settings = self.home(user) / ".jupyter" / "lab" / "user-settings"
            # The news popup would cover the panel.
            news = settings / "@jupyterlab" / "apputils-extension"
            news.mkdir(parents=True)
            (news / "notification.jupyterlab-settings").write_text(
                json.dumps({"fetchNews": "false"})
            )
        # Tests drive commands through window.jupyterapp.
        spawner_args = ["--LabApp.expose_app_in_browser=True"]
        if os.geteuid() == 0:
            spawner_args.append("--allow-root")
        config = root / "jupyterhub_config.py"
        config.write_text(
            _HUB_CONFIG.format(
                bind_url=self.url,
                hub_port=free_port(),
                db_url=f"sqlite:///{root / 'jupyterhub.sqlite'}",
                cookie_secret=str(root / "jupyterhub_cookie_secret"),
                pid_file=str(root / "jupyterhub.pid"),
                proxy=str(CONFIGURABLE_HTTP_PROXY),
                proxy_api_url=f"http://127.0.0.1:{free_port()}",
                proxy_pid_file=str(root / "jupyterhub-proxy.pid"),
                users=list(users),
                home_template=str(root / "home" / "{username}"),
                python=sys.executable,
                spawner_args=spawner_args,
                teacher_token=self.teacher_token,
            )
        )
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", f"--config={config}"],
            cwd=root,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=quiet_env(),
            start_new_session=True,
        )

    def home(self, user: str) -> Path:
        return self.root / "home" / user

    def wait_until_up(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited: {self.log_path.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/api", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"jupyterhub not up in {timeout}s: {self.log_path.read_text()}")

    def request(
        self, path: str, token: str, method: str = "GET", body: Any = None
    ) -> tuple[int, str]:
        """``path`` (``hub/api/...``, ``user/<name>/...``) on the proxy with ``token``: the
        status and the body, without following redirects."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {token}"},
        )
        opener = urllib.request.build_opener(_NoRedirect())
        try:
            with opener.open(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def user_token(self, user: str) -> str:
        """A new API token of ``user`` (with the user's own permissions), made by the teacher."""
        status, body = self.request(
            f"hub/api/users/{user}/tokens",
            self.teacher_token,
            method="POST",
            body={"note": "tfcoach test", "expires_in": 3600},
        )
        assert status == 201, (status, body)
        return str(json.loads(body)["token"])

    def _our_processes(self) -> list[int]:
        """Processes working in ``root`` (proxy, single-user servers, their kernels)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cwd = (entry / "cwd").resolve(strict=True)
            except OSError:
                continue
            if cwd.is_relative_to(self.root.resolve()):
                found.append(int(entry.name))
        return found

    def stop(self, grace: float = 15) -> list[str]:
        """Stop the hub: it stops the proxy and the servers it spawned, and they shut down
        their kernels. Whatever still works in ``root`` ``grace`` seconds after the hub exited is
        killed; those processes are returned (pid and command line)."""
        start = time.monotonic()
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                # The hub gives a server 30 s to stop after SIGINT before it sends SIGTERM.
                self.process.wait(timeout=60)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=10)
        deadline = time.monotonic() + grace
        while self._our_processes() and time.monotonic() < deadline:
            time.sleep(0.2)
        leftovers = [_describe(pid) for pid in self._our_processes()]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self._our_processes():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while self._our_processes() and time.monotonic() < deadline:
                time.sleep(0.1)
        self._log.close()
        self.stop_seconds = time.monotonic() - start
        return leftovers


def _describe(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        command = "?"
    return f"{pid}: {command.strip()}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
