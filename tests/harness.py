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
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
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

    def __init__(self, root: Path, token: str = "tfcoach-test-token") -> None:
        self.root = root
        self.token = token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        notebooks = root / "notebooks"
        workspaces = root / "workspaces"
        settings = root / "settings"
        for folder in (notebooks, workspaces, settings):
            folder.mkdir(parents=True, exist_ok=True)
        self.notebook_dir = notebooks
        # The news popup would cover the panel in screenshots.
        news = settings / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True)
        (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
        self.log_path = root / f"{self.label.replace(' ', '-')}.log"
        app = self.app_class
        command = [
            sys.executable,
            "-m",
            self.module,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
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
            env=quiet_env(JUPYTER_CONFIG_DIR=str(root / "config")),
            start_new_session=True,
        )

    def wait_until_up(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.label} exited: {self.log_path.read_text()}")
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
