"""The language server over stdio on worst-case input (issue #13).

A pass that runs out of its time budget publishes what it found plus one
Information diagnostic on the first line; a file of thousands of conditional
rebinds is analysed in about the time of a straight-line one; a too-deep
expression and Hypothesis-generated programs never take the server down; an
expression nested too deeply to check (issue #24) is one Warning beside the
findings of the rest, in a file and in a notebook cell."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs
import hypothesmith
import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.analysis.testing import WORST_CASE_SHAPES, deep_sum
from tests.lsp.helpers import (
    DATA,
    alive,
    codes,
    config,
    initialize,
    open_text,
    replace_all,
    wait_published,
)

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(120)]

TEXT = (DATA / "train.py").read_text(encoding="utf-8")


@pytest_lsp.fixture(scope="module", config=config(TFCOACH_ANALYSIS_BUDGET_MS="0"))
async def spent(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=config(TFCOACH_ANALYSIS_BUDGET_MS="0"))
async def spent_pull(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, pull=True)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    yield
    await lsp_client.shutdown_session()


# The real server, with the scheduler's own debug lines ("cancelled the queued pass of
# URI vN", "dropping stale result for URI vN") appended to a file, and nothing else
# logged at debug (pygls would log every 384 KB message body).
PASS_LOG = Path(tempfile.gettempdir()) / f"tfcoach-lsp-passes-{os.getpid()}.log"
LOGGED_SERVER = """import logging, runpy, sys
handler = logging.FileHandler(sys.argv.pop(1), encoding="utf-8")
handler.setFormatter(logging.Formatter("%(message)s"))
scheduler = logging.getLogger("lsp_server.diagnostics")
scheduler.addHandler(handler)
scheduler.setLevel(logging.DEBUG)
scheduler.propagate = False
runpy.run_module("lsp_server", run_name="__main__", alter_sys=True)
"""
LOGGED = attrs.evolve(config(), server_command=[sys.executable, "-c", LOGGED_SERVER, str(PASS_LOG)])


@pytest_lsp.fixture(scope="module", config=LOGGED)
async def logged(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    yield
    await lsp_client.shutdown_session()
    PASS_LOG.unlink(missing_ok=True)


async def test_a_spent_budget_publishes_one_note_on_the_first_line(spent: LanguageClient) -> None:
    uri = (DATA / "budget.py").as_uri()
    open_text(spent, uri, TEXT)
    published = await wait_published(spent, uri, version=1)
    (note,) = published.diagnostics  # stopped before the first rule: the note alone
    assert note.severity == types.DiagnosticSeverity.Information
    assert note.message.startswith("analysis stopped after ")
    assert note.range.start == types.Position(line=0, character=0)
    assert note.range.end.line == 0
    assert await alive(spent, uri)


async def test_a_spent_budget_is_said_in_a_pulled_report_too(
    spent_pull: LanguageClient,
) -> None:
    uri = (DATA / "budget_pull.py").as_uri()
    open_text(spent_pull, uri, TEXT)
    report = await spent_pull.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    (note,) = report.items  # stopped before the first rule: the note alone
    assert note.severity == types.DiagnosticSeverity.Information
    assert note.message.startswith("analysis stopped after ")
    assert note.range.start == types.Position(line=0, character=0)
    assert await alive(spent_pull, uri)


async def test_conditional_rebinds_are_analysed(client: LanguageClient) -> None:
    uri = (DATA / "rebinds.py").as_uri()
    open_text(client, uri, WORST_CASE_SHAPES["if_else"](4000))  # the 106 KiB file
    published = await wait_published(client, uri, version=1, timeout=30)
    assert codes(published.diagnostics) == ["TFC001"]
    assert published.diagnostics[0].range.start.line == 5


async def test_deep_expression_publishes_nothing_and_the_server_lives(
    client: LanguageClient,
) -> None:
    uri = (DATA / "deep.py").as_uri()
    open_text(client, uri, deep_sum(200_000))
    assert (await wait_published(client, uri, version=1, timeout=30)).diagnostics == []
    assert await alive(client, uri)


def _generated_programs(count: int) -> list[str]:
    """``count`` programs from hypothesmith (fixed seed), with TensorFlow lines mixed in."""
    lines = st.sampled_from(
        [
            "import tensorflow as tf\n",
            "w = tf.Variable(1.0)\n",
            "@tf.function\ndef f(x):\n    print(x)\n    return x\n",
        ]
    )
    programs = st.lists(
        st.one_of(hypothesmith.from_grammar(auto_target=False), lines), max_size=4
    ).map(lambda pieces: "import tensorflow as tf\n" + "".join(pieces))
    found: list[str] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(programs)
    def collect(source: str) -> None:
        found.append(source)

    collect()
    return found


async def test_generated_programs(client: LanguageClient) -> None:
    for index, source in enumerate(_generated_programs(20)):
        uri = (DATA / f"generated_{index}.py").as_uri()
        open_text(client, uri, source)
        published = await wait_published(client, uri, version=1, timeout=30)
        lines = source.count("\n") + 1
        assert all(0 <= d.range.start.line <= lines for d in published.diagnostics)
    assert await alive(client, uri)


async def test_stale_versions_do_not_queue_behind_a_slow_pass(logged: LanguageClient) -> None:
    uri = (DATA / "slow.py").as_uri()
    block = TEXT + "\n"
    text = block * (384 * 1024 // len(block.encode()))  # a pass of most of a second
    open_text(logged, uri, text)
    await wait_published(logged, uri, version=1, timeout=60)
    # Eight edits while a pass runs: the ones superseded before they start are cancelled,
    # so about two passes run (the one under way and the last), not eight. Decided by what
    # ran, not by how long it took: each stale pass that ran is dropped on the protocol
    # thread, in order, before version 9's result is published.
    for version in range(2, 10):
        replace_all(logged, uri, text + f"# edit {version}\n", version)
    published = await wait_published(logged, uri, version=9, timeout=60)
    assert published.diagnostics
    lines = PASS_LOG.read_text(encoding="utf-8").splitlines()
    stale_ran = [line for line in lines if line.startswith(f"dropping stale result for {uri} ")]
    # One pass under way when the edits arrive; a second only if the protocol thread read
    # the next edit after that pass ended. Without cancellation all seven stale ones run.
    assert len(stale_ran) <= 2, lines


# Issue #24: 500 nested lambdas on one line once made the analysis give up without a word
# (no diagnostics at all). The expression is cut, said in one Warning, the rest checked.
PITFALL = "import tensorflow as tf\n\nw = tf.Variable(1.0)\ng = 1.0\nw = w - 0.1 * g\n"
NESTED_LAMBDAS = "f = " + "lambda: " * 500 + "0\n"
CUT_AT = len("f = ") + 200 * len("lambda: ")  # where the 201st lambda starts


def _too_deep_warning(diagnostics: list[types.Diagnostic]) -> types.Diagnostic:
    (warning,) = [d for d in diagnostics if d.code is None]
    assert warning.severity == types.DiagnosticSeverity.Warning
    assert warning.source == "tfcoach"
    assert warning.message.startswith("too deeply nested to check: an expression nests more")
    return warning


async def test_nested_lambdas_publish_a_warning_beside_the_findings(
    client: LanguageClient,
) -> None:
    uri = (DATA / "nested_lambdas.py").as_uri()
    open_text(client, uri, PITFALL + NESTED_LAMBDAS)
    published = await wait_published(client, uri, version=1, timeout=30)
    warning = _too_deep_warning(published.diagnostics)
    assert warning.range.start == types.Position(line=5, character=CUT_AT)
    assert warning.range.end == types.Position(line=5, character=len(NESTED_LAMBDAS) - 1)
    (finding,) = [d for d in published.diagnostics if d.code is not None]
    assert (finding.code, finding.range.start.line) == ("TFC001", 4)
    assert await alive(client, uri)


async def test_nested_lambdas_in_a_notebook_cell_publish_a_warning_on_that_cell(
    client: LanguageClient,
) -> None:
    path = (DATA / "nested_lambdas.ipynb").as_posix()
    cells = {"setup": PITFALL, "deep": "y = 1\n" + NESTED_LAMBDAS}
    uris = {name: f"vscode-notebook-cell:{path}#{name}" for name in cells}
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=(DATA / "nested_lambdas.ipynb").as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=types.NotebookCellKind.Code, document=uris[name])
                    for name in cells
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uris[name], language_id="python", version=1, text=text)
                for name, text in cells.items()
            ],
        )
    )
    setup = await wait_published(client, uris["setup"], version=1, timeout=30)
    deep = await wait_published(client, uris["deep"], version=1, timeout=30)
    assert codes(setup.diagnostics) == ["TFC001"]
    (warning,) = deep.diagnostics
    assert _too_deep_warning([warning]).range.start == types.Position(line=1, character=CUT_AT)
