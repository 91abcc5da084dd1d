"""The language server on documents over its size limit (issue #24, item 8).

A document larger than ``maxDocumentCharacters`` (default 1,048,576; a notebook: its code
cells together) is not checked: one Information diagnostic on its first line says so
(size, limit, setting), a hover in it answers None at once, other documents keep their
findings. When the setting is raised, or an edit brings it under the limit, it is
analysed again. Most tests lower the limit to keep the documents small."""

from __future__ import annotations

import time
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.helpers import (
    DATA,
    close_text,
    codes,
    config,
    initialize,
    open_text,
    replace_all,
    wait_published,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(120)]

TEXT = (DATA / "train.py").read_text(encoding="utf-8")
FINDINGS = ["TFC001", "TFC002"]  # what train.py gets when it is checked
DEFAULT_LIMIT = 1_048_576
LIMIT = 20_000  # lowered, for most tests
SETTING = "tfcoach.maxDocumentCharacters"
# ``tf.function`` in train.py: a hover card when the file is checked.
DECORATOR = types.Position(line=TEXT.split("\n").index("@tf.function"), character=5)


def padded(characters: int) -> str:
    """train.py followed by plain lines, ``characters`` characters in all."""
    filler = "y = x * 2  # more of the same\n"
    missing = characters - len(TEXT) - 1
    text = TEXT + "\n" + filler * (missing // len(filler)) + "#" * (missing % len(filler))
    assert len(text) == characters
    return text


def settings(limit: int | str) -> dict[str, Any]:
    return {"tfcoach": {"debounceMs": 0, "maxDocumentCharacters": limit}}


def change_settings(client: LanguageClient, values: dict[str, Any]) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=values))


async def hover(client: LanguageClient, uri: str, position: types.Position) -> Any:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )


def assert_not_checked(diagnostics: Any, characters: int, limit: int) -> None:
    """The one note of a document over the limit, on its first line."""
    (note,) = diagnostics
    assert note.severity == types.DiagnosticSeverity.Information
    assert note.source == "tfcoach"
    assert note.range.start == types.Position(line=0, character=0)
    assert note.range.end.line == 0
    assert "too large" in note.message
    assert f"{characters:,} characters" in note.message
    assert f"{limit:,}" in note.message
    assert SETTING in note.message


@pytest_lsp.fixture(scope="module", config=config())
async def default_limit(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=config())
async def limited(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, options=settings(LIMIT)["tfcoach"])
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=config())
async def limited_pull(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, options=settings(LIMIT)["tfcoach"], pull=True)
    yield
    await lsp_client.shutdown_session()


async def test_over_the_default_limit_one_note_no_hover_and_others_still_checked(
    default_limit: LanguageClient,
) -> None:
    big = padded(DEFAULT_LIMIT + 1)
    big_uri = (DATA / "huge_default.py").as_uri()
    small_uri = (DATA / "small_beside_huge.py").as_uri()
    open_text(default_limit, big_uri, big)
    open_text(default_limit, small_uri, TEXT)

    assert_not_checked(
        (await wait_published(default_limit, big_uri, version=1)).diagnostics,
        DEFAULT_LIMIT + 1,
        DEFAULT_LIMIT,
    )
    small = await wait_published(default_limit, small_uri, version=1, timeout=30)
    assert codes(small.diagnostics) == FINDINGS

    asked = time.monotonic()
    assert await hover(default_limit, big_uri, DECORATOR) is None
    assert time.monotonic() - asked < 5.0  # no parse of a megabyte behind it
    assert await hover(default_limit, small_uri, DECORATOR) is not None
    close_text(default_limit, big_uri)
    close_text(default_limit, small_uri)


async def test_at_the_limit_a_document_is_checked(limited: LanguageClient) -> None:
    uri = (DATA / "at_the_limit.py").as_uri()
    open_text(limited, uri, padded(LIMIT))
    assert codes((await wait_published(limited, uri, version=1)).diagnostics) == FINDINGS
    close_text(limited, uri)


