"""Hover cards on TensorFlow names, under aliases and on bound objects' methods."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.course import course_ref
from lsp_server.hover_provider import MAX_INDEXED
from tests.lsp.helpers import (
    DATA,
    config,
    initialize,
    open_text,
    replace_all,
    utf16_column,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

SAMPLE = DATA / "hover_sample.py"
TEXT = SAMPLE.read_text(encoding="utf-8")
LINES = TEXT.split("\n")


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    open_text(lsp_client, SAMPLE.as_uri(), TEXT)
    yield
    await lsp_client.shutdown_session()


def where(needle: str, occurrence: int = 1, at: int = 0) -> types.Position:
    """The position of character ``at`` of the n-th ``needle`` in the sample (UTF-16)."""
    seen = 0
    for row, line in enumerate(LINES):
        start = line.find(needle)
        while start >= 0:
            seen += 1
            if seen == occurrence:
                return types.Position(line=row, character=utf16_column(line, start + at))
            start = line.find(needle, start + 1)
    raise AssertionError(f"{needle!r} #{occurrence} not in the sample")


async def hover(client: LanguageClient, position: types.Position, uri: str | None = None) -> Any:
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri or SAMPLE.as_uri()),
            position=position,
        )
    )


@pytest.mark.parametrize(
    ("needle", "at", "title", "section"),
    [
        ("T.Variable(1.0)", 3, "tf.Variable", "variables"),
        ("T.constant", 2, "tf.constant", "tensors-immutable"),
        ("T.TensorSpec", 5, "tf.TensorSpec", "input-signature"),
        ("Recorder(persistent", 0, "tf.GradientTape", "gradient-tape"),
        ("cast(x", 1, "tf.cast", "dtype-casting"),
        ('T.print("done")', 2, "tf.print", "side-effects"),
        ("@T.function", 5, "tf.function", "tracing"),
        ("tape_ü.watch", 8, "tf.GradientTape.watch", "tape-watch"),
        ("tape_ü.gradient", 9, "tf.GradientTape.gradient", "gradient-tape"),
        ("my_var_.assign_add", 10, "tf.Variable.assign_add", "rebinding-variables"),
        ("my_var_.assign(2.0)", 9, "tf.Variable.assign", "rebinding-variables"),
        ("self.w.assign_sub", 8, "tf.Variable.assign_sub", "rebinding-variables"),
        ("also_kept.assign", 12, "tf.Variable.assign", "rebinding-variables"),  # an alias
    ],
)
async def test_card(client: LanguageClient, needle: str, at: int, title: str, section: str) -> None:
    result = await hover(client, where(needle, at=at))
    assert result is not None, needle
    assert result.contents.kind == types.MarkupKind.Markdown
    text = result.contents.value
    assert text.startswith(f"**{title}**")
    assert "**Pitfall:**" in text
    ref = course_ref(section)
    assert f"[Course: {ref['title']}]({ref['url']})" in text


async def test_card_range_covers_the_dotted_name(client: LanguageClient) -> None:
    start = where("tape_ü.gradient")
    result = await hover(client, where("tape_ü.gradient", at=10))
    assert result.range == types.Range(
        start=start,
        end=types.Position(line=start.line, character=start.character + len("tape_ü.gradient")),
    )


async def test_user_text_is_escaped(client: LanguageClient) -> None:
    result = await hover(client, where("my_var_.assign_add", at=10))
    assert "my\\_var\\_ is bound to a tf.Variable on line 6" in result.contents.value
    result = await hover(client, where("T.Variable(1.0)", at=3))
    assert "written T\\.Variable here" in result.contents.value


@pytest.mark.parametrize(
    ("needle", "at"),
    [
        ("# T.print in a comment", 4),  # inside a comment
        ('"T.function in a string"', 4),  # inside a string
        ("grads = ", 1),  # a plain name
        ("import tensorflow", 2),  # a keyword
        ("my_var_.assign(3.0)", 9),  # `my_var_` was rebound to a tensor on the line before
        ("tf_alias.function", 10),  # imported from a module that is not the user's
        ("my_var_.assign(0.5)", 9),  # a parameter that shares the module variable's name
    ],
)
async def test_no_card_elsewhere(client: LanguageClient, needle: str, at: int) -> None:
    assert await hover(client, where(needle, at=at)) is None


async def test_blank_line_and_past_the_end(client: LanguageClient) -> None:
    blank = LINES.index("")
    assert await hover(client, types.Position(line=blank, character=0)) is None
    assert await hover(client, types.Position(line=len(LINES) + 5, character=0)) is None


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None, reason="jedi needs TensorFlow's sources"
)
async def test_jedi_resolves_names_from_user_modules(client: LanguageClient) -> None:
    path = DATA / "project" / "uses_helpers.py"
    open_text(client, path.as_uri(), path.read_text(encoding="utf-8"))
    lines = path.read_text(encoding="utf-8").split("\n")
    row = next(i for i, line in enumerate(lines) if line.startswith("tf_alias.function"))
    position = types.Position(line=row, character=len("tf_alias.fun"))
    for _ in range(60):  # the first answers may miss jedi's deadline; late ones are cached
        result = await hover(client, position, uri=path.as_uri())
        if result is not None:
            break
        await asyncio.sleep(0.5)
    assert result is not None
    assert result.contents.value.startswith("**tf.function**")


async def test_many_open_documents_each_keep_their_cards(client: LanguageClient) -> None:
    # An editor restoring a session opens many files at once. Only the last analysed is
    # indexed ahead and at most MAX_INDEXED indexes are kept: the others are built again
    # on their first hover, and each document's cards are its own.
    count = MAX_INDEXED + 4
    uris = [(DATA / f"opened_{n}.py").as_uri() for n in range(count)]
    for n, uri in enumerate(uris):
        open_text(
            client, uri, f"import tensorflow as tf\nw{n} = tf.Variable({n}.0)\nw{n}.assign(1.0)\n"
        )
    await client.wait_for_notification("textDocument/publishDiagnostics")
    for n, uri in enumerate(reversed(uris)):
        index = count - 1 - n
        position = types.Position(line=2, character=len(f"w{index}.as"))
        result = await hover(client, position, uri=uri)
        assert result is not None, uri
        assert result.contents.value.startswith("**tf.Variable.assign**")
        assert f"w{index} is bound to a tf.Variable on line 2" in result.contents.value


async def test_cards_survive_an_edit_that_moves_the_lines(client: LanguageClient) -> None:
    # The index of the older text answers while the new one is built: its positions
    # have moved, so it is asked about the name without checking what is written there.
    uri = (DATA / "edited_while_hovering.py").as_uri()
    text = "import tensorflow as tf\nw = tf.Variable(1.0)\nw.assign(2.0)\n"
    open_text(client, uri, text)
    position = types.Position(line=2, character=len("w.as"))
    first = await hover(client, position, uri=uri)
    assert first is not None and first.contents.value.startswith("**tf.Variable.assign**")
    replace_all(client, uri, "# a new first line\n" + text, version=2)
    moved = types.Position(line=3, character=len("w.as"))
    result = await hover(client, moved, uri=uri)
    assert result is not None and result.contents.value.startswith("**tf.Variable.assign**")
    assert result.range.start.line == 3
    # Once the new text is indexed, the card says where `w` is bound now.
    for _ in range(100):
        result = await hover(client, moved, uri=uri)
        if "bound to a tf.Variable on line 3" in result.contents.value:
            break
        await asyncio.sleep(0.05)
    assert "w is bound to a tf.Variable on line 3" in result.contents.value
