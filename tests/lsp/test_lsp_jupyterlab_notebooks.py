"""Launched by jupyterlab-lsp (our spec passes ``--notebooks-in-jupyterlab``), the server
leaves notebooks to the tfcoach JupyterLab extension, which already shows their findings and
hover cards: a name gets one card and a finding one mark. jupyterlab-lsp sends a notebook as
one Python text document at its ``.ipynb`` path; a ``.py`` file is still served in full.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.helpers import (
    DATA,
    codes,
    config,
    initialize,
    open_text,
    quiet_for,
    wait_published,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

SOURCE = (
    "import tensorflow as tf\n\n\n@tf.function\ndef noisy(t):\n    print(t)\n    return t + 1\n"
)
NOTEBOOK_URI = (DATA / "shadow" / "lesson.ipynb").as_uri()
FILE_URI = (DATA / "shadow" / "lesson.py").as_uri()


@pytest_lsp.fixture(scope="module", config=config("--notebooks-in-jupyterlab"))
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    open_text(lsp_client, FILE_URI, SOURCE)
    open_text(lsp_client, NOTEBOOK_URI, SOURCE)
    yield
    await lsp_client.shutdown_session()


def hover_at(uri: str, line: int, character: int) -> types.HoverParams:
    return types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
    )


async def test_a_py_file_still_gets_findings_and_cards(client: LanguageClient) -> None:
    published = await wait_published(client, FILE_URI)
    assert codes(published.diagnostics) == ["TFC002"]
    card = await client.text_document_hover_async(hover_at(FILE_URI, 3, 5))
    assert card is not None and "tf.function" in card.contents.value


async def test_a_notebook_sent_as_text_gets_neither(client: LanguageClient) -> None:
    assert await quiet_for(client, NOTEBOOK_URI, 1.5) == []
    assert await client.text_document_hover_async(hover_at(NOTEBOOK_URI, 3, 5)) is None
    pulled = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=NOTEBOOK_URI))
    )
    assert pulled.items == []
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=NOTEBOOK_URI),
            range=types.Range(start=types.Position(5, 4), end=types.Position(5, 9)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not actions
