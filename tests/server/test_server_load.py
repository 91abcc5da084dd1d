"""The server stays responsive under load (issue #24, item 5), through a real jupyter_server.

- With twelve ~1 MiB analyses and twelve hovers on ~1 MiB notebooks in flight, a tiny
  analysis answers (with its finding) within 2 s, and jupyter_server's own ``GET
  api/status`` stays quick: large work runs in worker processes, off the event loop and
  its interpreter lock; small work has threads of its own.
- Budgets count from the request's arrival: an analysis that waited past its budget
  answers at once with the "not started" note, one still running answers by its budget
  plus the grace, a hover past its budget answers no card, and the index it started
  answers the next hover.
- A large analysis in a worker process gives what the library gives, with the page's
  settings; a worker that dies is a 503, and the next request gets a new worker.

Bounds are generous for a shared machine but far below what the server did before (a
first tiny analysis at 7.7 s, ``api/status`` stalled up to 7.8 s, hovers answered after
37-81 s); ``benchmarks/bench_server_load.py`` prints the exact figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from jupyter_server.utils import url_path_join
from tornado.httpclient import HTTPRequest, HTTPResponse
from tornado.simple_httpclient import SimpleAsyncHTTPClient

from jupyterlab_tfcoach.analysis import Config, check_source
from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.server import lanes, work
from tests.harness import on_server_loop

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow

Fetch = Callable[..., Awaitable[HTTPResponse]]
Post = Callable[[str, Any], Awaitable[tuple[float, HTTPResponse]]]

MAX_BODY = 1024 * 1024
TINY = "import tensorflow as tf\nw = tf.Variable(1.0)\nw = w + 1\n"
HEADER = "import tensorflow as tf\nfrom tensorflow import keras\n"
# One chunk of a training script (a Variable rebound to a tensor, a tape, a tf.function
# with a Python side effect): each copy has its own names, so no work is shared.
CHUNK = """

class Scaled{i}(keras.layers.Layer):
    def build(self, shape):
        self.kernel = self.add_weight(shape=(shape[-1], 4), name="kernel")

    def call(self, inputs):
        return tf.matmul(inputs, self.kernel)


w_{i} = tf.Variable(tf.zeros([4]))
optimizer_{i} = keras.optimizers.SGD(0.1)


@tf.function
def train_step_{i}(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x * w_{i} - y) ** 2)
    grads = tape.gradient(loss, [w_{i}])
    optimizer_{i}.apply_gradients(zip(grads, [w_{i}]))
    print("loss", loss)
    return loss


for step in range(3):
    w_{i} = w_{i} - 0.1 * train_step_{i}(tf.ones([4]), tf.zeros([4]))
"""
CELL_CHUNKS = 40  # chunks per notebook cell


def big_source(seed: int, limit: int = MAX_BODY - 8192) -> str:
    """A TensorFlow module whose JSON body (as a source or as cells) stays under ``limit``."""
    parts = [f"# load {seed}\n", HEADER]
    size = len(json.dumps("".join(parts)))
    index = 0
    while True:
        chunk = CHUNK.format(i=f"{seed}_{index}")
        size += len(json.dumps(chunk)) + 8
        if size > limit:
            return "".join(parts)
        parts.append(chunk)
        index += 1


def cells_of(source: str) -> list[str]:
    """The source as notebook cells, cut between chunks (each cell parses on its own)."""
    head, *chunks = source.split("\n\n\nclass ")
    chunks = ["class " + chunk for chunk in chunks]
    cells = [head]
    for start in range(0, len(chunks), CELL_CHUNKS):
        cells.append("\n\n\n".join(chunks[start : start + CELL_CHUNKS]))
    return cells


def hover_on_a_variable(cells: list[str]) -> dict[str, Any]:
    """A hover on ``tf.Variable`` in the notebook's last cell (it has a card)."""
    cell = len(cells) - 1
    for line, text in enumerate(cells[cell].split("\n")):
        column = text.find("tf.Variable(")
        if column >= 0:
            character = column + len("tf.Vari")
            return {"cells": cells, "cell": cell, "line": line, "character": character}
    raise AssertionError("no tf.Variable in the last cell")


