"""How fast a cell's report reaches a frontend through the tfcoach server extension.

Starts ``jupyter server`` with the extension on a free port, then talks to it like
JupyterLab does: kernels started with ``POST api/kernels``, cells executed over the
kernel websocket, reports read from ``GET tfcoach/api/kernels/{id}/reports`` and from
the event bus websocket ``api/events/subscribe``. Prints, per cell, the delay from
the cell's ``execute_reply`` arriving on the kernel websocket to

- the report being retrievable over REST (first GET issued at or after the reply
  that contains it; the figure includes that request's round trip), and
- the report event arriving on the event bus (negative: it came before the reply,
  since the monitor publishes during ``post_run_cell``, before the kernel replies).

Then checks the bootstrap race: kernels whose first cell is sent the moment the
kernel websocket opens, and the fraction whose first cell got a report.

Usage: python benchmarks/bench_server.py [--cells 20] [--race 5] [--tensorflow]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-" + uuid.uuid4().hex
REPORT_SCHEMA_ID = "https://events.jupyter.org/tfcoach/report/v1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, root: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        env["JUPYTER_CONFIG_DIR"] = str(root / "config")
        env["JUPYTER_RUNTIME_DIR"] = str(root / "runtime")
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.jpserver_extensions=jupyterlab_tfcoach=True",
        ]
        if os.geteuid() == 0:
            command.append("--allow-root")
        self.log = (root / "server.log").open("w")
        self.process = subprocess.Popen(
            command, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        self.http = AsyncHTTPClient()

    async def request(self, path: str, method: str = "GET", body: Any = None) -> Any:
        request = HTTPRequest(
            self.base + path,
            method=method,
            body=None if body is None else json.dumps(body),
            headers={"Authorization": f"token {TOKEN}"},
            request_timeout=60,
        )
        response = await self.http.fetch(request)
        return json.loads(response.body) if response.body else None

    async def wait_up(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                await self.request("api/status")
                return
            except Exception:
                await asyncio.sleep(0.2)
        raise TimeoutError("jupyter server did not come up")

    async def websocket(self, path: str) -> WebSocketClientConnection:
        url = f"ws://127.0.0.1:{self.port}/{path}"
        request = HTTPRequest(url, headers={"Authorization": f"token {TOKEN}"})
        return await websocket_connect(request)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


class KernelSocket:
    """The kernel websocket, as JupyterLab uses it (JSON messages)."""

    def __init__(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self.session = uuid.uuid4().hex
        self.replies: dict[str, tuple[float, dict[str, Any]]] = {}
        self.reports: dict[str, tuple[float, dict[str, Any]]] = {}
        self.waiters: dict[str, asyncio.Future[None]] = {}
        self.writes: list[asyncio.Future[None]] = []
        self.reader = asyncio.ensure_future(self._read())

    def send(self, msg_type: str, content: dict[str, Any]) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": msg_type,
            "session": self.session,
            "username": "bench",
            "version": "5.3",
            "date": "",
        }
        message = {
            "header": header,
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": "shell",
            "buffers": [],
        }
        self.waiters[msg_id] = asyncio.get_running_loop().create_future()
        self.writes.append(asyncio.ensure_future(self.ws.write_message(json.dumps(message))))
        return msg_id

    def execute(self, code: str) -> str:
        return self.send(
            "execute_request",
            {"code": code, "silent": False, "store_history": True, "user_expressions": {}},
        )

    async def wait(self, msg_id: str, timeout: float = 120) -> None:
        await asyncio.wait_for(self.waiters[msg_id], timeout)

    async def _read(self) -> None:
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                return
            now = time.perf_counter()
            if isinstance(raw, bytes):
                continue
            msg = json.loads(raw)
            parent = msg.get("parent_header", {}).get("msg_id")
            msg_type = msg["header"]["msg_type"]
            if msg_type == "tfcoach_report" and parent:
                self.reports[parent] = (now, msg["content"])
            elif msg_type in ("execute_reply", "kernel_info_reply") and parent:
                self.replies[parent] = (now, msg["content"])
                waiter = self.waiters.get(parent)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)


class EventBus:
    def __init__(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self.events: dict[str, tuple[float, dict[str, Any]]] = {}
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                return
            now = time.perf_counter()
            event = json.loads(raw)
            if event.get("schema_id") == REPORT_SCHEMA_ID and event.get("parent_msg_id"):
                self.events[event["parent_msg_id"]] = (now, event)


def summary(name: str, values_ms: list[float]) -> str:
    if not values_ms:
        return f"{name:<44} n=0"
    ordered = sorted(values_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"{name:<44} n={len(ordered):<3} min {ordered[0]:+7.1f}  median "
        f"{statistics.median(ordered):+7.1f}  p95 {p95:+7.1f}  max {ordered[-1]:+7.1f} ms"
    )


async def start_kernel(server: Server) -> tuple[str, KernelSocket]:
    kernel = await server.request("api/kernels", "POST", {"name": "python3"})
    ws = await server.websocket(f"api/kernels/{kernel['id']}/channels")
    return kernel["id"], KernelSocket(ws)


async def measure_latency(server: Server, cells: int, tensorflow: bool) -> None:
    bus = EventBus(await server.websocket("api/events/subscribe"))
    kernel_id, kernel = await start_kernel(server)
    await kernel.wait(kernel.send("kernel_info_request", {}))
    codes = [f"x = {i} * 2" for i in range(cells)]
    if tensorflow:
        setup = kernel.execute(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n    return x + 1\n"
        )
        await kernel.wait(setup, timeout=300)
        codes = [f"f(tf.zeros([{i + 1}]))" for i in range(cells)]  # a retrace per cell
    rest_ms: list[float] = []
    bus_ms: list[float] = []
    iopub_ms: list[float] = []
    monitor_ms: list[float] = []
    for code in codes:
        msg_id = kernel.execute(code)
        await kernel.wait(msg_id)
        replied_at, reply = kernel.replies[msg_id]
        count = reply["execution_count"]
        while True:
            reports = (await server.request(f"tfcoach/api/kernels/{kernel_id}/reports"))["reports"]
            if any(r["execution_count"] == count for r in reports):
                rest_ms.append(1000 * (time.perf_counter() - replied_at))
                break
        deadline = time.monotonic() + 2
        while msg_id not in bus.events and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        if msg_id in bus.events:
            bus_ms.append(1000 * (bus.events[msg_id][0] - replied_at))
        if msg_id in kernel.reports:
            iopub_ms.append(1000 * (kernel.reports[msg_id][0] - replied_at))
            monitor_ms.append(float(kernel.reports[msg_id][1]["monitor_ms"]))
    label = "TensorFlow retrace cells" if tensorflow else "plain cells"
    print(f"\nDelay after the cell's execute_reply on the kernel websocket ({label}):")
    print(summary("report retrievable over REST", rest_ms))
    print(summary("report event on api/events/subscribe", bus_ms))
    print(summary("report on the kernel websocket (iopub)", iopub_ms))
    print(summary("monitor_ms (time the monitor spent)", monitor_ms))
    if len(bus_ms) != len(codes):
        print(f"  !! {len(codes) - len(bus_ms)} report events missing on the bus")
    kernel.ws.close()
    bus.ws.close()
    await server.request(f"api/kernels/{kernel_id}", "DELETE")


async def race(server: Server, kernels: int) -> None:
    """First cell sent as soon as the kernel websocket opens (no wait at all)."""
    with_report = 0
    for _ in range(kernels):
        started = time.perf_counter()
        kernel_id, kernel = await start_kernel(server)
        msg_id = kernel.execute("first = 1")
        await kernel.wait(msg_id, timeout=120)
        first_reply_s = time.perf_counter() - started
        deadline = time.monotonic() + 2
        while msg_id not in kernel.reports and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        got = msg_id in kernel.reports
        with_report += got
        print(
            f"  kernel {kernel_id[:8]}: first cell replied {first_reply_s:.2f} s after "
            f"POST api/kernels; report: {'yes' if got else 'NO'}"
        )
        kernel.ws.close()
        await server.request(f"api/kernels/{kernel_id}", "DELETE")
    print(f"First cells with a report: {with_report}/{kernels}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=20)
    parser.add_argument("--race", type=int, default=5, help="kernels for the race check")
    parser.add_argument("--tensorflow", action="store_true", help="also time TF retrace cells")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tfcoach-") as tmp:
        server = Server(Path(tmp))
        try:
            await server.wait_up()
            await measure_latency(server, args.cells, tensorflow=False)
            if args.tensorflow:
                await measure_latency(server, args.cells, tensorflow=True)
            print("\nBootstrap race: first cell sent the moment the kernel websocket opens:")
            await race(server, args.race)
        finally:
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
