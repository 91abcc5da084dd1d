"""Shared pieces of the language-server tests (no tests here).

Every test talks to a real ``python -m lsp_server`` process over stdio through
pytest-lsp. pytest-lsp's client profiles lack notebook sync and pull
diagnostics, so capabilities are built here explicitly.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "data" / "lsp"
SERVER_COMMAND = [sys.executable, "-m", "lsp_server"]


def server_env(**extra: str) -> dict[str, str]:
    """The test environment, with the repo importable even before ``pip install -e``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)  # type: ignore[attr-defined]
    client.history.append(params)  # type: ignore[attr-defined]


def converter() -> Any:
    """pygls' converter, except that a CodeAction carrying a ``command`` object is read
    as a CodeAction: lsprotocol's hook turns any object with a ``command`` key into a
    Command (a client-side bug; real clients check whether ``command`` is a string)."""
    from typing import Union

    from pygls.protocol import default_converter

    conv = default_converter()

    def command_or_action(obj: Any, _: type) -> Any:
        if isinstance(obj.get("command"), str):
            return conv.structure(obj, types.Command)
        return conv.structure(obj, types.CodeAction)

    union = Union[types.Command, types.CodeAction]  # noqa: UP007 - the key lsprotocol uses
    conv.register_structure_hook(union, command_or_action)
    return conv


def make_client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics (with its version)."""
    client = LanguageClient(protocol_cls=LanguageClientProtocol, converter_factory=converter)
    client.published = []  # type: ignore[attr-defined]  # consumed by wait_published
    client.history = []  # type: ignore[attr-defined]  # everything, never consumed
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record_publish
    register_lsp_features(client, features)
    return client


def config(*args: str, **env: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[*SERVER_COMMAND, *args],
        server_env=server_env(**env),
        client_factory=make_client,
    )


def capabilities(
    *,
    pull: bool = False,
    encodings: list[types.PositionEncodingKind] | None = None,
    configuration: bool = False,
    show_document: bool = True,
    document_changes: bool = True,
    refresh: bool = False,
    hover_formats: list[types.MarkupKind] | None = None,
    experimental: dict[str, Any] | None = None,
) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        experimental=experimental,
        general=types.GeneralClientCapabilities(position_encodings=encodings)
        if encodings
        else None,
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, code_description_support=True, data_support=True
            ),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
            hover=types.HoverClientCapabilities(
                content_format=hover_formats
                or [types.MarkupKind.Markdown, types.MarkupKind.PlainText]
            ),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.QuickFix]
                    )
                ),
                is_preferred_support=True,
            ),
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()
        ),
        workspace=types.WorkspaceClientCapabilities(
            configuration=configuration,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=document_changes),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=refresh),
        ),
        window=types.WindowClientCapabilities(
            show_document=types.ShowDocumentClientCapabilities(support=show_document)
        ),
    )


async def initialize(
    client: LanguageClient,
    root: Path | None = None,
    options: dict[str, Any] | None = None,
    **caps: Any,
) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(**caps),
            root_uri=root.as_uri() if root else None,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]
            if root
            else None,
            initialization_options=options if options is not None else {"debounceMs": 0},
        )
    )


async def alive(client: LanguageClient, uri: str) -> bool:
    """Whether the server still answers (a hover at the top of ``uri``)."""
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=0),
        )
    )
    return result is None or isinstance(result, types.Hover)


def open_text(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )


def close_text(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def wait_published(
    client: LanguageClient, uri: str, version: int | None = None, timeout: float = 15.0
) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for ``uri`` (at ``version``, if given) not yet consumed."""
    deadline = time.monotonic() + timeout
    published: list[types.PublishDiagnosticsParams] = client.published  # type: ignore[attr-defined]
    while time.monotonic() < deadline:
        for index, params in enumerate(published):
            if params.uri == uri and (version is None or params.version == version):
                # consume it and anything older for the same URI, keep other URIs
                published[: index + 1] = [p for p in published[:index] if p.uri != uri]
                return params
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no diagnostics for {uri} (version {version}) within {timeout} s")


async def quiet_for(client: LanguageClient, uri: str, seconds: float) -> list[Any]:
    """Everything published for ``uri`` during ``seconds`` (expected: nothing)."""
    await asyncio.sleep(seconds)
    published: list[types.PublishDiagnosticsParams] = client.published  # type: ignore[attr-defined]
    return [p for p in published if p.uri == uri]


def utf16_column(line: str, code_points: int) -> int:
    """An independent reference for the UTF-16 conversion under test."""
    return len(line[:code_points].encode("utf-16-le")) // 2


def codes(diagnostics: Any) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)
