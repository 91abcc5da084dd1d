"""LSP 3.17 notebook sync: cells analysed together, diagnostics per cell URI."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.analysis import analyze_cells
from tests.lsp.helpers import (
    DATA,
    codes,
    config,
    initialize,
    open_text,
    utf16_column,
    wait_published,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

NOTEBOOK = (DATA / "course.ipynb").as_uri()
CELLS = {
    "intro": (types.NotebookCellKind.Markup, "# Training 🚀\n`w = w - 1` in Markdown is no code"),
    "setup": (
        types.NotebookCellKind.Code,
        "%load_ext jupyterlab_tfcoach\nimport tensorflow as tf\nw = tf.Variable(1.0)\n",
    ),
    "train": (types.NotebookCellKind.Code, "lr = 0.1\nnote = '🚀'; w = w - lr * 2\n"),
    "graph": (
        types.NotebookCellKind.Code,
        "@tf.function\ndef f(x):\n    print(x)\n    return x\n",
    ),
}


def cell_uri(name: str) -> str:
    return f"vscode-notebook-cell:{(DATA / 'course.ipynb').as_posix()}#{name}"


def open_notebook(client: LanguageClient, names: list[str]) -> None:
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=NOTEBOOK,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=CELLS[n][0], document=cell_uri(n)) for n in names],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=cell_uri(n),
                    language_id="markdown"
                    if CELLS[n][0] == types.NotebookCellKind.Markup
                    else "python",
                    version=1,
                    text=CELLS[n][1],
                )
                for n in names
            ],
        )
    )


def change(client: LanguageClient, version: int, cells: types.NotebookDocumentCellChanges) -> None:
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                version=version, uri=NOTEBOOK
            ),
            change=types.NotebookDocumentChangeEvent(cells=cells),
        )
    )


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    result = await initialize(lsp_client, root=DATA)
    sync = result.capabilities.notebook_document_sync
    assert sync is not None
    assert sync.notebook_selector[0].notebook == "jupyter-notebook"  # type: ignore[union-attr]
    yield
    await lsp_client.shutdown_session()


async def test_cells_are_analysed_together_and_published_per_cell(client: LanguageClient) -> None:
    open_notebook(client, ["intro", "setup", "train", "graph"])
    train = await wait_published(client, cell_uri("train"), version=1)
    graph = await wait_published(client, cell_uri("graph"), version=1)
    setup = await wait_published(client, cell_uri("setup"), version=1)
    assert codes(train.diagnostics) == ["TFC001"]  # `w` was bound in another cell
    assert codes(graph.diagnostics) == ["TFC002"]
    assert setup.diagnostics == []
    assert not [p for p in client.history if p.uri == cell_uri("intro")]  # type: ignore[attr-defined]

    # Same positions as the CLI's per-cell findings, lines counted within the cell.
    sources = [CELLS[n][1] for n in ("setup", "train", "graph")]
    finding = next(f for f in analyze_cells(sources) if f.code == "TFC001")
    assert finding.cell == 1
    (diagnostic,) = train.diagnostics
    line = sources[1].split("\n")[finding.line - 1]
    assert diagnostic.range.start.line == finding.line - 1
    assert diagnostic.range.start.character == utf16_column(line, finding.column - 1)
    assert diagnostic.message == finding.message


async def test_editing_a_cell_republishes_its_diagnostics(client: LanguageClient) -> None:
    change(
        client,
        2,
        types.NotebookDocumentCellChanges(
            text_content=[
                types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(
                        uri=cell_uri("train"), version=2
                    ),
                    changes=[
                        types.TextDocumentContentChangeWholeDocument(text="w.assign_sub(0.1)\n")
                    ],
                )
            ]
        ),
    )
    train = await wait_published(client, cell_uri("train"), version=2)
    assert train.diagnostics == []
    assert codes((await wait_published(client, cell_uri("graph"), version=2)).diagnostics) == [
        "TFC002"
    ]


async def test_deleting_a_cell_clears_its_diagnostics(client: LanguageClient) -> None:
    change(
        client,
        3,
        types.NotebookDocumentCellChanges(
            structure=types.NotebookDocumentCellChangeStructure(
                array=types.NotebookCellArrayChange(start=3, delete_count=1),
                did_close=[types.TextDocumentIdentifier(uri=cell_uri("graph"))],
            )
        ),
    )
    graph = await wait_published(client, cell_uri("graph"))
    assert graph.diagnostics == []


async def test_closing_the_notebook_clears_every_cell(client: LanguageClient) -> None:
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=NOTEBOOK),
            cell_text_documents=[
                types.TextDocumentIdentifier(uri=cell_uri(n)) for n in ("intro", "setup", "train")
            ],
        )
    )
    for name in ("setup", "train"):
        assert (await wait_published(client, cell_uri(name))).diagnostics == []


async def test_a_hover_card_says_where_a_name_was_bound_as_the_cells_count(
    client: LanguageClient,
) -> None:
    # A Markdown cell first (not counted), then three code cells. The index joins them: `w`
    # is on line 2 of the joined source, `v` on line 3, but no cell the learner sees has
    # those lines.
    notebook = (DATA / "bound_where.ipynb").as_posix()
    cells = [
        (types.NotebookCellKind.Markup, "# Where `w` is bound"),
        (types.NotebookCellKind.Code, "import tensorflow as tf"),
        (types.NotebookCellKind.Code, "w = tf.Variable(1.0)"),
        (types.NotebookCellKind.Code, "v = tf.Variable(2.0)\nw.assign_sub(0.1)\nv.assign(1.0)\n"),
    ]
    uris = [f"vscode-notebook-cell:{notebook}#where{index}" for index in range(len(cells))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=(DATA / "bound_where.ipynb").as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=kind, document=uri)
                    for (kind, _), uri in zip(cells, uris, strict=True)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=uri,
                    language_id="python" if kind == types.NotebookCellKind.Code else "markdown",
                    version=1,
                    text=text,
                )
                for (kind, text), uri in zip(cells, uris, strict=True)
            ],
        )
    )

    async def card(line: int, character: int) -> str:
        result = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uris[3]),
                position=types.Position(line=line, character=character),
            )
        )
        assert result is not None
        return result.contents.value  # type: ignore[union-attr]

    # `w` was bound in the second code cell (the notebook's third cell), on its first line.
    assert "w is bound to a tf.Variable on line 1 of code cell 2" in await card(1, 4)
    # `v` was bound in the cell read, on its first line.
    assert "v is bound to a tf.Variable on line 1\n" in await card(2, 4)


async def test_automagic_cells_are_magics_and_their_python_is_checked(
    client: LanguageClient,
) -> None:
    # One-line cells the kernel runs as line magics without `%` are not left out as broken:
    # the statement `time` runs is checked at its own column, and the value `%time`
    # returns reaches the next cell.
    notebook = DATA / "magics.ipynb"
    sources = [
        "import tensorflow as tf\nw = tf.Variable(1.0)\nsteps = tf.constant(3)",
        "pip install --quiet keras-tuner",
        "time w = w - 0.1",
        "half = %time tf.constant(0.5)",
        "mixed = steps * half",
    ]
    uris = [f"vscode-notebook-cell:{notebook.as_posix()}#magic{n}" for n in range(len(sources))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook.as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in uris
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                for uri, text in zip(uris, sources, strict=True)
            ],
        )
    )
    published = [await wait_published(client, uri, version=1) for uri in uris]
    located = [
        [(d.code, d.range.start.line, d.range.start.character) for d in p.diagnostics]
        for p in published
    ]
    assert located == [[], [], [("TFC001", 0, 5)], [], [("TFC009", 0, 8)]]


@pytest_lsp.fixture(scope="module", config=config())
async def pull_client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, pull=True, refresh=True)
    yield
    await lsp_client.shutdown_session()


async def pull(client: LanguageClient, name: str) -> Any:
    return await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(name))
        )
    )


async def test_pull_mode_refreshes_cells_affected_by_another_cell(
    pull_client: LanguageClient,
) -> None:
    open_notebook(pull_client, ["setup", "train"])
    assert codes((await pull(pull_client, "train")).items) == ["TFC001"]
    assert (await pull(pull_client, "setup")).items == []
    # Editing `setup` (w is no longer a variable) changes the findings of `train`.
    setup = types.VersionedTextDocumentIdentifier(uri=cell_uri("setup"), version=2)
    change(
        pull_client,
        2,
        types.NotebookDocumentCellChanges(
            text_content=[
                types.NotebookDocumentCellContentChanges(
                    document=setup,
                    changes=[types.TextDocumentContentChangeWholeDocument(text="w = 1.0\n")],
                )
            ]
        ),
    )
    for _ in range(100):
        if pull_client.diagnostic_refresh_count:
            break
        await asyncio.sleep(0.05)
    assert pull_client.diagnostic_refresh_count == 1
    assert (await pull(pull_client, "train")).items == []
    assert pull_client.published == []  # type: ignore[attr-defined]


# The tfcoach VS Code extension's client (vscode-languageclient 9) pulls diagnostics for files
# but never for notebook cells, and says so: its notebooks are pushed, its files pulled.
PUSH_CELLS = {"tfcoach": {"notebookCellDiagnostics": "push"}}


@pytest_lsp.fixture(scope="module", config=config())
async def vscode_like_client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, pull=True, refresh=True, experimental=PUSH_CELLS)
    yield
    await lsp_client.shutdown_session()


async def test_a_client_that_pulls_only_for_files_gets_cell_diagnostics_pushed(
    vscode_like_client: LanguageClient,
) -> None:
    client = vscode_like_client
    open_notebook(client, ["setup", "train", "graph"])
    assert codes((await wait_published(client, cell_uri("train"), version=1)).diagnostics) == [
        "TFC001"
    ]
    assert codes((await wait_published(client, cell_uri("graph"), version=1)).diagnostics) == [
        "TFC002"
    ]
    # A plain file is still pulled, never pushed.
    uri = (DATA / "pulled_file.py").as_uri()
    open_text(client, uri, "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n")
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert codes(report.items) == ["TFC002"]
    await asyncio.sleep(0.3)
    assert not [p for p in client.published if p.uri == uri]  # type: ignore[attr-defined]