@pytest.fixture
def post(http_server_client: Any, jp_auth_header: dict[str, str], jp_base_url: str) -> Post:
    """POST to the test server on a client of its own with room for every request of a
    load at once (jp_fetch's client opens 10 connections, then queues), the body sent as
    JupyterLab sends it (``Content-Type: application/json``)."""
    client = SimpleAsyncHTTPClient(force_instance=True, max_clients=64)
    headers = {**jp_auth_header, "Content-Type": "application/json"}

    async def send(route: str, body: Any) -> tuple[float, HTTPResponse]:
        """``body``: JSON text, or a value to encode."""
        url = http_server_client.get_url(url_path_join(jp_base_url, "tfcoach", "api", route))
        text = body if isinstance(body, str) else json.dumps(body)
        request = HTTPRequest(url, method="POST", body=text, headers=headers, request_timeout=120)
        started = time.monotonic()
        response = await client.fetch(request, raise_error=False)
        return time.monotonic() - started, response

    return send


def answer(response: HTTPResponse) -> Any:
    assert response.code == 200, response.body
    return json.loads(response.body)


async def timed_fetch(fetch: Fetch, *parts: str, **kwargs: Any) -> tuple[float, Any]:
    started = time.monotonic()
    response = await fetch(*parts, **kwargs)
    return time.monotonic() - started, json.loads(response.body)


