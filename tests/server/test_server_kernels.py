"""The server extension with real kernels: bootstrap, report history, event bus.

Kernels are started through the server's REST API, never with ``%load_ext``;
cells are executed by a jupyter_client talking to the kernel directly, the way
any frontend does through the kernel websocket.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.asynchronous import AsyncKernelClient
from tornado.httpclient import HTTPClientError, HTTPResponse

from jupyterlab_tfcoach.course import course_ref
from jupyterlab_tfcoach.server.handlers import SETTINGS_HUB
from jupyterlab_tfcoach.server.kernels import REPORT_SCHEMA_ID, MonitorState, ReportHub
from tests.harness import on_server_loop

pytestmark = pytest.mark.kernel

Fetch = Callable[..., Awaitable[HTTPResponse]]
DATA = Path(__file__).parents[1] / "data" / "server"
TIMEOUT = 90.0
LOADED_CHECK = {"loaded": "'jupyterlab_tfcoach.monitor.extension' in __import__('sys').modules"}


@dataclass
class Bus:
    """Every tfcoach report event the server emits, with its arrival time."""

    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    async def listener(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        self.events.append((time.perf_counter(), data))

    @property
    def data(self) -> list[dict[str, Any]]:
        return [data for _, data in self.events]


@pytest.fixture
def bus(jp_serverapp: Any) -> Bus:
    bus = Bus()
    jp_serverapp.event_logger.add_listener(schema_id=REPORT_SCHEMA_ID, listener=bus.listener)
    return bus


@pytest.fixture
def hub(jp_serverapp: Any) -> ReportHub:
    hub: ReportHub = jp_serverapp.web_app.settings[SETTINGS_HUB]
    return hub


@dataclass
class Executed:
    msg_id: str
    reply: dict[str, Any]
    replied_at: float


class RunningKernel:
    """A kernel the server runs, driven by a jupyter_client on its ZeroMQ channels."""

    def __init__(self, serverapp: Any, fetch: Fetch, kernel_id: str) -> None:
        self.serverapp = serverapp
        self.fetch = fetch
        self.kernel_id = kernel_id
        self.client: AsyncKernelClient | None = None

    async def connect(self, wait: bool = True) -> None:
        if self.client is not None:
            self.client.stop_channels()
        kernel = self.serverapp.kernel_manager.get_kernel(self.kernel_id)
        client = AsyncKernelClient()
        client.load_connection_info(kernel.get_connection_info())
        client.start_channels(hb=False, stdin=False)
        if wait:
            await client.wait_for_ready(timeout=TIMEOUT)
        self.client = client

    async def execute(self, code: str, **kwargs: Any) -> Executed:
        assert self.client is not None
        msg_id = self.client.execute(code, **kwargs)
        deadline = time.monotonic() + TIMEOUT
        while True:
            msg = await self.client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") == msg_id:
                return Executed(msg_id, msg["content"], time.perf_counter())

    async def ok(self, code: str, **kwargs: Any) -> Executed:
        done = await self.execute(code, **kwargs)
        assert done.reply["status"] == "ok", done.reply
        return done

    async def monitor_loaded(self) -> bool:
        done = await self.ok("", user_expressions=LOADED_CHECK)
        return bool(done.reply["user_expressions"]["loaded"]["data"]["text/plain"] == "True")

    async def reports(self) -> list[dict[str, Any]]:
        response = await self.fetch("tfcoach", "api", "kernels", self.kernel_id, "reports")
        return list(json.loads(response.body)["reports"])

    async def wait_reports(self, count: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            reports = await self.reports()
            if len(reports) >= count:
                return reports
            assert time.monotonic() < deadline, f"{len(reports)} reports, wanted {count}"
            await asyncio.sleep(0.01)

    async def restart(self) -> None:
        await self.fetch("api", "kernels", self.kernel_id, "restart", method="POST", body="{}")
        await self.connect()

    def close(self) -> None:
        if self.client is not None:
            self.client.stop_channels()
            self.client = None


@pytest.fixture
def start_kernel(
    jp_fetch: Fetch, jp_serverapp: Any
) -> Iterator[Callable[..., Awaitable[RunningKernel]]]:
    started: list[RunningKernel] = []

    async def start(name: str = "python3", wait: bool = True) -> RunningKernel:
        response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": name}))
        kernel = RunningKernel(jp_serverapp, jp_fetch, json.loads(response.body)["id"])
        started.append(kernel)
        await kernel.connect(wait=wait)
        return kernel

    yield start
    for kernel in started:
        kernel.close()


async def wait_for(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def tfcoach_records(caplog: pytest.LogCaptureFixture, containing: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith("tfcoach:") and containing in r.getMessage()
    ]


def server_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


RETRACE_CELLS = [
    "import tensorflow as tf",
    "@tf.function\ndef square(x):\n    return x * x\n\nsquare(tf.constant([1.0, 2.0]))",
    "square(tf.constant([[1.0], [2.0]]))",
    "w = tf.Variable(1.0)",
    "w = w - 0.1",
    "tf.constant([1, 2]) + tf.constant([0.5, 1.0])",
]


@on_server_loop
async def test_kernel_from_rest_api_is_coached_across_restart(
    start_kernel: Callable[..., Awaitable[RunningKernel]],
    jp_fetch: Fetch,
    hub: ReportHub,
    bus: Bus,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    kernel = await start_kernel()
    stored_at: dict[int, float] = {}
    hub.on_report = lambda kid, report: stored_at.setdefault(
        report["execution_count"], time.perf_counter()
    )

    executed = []
    for code in RETRACE_CELLS:
        executed.append(await kernel.execute(code))
    assert [e.reply["status"] for e in executed] == ["ok"] * 5 + ["error"]
    assert hub.monitor_state(kernel.kernel_id) is MonitorState.LOADED
    assert hub.cells_before_monitor(kernel.kernel_id) == 0

    reports = await kernel.wait_reports(len(RETRACE_CELLS))
    assert [r["execution_count"] for r in reports] == [1, 2, 3, 4, 5, 6]
    assert all(r["schema"] == "tfcoach.report/1" for r in reports)

    retrace = [t for t in reports[2]["traces"] if t["function"] == "square"]
    assert len(retrace) == 1 and retrace[0]["new_traces"] == 1, reports[2]
    assert retrace[0]["total_traces"] == 2
    assert [reason["kind"] for reason in retrace[0]["reasons"]] == ["shape"]

    rebound = [v for v in reports[4]["variables"] if v["name"] == "w"]
    assert [v["change"] for v in rebound] == ["rebound_to_tensor"], reports[4]

    error = reports[5]["error"]
    assert error is not None and error["type"].endswith("InvalidArgumentError"), reports[5]
    assert error["explanation"] and error["course"]["section"]
    assert all(r["error"] is None for r in reports[:5])

    # The same reports, in the same order, went out on the event bus.
    await wait_for(lambda: len(bus.events) >= len(RETRACE_CELLS), "report events")
    assert [d["report"] for d in bus.data] == reports
    assert {d["kernel_id"] for d in bus.data} == {kernel.kernel_id}
    assert [d["parent_msg_id"] for d in bus.data] == [e.msg_id for e in executed]
    assert all("path" not in d for d in bus.data)  # no session uses this kernel

    for done, report in zip(executed, reports, strict=True):
        count = report["execution_count"]
        event_at = next(t for t, d in bus.events if d["report"]["execution_count"] == count)
        print(
            f"cell {count}: stored {1000 * (stored_at[count] - done.replied_at):+.1f} ms, "
            f"event {1000 * (event_at - done.replied_at):+.1f} ms after execute_reply"
        )

    # After a restart the new kernel process is coached again; history is kept.
    await kernel.restart()
    await wait_for(
        lambda: hub.monitor_state(kernel.kernel_id) is MonitorState.LOADED,
        "bootstrap after restart",
    )
    after = await kernel.ok("answer = 6 * 7")
    assert after.reply["execution_count"] == 1
    reports = await kernel.wait_reports(len(RETRACE_CELLS) + 1)
    assert [r["execution_count"] for r in reports] == [1, 2, 3, 4, 5, 6, 1]
    await wait_for(lambda: len(bus.events) == len(RETRACE_CELLS) + 1, "event after restart")
    assert bus.data[-1]["report"] == reports[-1]
    assert bus.data[-1]["parent_msg_id"] == after.msg_id
    assert len(tfcoach_records(caplog, "monitor loaded in kernel")) == 2

    # Shut down: the history is dropped and the route says so.
    await jp_fetch("api", "kernels", kernel.kernel_id, method="DELETE")
    await wait_for(lambda: kernel.kernel_id not in hub.watched_kernels(), "history dropped")
    with pytest.raises(HTTPClientError) as caught:
        await kernel.reports()
    assert caught.value.code == 404
    assert server_errors(caplog) == []


@pytest.mark.parametrize("tfcoach_config", [{"history_length": 3}])
@on_server_loop
async def test_history_is_bounded_and_events_carry_the_session_path(
    jp_fetch: Fetch, jp_serverapp: Any, bus: Bus, hub: ReportHub
) -> None:
    body = {"path": "work/bounded.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    kernel = RunningKernel(jp_serverapp, jp_fetch, json.loads(response.body)["kernel"]["id"])
    await kernel.connect()
    try:
        for value in range(5):
            await kernel.ok(f"x = {value}")
        await wait_for(lambda: len(bus.events) == 5, "five report events")
        reports = await kernel.reports()
        assert [r["execution_count"] for r in reports] == [3, 4, 5]
        assert [d["report"] for d in bus.data[-3:]] == reports
        assert {d["path"] for d in bus.data} == {"work/bounded.ipynb"}
    finally:
        kernel.close()


def write_kernel_spec(kernel_dir: str, name: str, language: str, argv: list[str]) -> None:
    spec_dir = Path(kernel_dir) / name
    spec_dir.mkdir(parents=True)
    spec = {"argv": argv, "display_name": name, "language": language}
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")


@on_server_loop
async def test_non_python_kernel_is_left_alone(
    jp_kernel_dir: str,
    start_kernel: Callable[..., Awaitable[RunningKernel]],
    hub: ReportHub,
    bus: Bus,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    # An IPython kernel in disguise: it could load the monitor, but says it speaks R.
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    write_kernel_spec(jp_kernel_dir, "not-python", "R", argv)
    kernel = await start_kernel("not-python")
    for value in range(2):
        await kernel.ok(f"x = {value}")
    assert not await kernel.monitor_loaded()
    assert await kernel.reports() == []
    assert hub.monitor_state(kernel.kernel_id) is None
    assert bus.events == []
    assert len(tfcoach_records(caplog, "is not a Python kernel")) == 1
    assert server_errors(caplog) == []


@on_server_loop
async def test_kernel_without_the_package_gets_one_log_line(
    jp_kernel_dir: str,
    start_kernel: Callable[..., Awaitable[RunningKernel]],
    hub: ReportHub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    argv = [sys.executable, str(DATA / "blocked_kernel.py"), "-f", "{connection_file}"]
    write_kernel_spec(jp_kernel_dir, "python-without-tfcoach", "python", argv)
    kernel = await start_kernel("python-without-tfcoach")
    await wait_for(
        lambda: hub.monitor_state(kernel.kernel_id) is not MonitorState.PENDING, "bootstrap reply"
    )
    assert hub.monitor_state(kernel.kernel_id) is MonitorState.NOT_IMPORTABLE
    await kernel.ok("x = 1")
    assert await kernel.reports() == []
    assert len(tfcoach_records(caplog, "is not importable")) == 1
    assert server_errors(caplog) == []
    # The bootstrap left no trace in the user's kernel: no output, no history.
    history = await kernel.execute("", user_expressions={"n": "len(In)"})
    assert history.reply["user_expressions"]["n"]["data"]["text/plain"] == "2"  # '' and 'x = 1'


@pytest.mark.parametrize("tfcoach_config", [{"autoload": False}])
@on_server_loop
async def test_autoload_off_still_collects_reports_of_a_manual_load(
    start_kernel: Callable[..., Awaitable[RunningKernel]], hub: ReportHub, bus: Bus
) -> None:
    kernel = await start_kernel()
    await kernel.ok("x = 1")
    assert not await kernel.monitor_loaded()
    assert hub.monitor_state(kernel.kernel_id) is MonitorState.NOT_REQUESTED
    await kernel.ok("%load_ext jupyterlab_tfcoach")
    done = await kernel.ok("y = 2")
    await wait_for(lambda: bool(bus.events), "a report event")
    reports = await kernel.reports()
    assert reports and reports[-1]["execution_count"] == done.reply["execution_count"]
    assert all(r["execution_count"] > 1 for r in reports)  # nothing for the cell before


@on_server_loop
async def test_first_cell_sent_as_soon_as_the_kernel_answers_has_a_report(
    start_kernel: Callable[..., Awaitable[RunningKernel]], hub: ReportHub
) -> None:
    # The client executes right after its kernel_info round trip, as frontends do;
    # the bootstrap was queued before the REST call that started the kernel returned.
    kernel = await start_kernel()
    done = await kernel.ok("first = 1")
    assert done.reply["execution_count"] == 1
    reports = await kernel.wait_reports(1)
    assert reports[0]["execution_count"] == 1
    assert hub.monitor_state(kernel.kernel_id) is MonitorState.LOADED
    assert hub.cells_before_monitor(kernel.kernel_id) == 0
    # The silent bootstrap took no execution count and no history entry.
    history = await kernel.execute("", user_expressions={"n": "len(In)"})
    assert history.reply["user_expressions"]["n"]["data"]["text/plain"] == "2"


@on_server_loop
async def test_kernel_that_dies_is_coached_again_after_its_auto_restart(
    start_kernel: Callable[..., Awaitable[RunningKernel]],
    hub: ReportHub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    kernel = await start_kernel()
    await kernel.ok("x = 1")
    await kernel.wait_reports(1)
    assert kernel.client is not None
    kernel.client.execute("import os; os._exit(1)")  # no reply will ever come
    # jupyter_client's restarter notices the dead process and restarts it.
    await wait_for(
        lambda: len(tfcoach_records(caplog, "monitor loaded in kernel")) == 2,
        "bootstrap after the automatic restart",
    )
    await kernel.connect()
    done = await kernel.ok("y = 2")
    assert done.reply["execution_count"] == 1
    reports = await kernel.wait_reports(2)
    assert [r["execution_count"] for r in reports] == [1, 1]
    assert hub.monitor_state(kernel.kernel_id) is MonitorState.LOADED
    assert server_errors(caplog) == []


COURSE_BASE = "https://course.example.org/tf"
LINKED_CELLS = [
    "import tensorflow as tf\n"
    "@tf.function\ndef halve(x):\n    return x / 2\n\n"
    "halve(tf.constant([1.0]))\nhalve(tf.constant([[1.0]]))",
    "w = tf.Variable(1.0)\nw = w - 0.1",
    "tf.constant([1, 2]) + tf.constant([0.5, 1.0])",
]


def course_objects(report: dict[str, Any]) -> list[dict[str, Any]]:
    found = [item.get("course") for item in (*report["traces"], *report["variables"])]
    found += [note.get("course") for note in report["notes"] if isinstance(note, dict)]
    if report["error"] is not None:
        found.append(report["error"].get("course"))
    return [course for course in found if course is not None]


async def iopub_reports(kernel: RunningKernel, count: int) -> list[dict[str, Any]]:
    """The reports as the kernel published them, before the server saw them."""
    assert kernel.client is not None
    reports: list[dict[str, Any]] = []
    deadline = time.monotonic() + TIMEOUT
    while len(reports) < count:
        msg = await kernel.client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if msg["header"]["msg_type"] == "tfcoach_report":
            reports.append(msg["content"])
    return reports


@pytest.mark.parametrize(
    ("tfcoach_config", "base"),
    [({"course_base_url": COURSE_BASE}, COURSE_BASE), ({}, None)],
    ids=["c.TfCoach.course_base_url", "packaged course"],
)
@on_server_loop
async def test_report_links_are_made_by_the_server(
    start_kernel: Callable[..., Awaitable[RunningKernel]],
    bus: Bus,
    base: str | None,
) -> None:
    kernel = await start_kernel()
    for code in LINKED_CELLS:
        await kernel.execute(code)
    published = await iopub_reports(kernel, len(LINKED_CELLS))
    # The kernel names sections; it builds no link (no path of its machine, no guess at
    # the server's base URL).
    sent = [course for report in published for course in course_objects(report)]
    assert len(sent) >= len(LINKED_CELLS), published
    assert all(set(course) == {"module", "section", "title"} for course in sent), sent

    stored = await kernel.wait_reports(len(LINKED_CELLS))
    await wait_for(lambda: len(bus.events) >= len(LINKED_CELLS), "report events")
    for reports in (stored, [d["report"] for d in bus.data]):
        linked = [course for report in reports for course in course_objects(report)]
        assert [c["section"] for c in linked] == [c["section"] for c in sent]
        for course in linked:
            assert course == course_ref(course["section"], base)
            if base is None:
                assert course["url"].startswith("file://")
            else:
                assert course["url"].startswith(f"{COURSE_BASE}/")
