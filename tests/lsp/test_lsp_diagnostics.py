"""Diagnostics for Python files: content, positions in the negotiated encoding,
incremental edits, stale results, close, and push vs pull."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.analysis import analyze_source
from jupyterlab_tfcoach.course import course_ref
from tests.lsp.helpers import (
    DATA,
    close_text,
    codes,
    config,
    initialize,
    open_text,
    quiet_for,
    replace_all,
    utf16_column,
    wait_published,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

TRAIN = (DATA / "train.py").read_text(encoding="utf-8")
TRAIN_URI = (DATA / "train.py").as_uri()

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    result = await initialize(lsp_client, root=DATA)
    assert result.capabilities.position_encoding in (None, types.PositionEncodingKind.Utf16)
    yield
    await lsp_client.shutdown_session()


def expected(source: str, encode: Any = utf16_column) -> list[dict[str, Any]]:
    """What the CLI reports, with ranges converted by an independent reference."""
    lines = source.split("\n")
    result = []
    for f in analyze_source(source, path=str(DATA / "train.py")):
        result.append(
            {
                "code": f.code,
                "message": f.message,
                "severity": SEVERITY[f.severity.value],
                "href": course_ref(f.section_id)["url"],
                "range": (
                    f.line - 1,
                    encode(lines[f.line - 1], f.column - 1),
                    f.end_line - 1,
                    encode(lines[f.end_line - 1], f.end_column - 1),
                ),
            }
        )
    return sorted(result, key=lambda d: (d["range"], d["code"]))


def observed(diagnostics: Any) -> list[dict[str, Any]]:
    result = []
    for d in diagnostics:
        assert d.source == "tfcoach"
        result.append(
            {
                "code": d.code,
                "message": d.message,
                "severity": d.severity,
                "href": d.code_description.href,
                "range": (
                    d.range.start.line,
                    d.range.start.character,
                    d.range.end.line,
                    d.range.end.character,
                ),
            }
        )
    return sorted(result, key=lambda d: (d["range"], d["code"]))


async def test_open_publishes_the_cli_findings_in_utf16(client: LanguageClient) -> None:
    open_text(client, TRAIN_URI, TRAIN, version=1)
    published = await wait_published(client, TRAIN_URI, version=1)
    got = observed(published.diagnostics)
    assert got == expected(TRAIN)
    assert {"TFC001", "TFC002"} <= {d["code"] for d in got}
    # The emoji line: UTF-16 columns differ from code points, so this checks the conversion.
    lines = TRAIN.split("\n")
    tfc001 = next(d for d in got if d["code"] == "TFC001")
    line = lines[tfc001["range"][0]]
    assert "🚀" in line[: line.index("w = w")]
    assert tfc001["range"][1] == utf16_column(line, line.index("w = w"))
    assert tfc001["range"][1] == line.index("w = w") + 1  # one surrogate pair before it


async def test_incremental_edit_republishes_with_the_new_version(client: LanguageClient) -> None:
    lines = TRAIN.split("\n")
    row = next(i for i, line in enumerate(lines) if "w = w - lr * g" in line)
    start = lines[row].index("w = w - lr * g")
    end = start + len("w = w - lr * g")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=TRAIN_URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=row, character=utf16_column(lines[row], start)),
                        end=types.Position(line=row, character=utf16_column(lines[row], end)),
                    ),
                    text="w.assign_sub(lr * g)",
                )
            ],
        )
    )
    published = await wait_published(client, TRAIN_URI, version=2)
    assert "TFC001" not in codes(published.diagnostics)
    assert "TFC002" in codes(published.diagnostics)


async def test_rapid_edits_never_publish_a_stale_version(client: LanguageClient) -> None:
    uri = (DATA / "rapid.py").as_uri()
    open_text(client, uri, "import tensorflow as tf\n", version=1)
    await wait_published(client, uri, version=1)
    bad = "import tensorflow as tf\nw = tf.Variable(1.0)\nw = w * 2\n"
    for version in range(2, 31):
        text = bad if version == 30 else f"import tensorflow as tf\nx = {version}\n"
        replace_all(client, uri, text, version)
    final = await wait_published(client, uri, version=30)
    assert codes(final.diagnostics) == ["TFC001"]
    assert await quiet_for(client, uri, 0.5) == []  # nothing older arrives later
    seen = [p.version for p in client.history if p.uri == uri]  # type: ignore[attr-defined]
    assert seen == sorted(set(seen)) and seen[-1] == 30, seen


async def test_close_clears_the_diagnostics(client: LanguageClient) -> None:
    uri = (DATA / "closing.py").as_uri()
    open_text(client, uri, "import tensorflow as tf\nw = tf.Variable(1.0)\nw = w + 1\n")
    assert codes((await wait_published(client, uri)).diagnostics) == ["TFC001"]
    close_text(client, uri)
    assert (await wait_published(client, uri)).diagnostics == []


async def test_clean_file_publishes_an_empty_list(client: LanguageClient) -> None:
    uri = (DATA / "clean.py").as_uri()
    open_text(client, uri, (DATA / "clean.py").read_text(encoding="utf-8"))
    assert (await wait_published(client, uri)).diagnostics == []


@pytest_lsp.fixture(scope="module", config=config())
async def utf32_client(lsp_client: LanguageClient) -> Any:
    result = await initialize(lsp_client, root=DATA, encodings=[types.PositionEncodingKind.Utf32])
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf32
    yield
    await lsp_client.shutdown_session()


async def test_negotiated_utf32_uses_code_points(utf32_client: LanguageClient) -> None:
    open_text(utf32_client, TRAIN_URI, TRAIN)
    published = await wait_published(utf32_client, TRAIN_URI)
    assert observed(published.diagnostics) == expected(TRAIN, encode=lambda _line, col: col)


@pytest_lsp.fixture(scope="module", config=config())
async def pull_client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, pull=True, options={})
    yield
    await lsp_client.shutdown_session()


async def test_pull_client_gets_reports_and_no_pushes(pull_client: LanguageClient) -> None:
    open_text(pull_client, TRAIN_URI, TRAIN)
    report = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=TRAIN_URI))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert observed(report.items) == expected(TRAIN)
    again = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=TRAIN_URI),
            previous_result_id=report.result_id,
        )
    )
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    replace_all(pull_client, TRAIN_URI, TRAIN.replace("w = w - lr * g", "w.assign_sub(lr * g)"), 2)
    changed = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=TRAIN_URI),
            previous_result_id=report.result_id,
        )
    )
    assert isinstance(changed, types.RelatedFullDocumentDiagnosticReport)
    assert "TFC001" not in codes(changed.items)
    await asyncio.sleep(0.5)
    assert pull_client.published == []  # type: ignore[attr-defined]


# TFC005 reports a tf.function called with several Python values once, at the first call
# site; the other call sites travel as the diagnostic's relatedInformation.
RETRACE = (
    "import tensorflow as tf\n"
    "\n"
    "@tf.function\n"
    "def scale(x, factor):\n"
    "    return x * factor\n"
    "\n"
    "scale(x, 1)\n"
    "note = '🚀'; scale(x, 2)\n"
)


async def test_related_call_sites_become_related_information(client: LanguageClient) -> None:
    uri = (DATA / "retrace.py").as_uri()
    open_text(client, uri, RETRACE)
    published = await wait_published(client, uri)
    [diagnostic] = [d for d in published.diagnostics if d.code == "TFC005"]
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (6, 9)
    [related] = diagnostic.related_information
    assert related.location.uri == uri
    assert related.message == "also called with `factor` = 2"
    line = RETRACE.split("\n")[7]
    column = utf16_column(line, line.index("2)"))  # the emoji is two UTF-16 units
    assert column == line.index("2)") + 1
    assert related.location.range == types.Range(
        start=types.Position(line=7, character=column),
        end=types.Position(line=7, character=column + 1),
    )
    close_text(client, uri)
    await wait_published(client, uri)


async def test_related_information_in_another_notebook_cell(client: LanguageClient) -> None:
    notebook = (DATA / "retrace.ipynb").as_uri()
    sources = [
        "import tensorflow as tf\n@tf.function\ndef scale(x, factor):\n    return x * factor\n",
        "scale(x, 1)\n",
        "y = '🚀'\ny = scale(x, 2)\n",
    ]
    cells = [f"vscode-notebook-cell:{(DATA / 'retrace.ipynb').as_posix()}#c{n}" for n in range(3)]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell)
                    for cell in cells
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=cell, language_id="python", version=1, text=source)
                for cell, source in zip(cells, sources, strict=True)
            ],
        )
    )
    published = await wait_published(client, cells[1])
    [diagnostic] = published.diagnostics
    assert diagnostic.code == "TFC005"
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (0, 9)
    [related] = diagnostic.related_information
    # The call in the third cell points at that cell's document, lines counted within it.
    assert related.location.uri == cells[2]
    assert related.location.range.start == types.Position(line=1, character=13)
    assert related.message == "also called with `factor` = 2"
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell) for cell in cells],
        )
    )


async def test_diagnostics_without_related_locations_have_none(client: LanguageClient) -> None:
    uri = (DATA / "no_related.py").as_uri()
    open_text(client, uri, TRAIN)
    published = await wait_published(client, uri)
    assert {"TFC001", "TFC002"} <= set(codes(published.diagnostics))
    assert all(d.related_information is None for d in published.diagnostics)
    close_text(client, uri)
    await wait_published(client, uri)