async def test_a_document_is_checked_again_once_an_edit_brings_it_under_the_limit(
    limited: LanguageClient,
) -> None:
    uri = (DATA / "shrinking.py").as_uri()
    big = padded(LIMIT + 500)
    open_text(limited, uri, big)
    assert_not_checked((await wait_published(limited, uri, version=1)).diagnostics, len(big), LIMIT)
    assert await hover(limited, uri, DECORATOR) is None

    replace_all(limited, uri, TEXT, version=2)
    assert codes((await wait_published(limited, uri, version=2)).diagnostics) == FINDINGS
    assert await hover(limited, uri, DECORATOR) is not None

    # Grown again: the note is back and the card built at version 2 is not used.
    replace_all(limited, uri, big, version=3)
    assert_not_checked((await wait_published(limited, uri, version=3)).diagnostics, len(big), LIMIT)
    assert await hover(limited, uri, DECORATOR) is None
    close_text(limited, uri)


async def test_raising_the_limit_in_the_settings_checks_the_document(
    limited: LanguageClient,
) -> None:
    uri = (DATA / "raised.py").as_uri()
    big = padded(LIMIT * 3)
    open_text(limited, uri, big)
    assert_not_checked((await wait_published(limited, uri, version=1)).diagnostics, len(big), LIMIT)
    try:
        change_settings(limited, settings(LIMIT * 4))
        assert codes((await wait_published(limited, uri, version=1)).diagnostics) == FINDINGS
        assert await hover(limited, uri, DECORATOR) is not None

        # A bad value: a warning naming the setting, and the default limit (1 Mi) applies.
        limited.messages.clear()
        change_settings(limited, settings("large"))
        assert codes((await wait_published(limited, uri, version=1)).diagnostics) == FINDINGS
        warnings = [m.message for m in limited.messages if m.type == types.MessageType.Warning]
        assert any(SETTING in message for message in warnings), warnings
    finally:
        change_settings(limited, settings(LIMIT))
    assert_not_checked((await wait_published(limited, uri, version=1)).diagnostics, len(big), LIMIT)
    assert await hover(limited, uri, DECORATOR) is None
    close_text(limited, uri)


NOTEBOOK = (DATA / "huge.ipynb").as_uri()


def cell_uri(name: str) -> str:
    return f"vscode-notebook-cell:{(DATA / 'huge.ipynb').as_posix()}#{name}"


def open_notebook(client: LanguageClient, cells: dict[str, str]) -> None:
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=NOTEBOOK,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell_uri(name))
                    for name in cells
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=cell_uri(name), language_id="python", version=1, text=source
                )
                for name, source in cells.items()
            ],
        )
    )


def replace_cell(client: LanguageClient, version: int, name: str, text: str) -> None:
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                version=version, uri=NOTEBOOK
            ),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(
                                uri=cell_uri(name), version=version
                            ),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    ]
                )
            ),
        )
    )


async def test_a_notebook_over_the_limit_gets_one_note_on_its_first_cell(
    limited: LanguageClient,
) -> None:
    # Each cell is under the limit; together they are over it.
    cells = {"train": TEXT, "data": "data = [\n" + "    1.0,\n" * (LIMIT // 9 - 10) + "]\n"}
    total = sum(len(source) for source in cells.values())
    assert len(cells["data"]) < LIMIT < total
    open_notebook(limited, cells)
    train = await wait_published(limited, cell_uri("train"), version=1)
    data = await wait_published(limited, cell_uri("data"), version=1)
    assert_not_checked(train.diagnostics, total, LIMIT)
    assert "notebook" in train.diagnostics[0].message
    assert data.diagnostics == []
    assert await hover(limited, cell_uri("train"), DECORATOR) is None

    replace_cell(limited, 2, "data", "data = [1.0]\n")
    train = await wait_published(limited, cell_uri("train"), version=2)
    assert codes(train.diagnostics) == FINDINGS
    assert await hover(limited, cell_uri("train"), DECORATOR) is not None
    limited.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=NOTEBOOK),
            cell_text_documents=[
                types.TextDocumentIdentifier(uri=cell_uri(name)) for name in cells
            ],
        )
    )


async def test_a_pulled_report_of_a_document_over_the_limit_is_the_one_note(
    limited_pull: LanguageClient,
) -> None:
    uri = (DATA / "pulled_huge.py").as_uri()
    big = padded(LIMIT + 1)
    open_text(limited_pull, uri, big)
    report = await limited_pull.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert_not_checked(report.items, len(big), LIMIT)
    assert await hover(limited_pull, uri, DECORATOR) is None
