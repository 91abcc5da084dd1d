"""Bounds of the REST routes and of what kernels send, on a real jupyter_server.

- A JSON body nested deeper than the decoder goes is a 400 with a message, not a 500.
- Reports a kernel publishes are stored and emitted only when they have the report's
  shape and are at most 256 KiB; the history of a kernel stays within 8 MiB.
- Reports waiting to be emitted while the event bus is behind are bounded in count and in
  bytes: the oldest waiting ones are dropped (with a warning), the newest go out in order.
- A kernel that died for good (its restarter gave up) is let go: the hub stops trying to
  reconnect to its ports; until then (or with no restarter at all) the retries back off.

The reports are sent from a cell, with the kernel's own session and iopub socket, the way
the monitor publishes them (``monitor/report.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import zmq
from tornado.httpclient import HTTPClientError
from zmq.utils.monitor import recv_monitor_message

from jupyterlab_tfcoach.server.handlers import DECODE_ON_LOOP_BYTES
from jupyterlab_tfcoach.server.kernels import (
    IOPUB_RECONNECT_MAX_MS,
    MAX_HISTORY_BYTES,
    MAX_PENDING,
    MAX_PENDING_BYTES,
    MAX_REPORT_BYTES,
    ReportHub,
)
from tests.harness import on_server_loop
from tests.server.test_server_kernels import (
    Bus,
    Fetch,
    RunningKernel,
    bus,  # noqa: F401  (fixture)
    hub,  # noqa: F401  (fixture)
    server_errors,
    start_kernel,  # noqa: F401  (fixture)
    tfcoach_records,
    wait_for,
    write_kernel_spec,
)

DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    """conftest's, with a restarter that gives up on the first death and notices it fast."""
    return {**jp_server_config, "KernelRestarter": {"restart_limit": 0, "time_to_dead": 0.1}}


async def status_and_message(fetch: Fetch, *path: str, body: str | bytes) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as caught:
        await fetch(*path, method="POST", body=body)
    response = caught.value.response
    assert response is not None
    return caught.value.code, str(json.loads(response.body)["message"])


@on_server_loop
async def test_deeply_nested_json_is_a_400(
    jp_fetch: Fetch, caplog: pytest.LogCaptureFixture
) -> None:
    course = json.loads((await jp_fetch("tfcoach", "api", "course")).body)
    module = next(m["id"] for m in course["modules"] if m["notebook"])
    for path in (
        ("tfcoach", "api", "analyze"),
        ("tfcoach", "api", "hover"),
        ("tfcoach", "api", "course", module, "notebook"),
    ):
        code, message = await status_and_message(jp_fetch, *path, body=DEEP)
        assert code == 400, path
        assert "nested too deeply" in message, (path, message)
    assert server_errors(caplog) == []


@on_server_loop
async def test_bodies_that_are_not_json_are_a_400_small_or_large(
    jp_fetch: Fetch, caplog: pytest.LogCaptureFixture
) -> None:
    """Bodies over ``DECODE_ON_LOOP_BYTES`` are decoded in a thread: same answers."""
    padding = " " * (DECODE_ON_LOOP_BYTES + 1)
    for body, expected in (
        ('{"source": "x = 1"', "not valid JSON"),
        ('{"source": "x = 1"' + padding, "not valid JSON"),
        (b'{"source": "\xff"}', "not UTF-8"),
        (b'{"source": "\xff"}' + padding.encode(), "not UTF-8"),
    ):
        for path in (("tfcoach", "api", "analyze"), ("tfcoach", "api", "hover")):
            code, message = await status_and_message(jp_fetch, *path, body=body)
            assert (code, expected in message) == (400, True), (path, len(body), message)
    # and a large valid body is still read: its analysis answers
    source = "import tensorflow as tf\nw = tf.Variable(1.0)\nw = w + 1\n" + padding
    answer = await jp_fetch(
        "tfcoach", "api", "analyze", method="POST", body=json.dumps({"source": source})
    )
    assert [f["code"] for f in json.loads(answer.body)["findings"]] == ["TFC001"]
    assert server_errors(caplog) == []


