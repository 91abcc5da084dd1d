"""The coach feeds the study deck (``server/study_feed.py``): a pitfall the kernel monitor
or the static rules find in the learner's notebook makes the cards of its course section due
in ``GET tfcoach/api/study/deck``, with the notebook's path and the code cell; the server's
``c.TfCoach.study_from_findings`` and JupyterLab's ``studyFromFindings`` turn it off; a
broken store never stops reports or analyses.

Real parts: a jupyter_server with the extension, real kernels with the monitor loaded by the
server's bootstrap (started through ``POST /api/sessions``, so the report has a notebook
path), cells sent as JupyterLab sends them (``cellId`` in the request's metadata), the real
analysis behind ``POST tfcoach/api/analyze``, a real SQLite store per test.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyterlab_tfcoach.course.terms import terms_for_section
from jupyterlab_tfcoach.server.handlers import SETTINGS_STUDY_FEED
from jupyterlab_tfcoach.server.kernels import REPORT_SCHEMA_ID
from jupyterlab_tfcoach.server.study_feed import LAB_PLUGIN_SETTINGS, StudyFeed
from tests.harness import on_server_loop
from tests.server.test_server_kernels import (
    TIMEOUT,
    Bus,
    Fetch,
    RunningKernel,
    wait_for,
)

NOTEBOOK = "lessons/wind_speed.ipynb"
# The learner's notebook as saved: a Markdown cell first, so the code-cell index (2) is
# not the notebook's cell index (3).
CELLS = [
    ("intro", "markdown", "# Wind speed"),
    ("imports", "code", "import tensorflow as tf"),
    ("gust", "code", "gust = tf.Variable([3.0, 4.5])"),
    ("decay", "code", "gust = gust * 0.8"),
    (
        "decay-ok",
        "code",
        "gust_weight = tf.Variable([3.0, 4.5])\ngust_weight.assign(gust_weight * 0.8)",
    ),
]
DECAY_CODE_CELL = 2
# A static pitfall: a print inside a tf.function (TFC002, section side-effects), line 3 of
# code cell 1.
STATIC_CELLS = [
    "import tensorflow as tf",
    "@tf.function\ndef damp(level):\n    print('damping', level)\n    return level * 0.5\n",
    "damp(tf.constant(2.0))",
]
STATIC_TERMS = [term.id for term in terms_for_section("side-effects")]


@pytest.fixture
def study_db(tmp_path: Path) -> Path:
    return tmp_path / "learner" / "study.sqlite3"


@pytest.fixture
def tfcoach_config(
    study_db: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """The store per test; a test's ``indirect`` parameter adds options, or asks for a
    store that cannot be used (``broken_store``: its folder is a file)."""
    options = dict(getattr(request, "param", {}))
    if options.pop("broken_store", False):
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("a file where the store's folder should be", encoding="utf-8")
        study_db = blocker / "study.sqlite3"
    return {"study_db_path": str(study_db), **options}


@pytest.fixture
def lab_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """JupyterLab's user settings folder for this server (as ``jupyter lab`` reads it)."""
    folder = tmp_path / "lab-user-settings"
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(folder))
    return folder / LAB_PLUGIN_SETTINGS


@pytest.fixture(name="bus")
def report_bus(jp_serverapp: Any) -> Bus:
    """Every report event the server emits (as ``test_server_kernels.bus``)."""
    events = Bus()
    jp_serverapp.event_logger.add_listener(schema_id=REPORT_SCHEMA_ID, listener=events.listener)
    return events


@pytest.fixture
def feed(jp_serverapp: Any) -> StudyFeed:
    feed: StudyFeed = jp_serverapp.web_app.settings[SETTINGS_STUDY_FEED]
    feed.batches = []
    return feed


