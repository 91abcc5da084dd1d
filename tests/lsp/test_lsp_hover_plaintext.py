"""Hover cards for clients that accept plain text only (e.g. eglot 1.9 without markdown-mode)."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.course import course_ref
from tests.lsp.helpers import DATA, config, initialize, open_text, utf16_column

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

SAMPLE = DATA / "hover_sample.py"
TEXT = SAMPLE.read_text(encoding="utf-8")


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA, hover_formats=[types.MarkupKind.PlainText])
    open_text(lsp_client, SAMPLE.as_uri(), TEXT)
    yield
    await lsp_client.shutdown_session()


async def test_plain_text_card_spells_out_the_course_link(client: LanguageClient) -> None:
    row, line = next((n, line) for n, line in enumerate(TEXT.split("\n")) if "T.Variable(" in line)
    column = utf16_column(line, line.index("T.Variable(") + 3)
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=SAMPLE.as_uri()),
            position=types.Position(line=row, character=column),
        )
    )
    assert result is not None
    assert result.contents.kind == types.MarkupKind.PlainText
    text = result.contents.value
    assert text.startswith("tf.Variable")
    assert "**" not in text and "](" not in text
    ref = course_ref("variables")
    assert f"Course: {ref['title']} <{ref['url']}>" in text