def report(cell_id: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema": "tfcoach.report/1",
        "execution_count": None,
        "cell_id": cell_id,
        "monitor_ms": 0.1,
        "traces": [],
        "variables": [],
        "error": None,
        "notes": [],
    }
    base.update(changes)
    return base


# Each is sent on iopub as a tfcoach_report; none may be stored.
MALFORMED: list[Any] = [
    ["a", "list"],
    "a string",
    {"schema": "tfcoach.report/1", "cell_id": "bad-missing-keys"},
    report("bad-schema", schema="tfcoach.report/999"),
    report("bad-traces", traces="retraced"),
    report("bad-variables", variables=[1, 2]),
    report("bad-count", execution_count="7"),
    report("bad-fractional-count", execution_count=7.5),
    report("bad-error", error=["ValueError"]),
    report("bad-oversized", notes=[{"text": "x" * MAX_REPORT_BYTES, "course": None}]),
]
# The content goes out as packed JSON bytes, as Session.send accepts it, so that a
# report which is not an object can be sent too.
SEND = (
    "import json as _json\n"
    "_kernel = get_ipython().kernel\n"
    "for _content in _json.loads({payload!r}):\n"
    "    _kernel.session.send(_kernel.iopub_socket, 'tfcoach_report',\n"
    "                         _json.dumps(_content).encode(), parent=_kernel.get_parent())\n"
)


def send_cell(*contents: Any) -> str:
    return SEND.format(payload=json.dumps(list(contents)))