def write_notebook(root: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    for cell_id, kind, source in CELLS:
        make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        notebook.cells.append(make(source, id=cell_id))
    path = root / NOTEBOOK
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


async def open_notebook(jp_serverapp: Any, jp_fetch: Fetch, root: Path) -> RunningKernel:
    write_notebook(root)
    body = {"path": NOTEBOOK, "type": "notebook", "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    kernel = RunningKernel(jp_serverapp, jp_fetch, json.loads(response.body)["kernel"]["id"])
    await kernel.connect()
    return kernel


async def run_cell(kernel: RunningKernel, cell_id: str) -> dict[str, Any]:
    """Execute a cell of ``CELLS`` as JupyterLab does: its id in the request's metadata."""
    client = kernel.client
    assert client is not None
    source = next(source for cid, _kind, source in CELLS if cid == cell_id)
    content = {
        "code": source,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    msg = client.session.msg("execute_request", content, metadata={"cellId": cell_id})
    client.shell_channel.send(msg)
    deadline = time.monotonic() + TIMEOUT
    while True:
        reply = await client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            assert reply["content"]["status"] == "ok", reply["content"]
            return dict(reply["content"])


async def settled(feed: StudyFeed) -> None:
    """Every batch the feed scheduled so far has been written (or refused)."""
    assert feed.batches is not None
    await asyncio.gather(*feed.batches)


async def deck(jp_fetch: Fetch, terms: list[str]) -> dict[str, dict[str, Any]]:
    response = await jp_fetch("tfcoach", "api", "study", "deck", params={"terms": ",".join(terms)})
    return {card["term"]: card for card in json.loads(response.body)["cards"]}


async def analyze(jp_fetch: Fetch, path: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"cells": STATIC_CELLS}
    if path is not None:
        body["path"] = path
    response = await jp_fetch("tfcoach", "api", "analyze", method="POST", body=json.dumps(body))
    answer: dict[str, Any] = json.loads(response.body)
    return answer


async def run_to_reports(
    kernel: RunningKernel, bus: Bus, feed: StudyFeed, cell_ids: list[str]
) -> list[dict[str, Any]]:
    before = len(bus.events)
    for cell_id in cell_ids:
        await run_cell(kernel, cell_id)
    await wait_for(lambda: len(bus.events) >= before + len(cell_ids), "report events")
    await settled(feed)
    return [data["report"] for data in bus.data[before:]]


def rebinding_terms(reports: list[dict[str, Any]]) -> list[str]:
    """The terms of the section the report of the ``decay`` cell names for ``gust``."""
    decay = next(r for r in reports if r["cell_id"] == "decay")
    rebound = [v for v in decay["variables"] if v["name"] == "gust"]
    assert [v["change"] for v in rebound] == ["rebound_to_tensor"], decay
    terms = [term.id for term in terms_for_section(rebound[0]["course"]["section"])]
    assert terms, rebound[0]["course"]
    return terms


@on_server_loop
async def test_a_pitfall_the_monitor_finds_makes_its_cards_due_with_notebook_and_cell(
    jp_serverapp: Any, jp_fetch: Fetch, jp_root_dir: Path, bus: Bus, feed: StudyFeed
) -> None:
    kernel = await open_notebook(jp_serverapp, jp_fetch, jp_root_dir)
    try:
        # The correct look-alike (assign keeps the variable) and the setup record nothing.
        quiet = await run_to_reports(kernel, bus, feed, ["imports", "gust", "decay-ok"])
        assert not any(r["variables"] or r["error"] for r in quiet), quiet
        assert sum(await asyncio.gather(*feed.batches)) == 0

        reports = await run_to_reports(kernel, bus, feed, ["decay"])
        terms = rebinding_terms(reports)
        cards = await deck(jp_fetch, terms)
        for term in terms:
            card = cards[term]
            assert card["state"] != "new" and card["due_now"], card
            assert card["met"]["count"] == 1, card
            last = card["met"]["last"]
            assert (last["source"], last["cell"], last["line"]) == (
                NOTEBOOK,
                DECAY_CODE_CELL,
                None,
            ), card

        # The same cell run again soon after, and the static rules finding the same pitfall
        # there (TFC001, code cell 2): recorded once.
        await run_cell(kernel, "gust")
        await run_to_reports(kernel, bus, feed, ["decay"])
        code_cells = [source for _cid, kind, source in CELLS if kind == "code"]
        body = {"cells": code_cells, "path": NOTEBOOK}
        response = await jp_fetch("tfcoach", "api", "analyze", method="POST", body=json.dumps(body))
        findings = json.loads(response.body)["findings"]
        assert [(f["code"], f["cell"]) for f in findings] == [("TFC001", DECAY_CODE_CELL)]
        await settled(feed)
        again = await deck(jp_fetch, terms)
        assert [again[term]["met"]["count"] for term in terms] == [1] * len(terms)
    finally:
        kernel.close()


@pytest.mark.parametrize("tfcoach_config", [{"study_from_findings": False}], indirect=True)
@on_server_loop
async def test_the_server_option_off_records_nothing(
    jp_serverapp: Any,
    jp_fetch: Fetch,
    jp_root_dir: Path,
    bus: Bus,
    feed: StudyFeed,
) -> None:
    assert feed.enabled is False
    kernel = await open_notebook(jp_serverapp, jp_fetch, jp_root_dir)
    try:
        reports = await run_to_reports(kernel, bus, feed, ["imports", "gust", "decay"])
        terms = rebinding_terms(reports)
        assert (await analyze(jp_fetch, NOTEBOOK))["findings"]
        await settled(feed)
        assert feed.batches == []
        cards = await deck(jp_fetch, terms + STATIC_TERMS)
        assert all(card["state"] == "new" for card in cards.values()), cards
        assert all(card["met"] == {"count": 0, "last": None} for card in cards.values())
    finally:
        kernel.close()


@on_server_loop
async def test_a_pitfall_the_static_rules_find_makes_its_cards_due_once(
    jp_fetch: Fetch, feed: StudyFeed, lab_settings: Path
) -> None:
    assert STATIC_TERMS
    # No path: the place is unknown, nothing is recorded.
    answer = await analyze(jp_fetch, None)
    assert [f["code"] for f in answer["findings"]][:1] == ["TFC002"], answer
    await settled(feed)
    cards = await deck(jp_fetch, STATIC_TERMS)
    assert all(card["met"]["count"] == 0 for card in cards.values())

    # The panel analyses on every pause in typing: the same finding is recorded once.
    for _pause in range(3):
        await analyze(jp_fetch, NOTEBOOK)
    await settled(feed)
    cards = await deck(jp_fetch, STATIC_TERMS)
    for term in STATIC_TERMS:
        card = cards[term]
        assert card["due_now"] and card["state"] != "new", card
        assert card["met"]["count"] == 1, card
        last = card["met"]["last"]
        assert (last["source"], last["cell"], last["line"]) == (NOTEBOOK, 1, 3), card


@on_server_loop
async def test_the_learners_jupyterlab_setting_turns_it_off(
    jp_fetch: Fetch, feed: StudyFeed, lab_settings: Path
) -> None:
    # As JupyterLab's settings editor saves it (JSON5: comments allowed).
    lab_settings.parent.mkdir(parents=True)
    lab_settings.write_text(
        '{\n  // TF Coach\n  "studyFromFindings": false,\n  "showCellBadges": true\n}\n',
        encoding="utf-8",
    )
    await analyze(jp_fetch, NOTEBOOK)
    await settled(feed)
    cards = await deck(jp_fetch, STATIC_TERMS)
    assert all(card["met"]["count"] == 0 for card in cards.values()), cards

    # Turned on again: the next analysis counts (the file is read again when it changes).
    lab_settings.write_text('{"studyFromFindings": true}\n', encoding="utf-8")
    await analyze(jp_fetch, "lessons/other.ipynb")
    await settled(feed)
    cards = await deck(jp_fetch, STATIC_TERMS)
    assert all(card["met"]["count"] == 1 for card in cards.values()), cards
    assert {card["met"]["last"]["source"] for card in cards.values()} == {"lessons/other.ipynb"}


@pytest.mark.parametrize("tfcoach_config", [{"broken_store": True}], indirect=True)
@on_server_loop
async def test_a_broken_store_never_stops_reports_or_analyses(
    jp_serverapp: Any,
    jp_fetch: Fetch,
    jp_root_dir: Path,
    bus: Bus,
    feed: StudyFeed,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    kernel = await open_notebook(jp_serverapp, jp_fetch, jp_root_dir)
    try:
        reports = await run_to_reports(kernel, bus, feed, ["imports", "gust", "decay"])
        rebinding_terms(reports)  # the pitfall's report arrived on the bus
        stored = await kernel.reports()
        assert [r["cell_id"] for r in stored] == ["imports", "gust", "decay"]
        assert (await analyze(jp_fetch, NOTEBOOK))["findings"]
        await settled(feed)
        failures = [
            r.getMessage()
            for r in caplog.records
            if r.getMessage().startswith("tfcoach: could not record a term met in code")
        ]
        assert len(failures) == 2, failures  # the report's batch and the analysis's
        assert all("not-a-folder" in failure for failure in failures), failures
    finally:
        kernel.close()