@on_server_loop
async def test_a_tiny_analysis_and_the_status_answer_while_large_ones_run(
    jp_fetch: Fetch, post: Post
) -> None:
    # Encoded beforehand: the client shares the server's event loop here.
    analyses = [json.dumps({"source": big_source(seed)}) for seed in range(12)]
    hovers = [
        json.dumps(hover_on_a_variable(cells_of(big_source(100 + seed)))) for seed in range(12)
    ]
    await timed_fetch(jp_fetch, "api", "status")  # connections and imports made
    load = asyncio.gather(
        *(post("analyze", body) for body in analyses), *(post("hover", body) for body in hovers)
    )
    statuses: list[float] = []

    async def poll_status() -> None:
        while not load.done():
            seconds, _ = await timed_fetch(jp_fetch, "api", "status")
            statuses.append(seconds)
            await asyncio.sleep(0.05)

    status_poller = asyncio.ensure_future(poll_status())
    await asyncio.sleep(0.5)  # the load is in: bodies read, work queued and running
    tiny_seconds, tiny = await timed_fetch(
        jp_fetch, "tfcoach", "api", "analyze", method="POST", body=json.dumps({"source": TINY})
    )
    assert tiny_seconds < 2.0, f"a tiny analysis took {tiny_seconds:.2f} s under load"
    assert [f["code"] for f in tiny["findings"]] == ["TFC001"]
    assert "notes" not in tiny

    answered = await load
    await status_poller
    for seconds, response in answered[:12]:
        body = answer(response)
        assert seconds < work.ANALYZE_BUDGET_S + work.ANALYZE_GRACE_S + 3.0, seconds
        assert body["findings"] or body["notes"]
    for seconds, response in answered[12:]:
        assert "card" in answer(response)
        assert seconds < work.HOVER_BUDGET_S + 3.0, seconds
    # jupyter_server's own route, answered by the event loop alone: it does not wait for
    # the analyses (before: up to 7.8 s, 3.9 s at the 95th percentile). The slowest is
    # one that came in with the load's 24 MiB of bodies, which the loop reads and decodes.
    assert len(statuses) >= 20
    ordered = sorted(statuses)
    assert ordered[len(ordered) * 9 // 10] < 0.1, ordered
    assert ordered[-1] < 1.5, ordered


@on_server_loop
async def test_analyses_that_waited_past_their_budget_answer_with_a_note(
    post: Post, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 1.5
    monkeypatch.setattr(work, "ANALYZE_BUDGET_S", budget)
    answered = await asyncio.gather(*(post("analyze", {"source": big_source(s)}) for s in range(8)))
    notes = []
    for seconds, response in answered:
        body = answer(response)
        # Not one of them runs on: each answers by its budget and the grace.
        assert seconds < budget + work.ANALYZE_GRACE_S + 1.5, seconds
        notes.extend(body.get("notes", []))
    # Two worker processes cannot analyse eight ~1 MiB sources in 1.5 s: the ones that
    # waited for a worker past their budget were never started.
    not_started = [note for note in notes if note.startswith("analysis not started: ")]
    assert not_started, notes
    assert all(f"past its time budget of {round(budget * 1000)} ms" in n for n in not_started)


@on_server_loop
async def test_a_hover_past_its_budget_has_no_card_and_the_next_one_has(
    post: Post, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(work, "HOVER_BUDGET_S", 0.05)
    body = hover_on_a_variable(cells_of(big_source(200)))
    seconds, response = await post("hover", body)
    assert answer(response) == {"card": None}  # indexing ~1 MiB takes far longer
    assert seconds < 1.0, seconds
    # The index goes on being built in the worker, for the hovers that follow.
    monkeypatch.setattr(work, "HOVER_BUDGET_S", 2.0)
    deadline = time.monotonic() + 60
    while True:
        seconds, response = await post("hover", body)
        card = answer(response)["card"]
        if card is not None or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert card is not None and card["title"] == "tf.Variable"


@on_server_loop
async def test_a_large_analysis_in_a_worker_gives_what_the_library_gives(post: Post) -> None:
    source = big_source(300, limit=256 * 1024)
    assert len(source) > lanes.SMALL_CHARS  # the large lane
    settings = {"select": ["TFC001", "TFC002"], "ignore": ["TFC002", "TFC999"]}
    _, response = await post("analyze", {"source": source, "settings": settings})
    body = answer(response)
    config = Config.from_options(select=["TFC001", "TFC002"], ignore=["TFC002"])
    course = get_course()
    expected = [
        f.to_json(course.ref(f.section_id, None)) for f in check_source(source, config).findings
    ]
    assert expected and {f["code"] for f in expected} == {"TFC001"}
    assert body["findings"] == expected
    assert "TFC999" in body["config_error"]
    assert "notes" not in body
    _, response = await post("analyze", {"cells": cells_of(source)})
    assert {f["cell"] for f in answer(response)["findings"]} == set(range(1, len(cells_of(source))))


@on_server_loop
async def test_a_worker_that_dies_is_a_503_and_the_next_request_gets_a_new_one(
    post: Post,
) -> None:
    lane = lanes.ANALYSIS_LARGE  # the process's, shared with the tests before
    deadline = time.monotonic() + 60
    while lane.occupied and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # work the earlier tests left running
    assert not lane.occupied
    # Each lane thread's worker started and idle: the request below is read at once.
    small_large = big_source(500, limit=96 * 1024)
    for _, response in await asyncio.gather(
        *(post("analyze", {"source": small_large}) for _ in range(lane.workers))
    ):
        answer(response)
    request = asyncio.ensure_future(post("analyze", {"source": big_source(501)}))
    while not lane.occupied:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.5)  # its worker is analysing ~1 MiB (seconds of work)
    for process in lanes.worker_processes():
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
    _, response = await request
    assert response.code == 503, response.body
    assert "worker process ended" in json.loads(response.body)["message"]
    # The next requests get new workers (on whichever lane thread they land).
    for _, response in await asyncio.gather(
        *(post("analyze", {"source": small_large}) for _ in range(lane.workers))
    ):
        assert answer(response)["findings"]