@on_server_loop
async def test_malformed_and_oversized_reports_are_dropped(
    start_kernel: Callable[..., Awaitable[RunningKernel]],  # noqa: F811
    hub: ReportHub,  # noqa: F811
    bus: Bus,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    kernel = await start_kernel()
    good = report("good", notes=[{"text": "a hand-made report", "course": None}])
    # JSON's integer 7 as another serialiser may write it: kept, and stored as 7.
    float_count = report("float-count", execution_count=7.0)
    await kernel.ok(send_cell(*MALFORMED, good, float_count))
    reports = await kernel.wait_reports(3)  # the two hand-made ones and the cell's own
    ids = [r["cell_id"] for r in reports]
    assert "good" in ids, ids
    stored_count = next(r["execution_count"] for r in reports if r["cell_id"] == "float-count")
    assert stored_count == 7 and type(stored_count) is int
    assert not [i for i in ids if isinstance(i, str) and i.startswith("bad")], ids
    assert all(isinstance(r, dict) and r["schema"] == "tfcoach.report/1" for r in reports)
    await wait_for(lambda: len(bus.events) >= len(reports), "report events")
    assert [d["report"] for d in bus.data] == reports
    assert len(tfcoach_records(caplog, "dropped a malformed report")) == len(MALFORMED) - 1
    assert len(tfcoach_records(caplog, "dropped a report of")) == 1
    # Nothing else the kernel sent (its iopub_welcome included) was taken for a bad message.
    assert tfcoach_records(caplog, "bad iopub message") == []
    assert server_errors(caplog) == []


@pytest.mark.parametrize(
    ("tfcoach_config", "limit"),
    [({}, MAX_HISTORY_BYTES), ({"history_bytes": 1024 * 1024}, 1024 * 1024)],
    ids=["default", "c.TfCoach.history_bytes"],
)
@on_server_loop
async def test_history_is_bounded_in_bytes(
    start_kernel: Callable[..., Awaitable[RunningKernel]],  # noqa: F811
    caplog: pytest.LogCaptureFixture,
    limit: int,
) -> None:
    caplog.set_level(logging.WARNING)
    kernel = await start_kernel()
    size = 200 * 1024
    count = limit // size + 10  # more than fit in the history
    big = [
        report(f"big-{index}", notes=[{"text": "x" * size, "course": None}])
        for index in range(count)
    ]
    await kernel.ok(send_cell(*big, report("last")))
    await wait_for_last(kernel)
    reports = await kernel.reports()
    stored = len(json.dumps({"reports": reports}).encode())
    assert stored <= limit, stored
    kept = [r["cell_id"] for r in reports if str(r["cell_id"]).startswith("big-")]
    # The newest are kept, in order, and most of the budget is used.
    assert kept == [f"big-{index}" for index in range(count - len(kept), count)]
    assert len(kept) >= limit // size - 2
    assert server_errors(caplog) == []


async def wait_for_last(kernel: RunningKernel, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while "last" not in [r["cell_id"] for r in await kernel.reports()]:
        assert time.monotonic() < deadline, "the last hand-made report never arrived"
        await asyncio.sleep(0.02)


@on_server_loop
async def test_a_kernel_that_died_for_good_is_let_go(
    jp_kernel_dir: str,
    jp_fetch: Fetch,
    hub: ReportHub,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    # A "Python kernel" whose process exits at once: the hub connects to its ports and
    # sends the bootstrap, then the restarter gives up on it.
    argv = [sys.executable, "-c", "import sys; sys.exit(3)"]
    write_kernel_spec(jp_kernel_dir, "dies-at-once", "python", argv)
    response = await jp_fetch("api", "kernels", method="POST", body='{"name": "dies-at-once"}')
    kernel_id = json.loads(response.body)["id"]
    assert kernel_id in hub.watched_kernels()
    await wait_for(
        lambda: kernel_id not in hub.watched_kernels(), "the hub to let the dead kernel go", 30
    )


class GatedSessions:
    """The server's session manager, answering only once the gate opens.

    The hub looks up each report's session path before emitting it, one event at a time,
    so a closed gate is an event bus that has fallen behind the kernels.
    """

    def __init__(self, real: Any) -> None:
        self.real = real
        self.gate = asyncio.Event()

    async def get_session(self, **kwargs: Any) -> Any:
        await self.gate.wait()
        return await self.real.get_session(**kwargs)


async def send_while_the_bus_is_behind(
    kernel: RunningKernel,
    hub: ReportHub,  # noqa: F811
    bus: Bus,  # noqa: F811
    batches: list[list[dict[str, Any]]],
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Send each batch from its own cell with the bus held: the ids in the order they
    reached the hub (hand-made and the cells' own), and the reports the bus emitted.

    A kernel's iopub socket keeps at most 1000 messages for a subscriber that is behind
    (ZeroMQ's high-water mark) and drops the rest, so one cell sending more than that can
    lose some on a busy machine before the hub sees them; each batch waits for the one
    before it to arrive.
    """
    sessions = GatedSessions(hub.session_manager)
    hub.session_manager = sessions
    arrived: list[Any] = []
    hub.on_report = lambda _kid, report: arrived.append(report["cell_id"])
    expected = 0
    for batch in batches:
        await kernel.ok(send_cell(*batch))
        expected += len(batch) + 1  # and the cell's own report
        await wait_for(lambda n=expected: len(arrived) == n, "every report to arrive", 90)
    assert bus.events == []
    sessions.gate.set()
    await wait_for(lambda: bus.data and bus.data[-1]["report"]["cell_id"] == arrived[-1], "the bus")
    await asyncio.sleep(0.2)  # nothing more comes
    return arrived, [d["report"] for d in bus.data]


def dropped_count(caplog: pytest.LogCaptureFixture) -> int:
    records = tfcoach_records(caplog, "dropped: the event bus is behind")
    return sum(int(message.split()[1]) for message in records)


@on_server_loop
async def test_reports_waiting_for_the_event_bus_are_bounded_in_count(
    start_kernel: Callable[..., Awaitable[RunningKernel]],  # noqa: F811
    hub: ReportHub,  # noqa: F811
    bus: Bus,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    kernel = await start_kernel()
    sent = [report(f"small-{index}") for index in range(MAX_PENDING + 50)]
    batches = [sent[start : start + 250] for start in range(0, len(sent), 250)]
    arrived, emitted = await send_while_the_bus_is_behind(kernel, hub, bus, batches)
    ids = [r["cell_id"] for r in emitted]
    # The first was already being emitted when the bus stalled; of the rest, the newest
    # MAX_PENDING went out, in order, ending with the last cell's own report.
    assert ids[0] == "small-0"
    assert len(ids) == 1 + MAX_PENDING
    assert ids[1:] == arrived[len(arrived) - MAX_PENDING :]
    assert ids[-2] == sent[-1]["cell_id"]
    assert not str(ids[-1]).startswith("small-")
    assert dropped_count(caplog) == len(arrived) - 1 - MAX_PENDING
    assert server_errors(caplog) == []


@on_server_loop
async def test_reports_waiting_for_the_event_bus_are_bounded_in_bytes(
    start_kernel: Callable[..., Awaitable[RunningKernel]],  # noqa: F811
    hub: ReportHub,  # noqa: F811
    bus: Bus,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    kernel = await start_kernel()
    size = 200 * 1024
    count = MAX_PENDING_BYTES // size + 10  # far fewer than MAX_PENDING, more than fit
    sent = [
        report(f"big-{index}", notes=[{"text": "x" * size, "course": None}])
        for index in range(count)
    ]
    _, emitted = await send_while_the_bus_is_behind(kernel, hub, bus, [sent])
    ids = [str(r["cell_id"]) for r in emitted]
    assert ids[0] == "big-0"
    waited = emitted[1:]  # what was held in the queue
    held = sum(len(json.dumps(r).encode()) for r in waited)
    assert held <= MAX_PENDING_BYTES, held
    assert held >= MAX_PENDING_BYTES - 2 * size, held  # the budget is used, not wasted
    kept = ids[1:-1]
    assert kept == [f"big-{i}" for i in range(count - len(kept), count)]
    assert dropped_count(caplog) == count - 1 - len(kept)
    assert server_errors(caplog) == []


@on_server_loop
async def test_reconnects_to_a_dead_kernel_back_off(
    start_kernel: Callable[..., Awaitable[RunningKernel]],  # noqa: F811
    jp_serverapp: Any,
    hub: ReportHub,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    kernel = await start_kernel()
    await kernel.ok("1")
    managed = jp_serverapp.kernel_manager.get_kernel(kernel.kernel_id)
    # No restarter: nothing will revive the kernel or tell the hub it died for good, as
    # under a kernel manager without one. The hub's iopub socket is left knocking.
    managed.stop_restarter()
    socket = hub._kernels[kernel.kernel_id].iopub.socket  # type: ignore[union-attr]
    # The monitor's end of the inproc pair, as a plain socket of the hub's own context.
    address = f"inproc://tfcoach-test-monitor-{kernel.kernel_id}"
    socket.monitor(address, zmq.EVENT_CONNECT_RETRIED)
    monitor = managed.context.socket(zmq.PAIR, socket_class=zmq.Socket)
    monitor.connect(address)
    kernel.close()
    await managed.provisioner.kill()
    intervals: list[int] = []
    seconds = 2.0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            while monitor.poll(0):
                event = recv_monitor_message(monitor)
                intervals.append(int(event["value"]))
            await asyncio.sleep(0.01)
    finally:
        socket.disable_monitor()
        monitor.close(linger=0)
    # ZeroMQ reports each retry with the interval it waits next (plus up to 10 ms of
    # jitter): growing from 10 ms to the cap, then staying there.
    assert intervals, "the hub never retried: the kernel did not die?"
    assert intervals[0] < 30, intervals
    assert max(intervals) >= IOPUB_RECONNECT_MAX_MS, intervals
    assert all(value < IOPUB_RECONNECT_MAX_MS + 10 for value in intervals), intervals
    assert intervals == sorted(intervals[:4]) + intervals[4:], intervals
    # A fixed 10 ms interval would be about 130 retries in these two seconds.
    assert len(intervals) <= seconds * 1000 / IOPUB_RECONNECT_MAX_MS + 5, len(intervals)
    assert server_errors(caplog) == []
