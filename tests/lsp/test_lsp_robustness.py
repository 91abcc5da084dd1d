"""Robustness: syntax errors while typing, a 1 MiB file, malformed and unknown
requests, cancellation, and never importing TensorFlow."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.helpers import (
    DATA,
    SERVER_COMMAND,
    alive,
    codes,
    config,
    initialize,
    make_client,
    open_text,
    replace_all,
    server_env,
    wait_published,
)

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(120)]

TEXT = (DATA / "train.py").read_text(encoding="utf-8")
GUARD = DATA / "tf_guard"


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    yield
    await lsp_client.shutdown_session()


async def test_syntax_error_keeps_findings_on_untouched_lines(client: LanguageClient) -> None:
    uri = (DATA / "typing.py").as_uri()
    open_text(client, uri, TEXT)
    assert codes((await wait_published(client, uri, version=1)).diagnostics) == [
        "TFC001",
        "TFC002",
    ]
    # Half-typed line inside the tf.function: the file no longer parses.
    broken = TEXT.replace('    note = "🚀"; print("tracing", note, x)', "    print(x, (")
    replace_all(client, uri, broken, 2)
    kept = await wait_published(client, uri, version=2)
    assert codes(kept.diagnostics) == ["TFC001"]  # its line is untouched; TFC002's is not
    # Typing continues at the top: the line of TFC001 shifts, so nothing is kept.
    replace_all(client, uri, "import numpy as np\n" + broken, 3)
    assert (await wait_published(client, uri, version=3)).diagnostics == []
    replace_all(client, uri, TEXT, 4)
    assert codes((await wait_published(client, uri, version=4)).diagnostics) == [
        "TFC001",
        "TFC002",
    ]
    assert await alive(client, uri)


async def test_one_mebibyte_file(client: LanguageClient) -> None:
    block = TEXT + "\n"
    text = block * (1024 * 1024 // len(block.encode()) + 1)
    assert len(text.encode()) >= 1024 * 1024
    uri = (DATA / "huge.py").as_uri()
    open_text(client, uri, text)
    published = await wait_published(client, uri, timeout=90)
    assert len(published.diagnostics) >= text.count("w = w - lr * g")
    assert await alive(client, uri)


async def test_unknown_request_is_a_method_not_found_error(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException) as error:
        await client.protocol.send_request_async("tfcoach/noSuchMethod", {})
    assert error.value.code == -32601
    assert await alive(client, (DATA / "train.py").as_uri())


async def raw_request(client: LanguageClient, method: str, params: Any) -> Any:
    """Send params exactly as given (the typed client API would refuse bad ones)."""
    from concurrent.futures import Future

    msg_id = f"raw-{method}-{id(params)}"
    future: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wrap_future(future)


async def test_malformed_params_are_an_error_not_a_crash(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException):
        await raw_request(client, "textDocument/hover", {"textDocument": 3})
    with pytest.raises(JsonRpcException):
        await raw_request(client, "textDocument/codeAction", {"textDocument": {"uri": "x"}})
    client.protocol._send_data(
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": None}}
    )
    body = b'{"jsonrpc": "2.0", "id": 99, "method": '  # not even JSON
    client.protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert await alive(client, (DATA / "train.py").as_uri())


async def test_requests_on_unknown_documents_answer_null(client: LanguageClient) -> None:
    uri = "file:///nowhere/never_opened.py"
    assert await alive(client, uri)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions is None


async def test_cancelled_request_gets_the_cancelled_error(client: LanguageClient) -> None:
    # A hover right after opening a big document waits for its symbol index (a parse of
    # some 5,000 lines): the cancellation is written right behind the request, with no
    # wait in between, so it normally reaches the server while the hover still waits. A
    # server that answered first is within the protocol (the answer is a hover), so on a
    # loaded machine the race is run again on a new document, up to five times: at least
    # one request must be cancelled with RequestCancelled, and none may get another error.
    cancelled = 0
    for attempt in range(5):
        uri = (DATA / f"cancel_me_{attempt}.py").as_uri()
        open_text(client, uri, TEXT * 300)
        msg_id = f"cancel-me-{attempt}"
        request = client.protocol.send_request(
            "textDocument/hover",
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=3, character=8),  # tf.Variable
            ),
            msg_id=msg_id,
        )
        client.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))
        try:
            await asyncio.wrap_future(request)
        except JsonRpcException as error:
            assert error.code == -32800  # RequestCancelled
            cancelled += 1
        assert await alive(client, uri)
        if cancelled:
            break
    assert cancelled == 1


GUARD_LOG_ENV = "TFCOACH_TF_GUARD_LOG"


def guarded_env(log: Path) -> dict[str, str]:
    env = server_env(**{GUARD_LOG_ENV: str(log)})
    env["PYTHONPATH"] = os.pathsep.join([str(GUARD), env["PYTHONPATH"]])
    return env


async def test_the_guard_blocks_and_logs_tensorflow(tmp_path: Path) -> None:
    """Control: the guard used below really catches an import of TensorFlow."""
    log = tmp_path / "imports.log"
    result = subprocess.run(
        [sys.executable, "-c", "import tensorflow"], env=guarded_env(log), capture_output=True
    )
    assert result.returncode != 0
    assert "tensorflow" in log.read_text()


async def test_server_never_imports_tensorflow(tmp_path: Path) -> None:
    log = tmp_path / "imports.log"
    guarded = ClientServerConfig(
        server_command=SERVER_COMMAND, server_env=guarded_env(log), client_factory=make_client
    )
    lsp = await guarded.start()
    try:
        await initialize(lsp, root=DATA)
        uri = (DATA / "train.py").as_uri()
        open_text(lsp, uri, TEXT)
        published = await wait_published(lsp, uri)
        assert codes(published.diagnostics) == ["TFC001", "TFC002"]
        hover = await lsp.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=3, character=8),  # tf.Variable
            )
        )
        assert hover is not None
        actions = await lsp.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=published.diagnostics[0].range,
                context=types.CodeActionContext(diagnostics=list(published.diagnostics)),
            )
        )
        assert actions
        await lsp.shutdown_session()
    finally:
        await lsp.stop()
    assert not log.exists(), log.read_text()
