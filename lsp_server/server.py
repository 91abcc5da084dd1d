"""The tfcoach language server: small feature handlers; the work lives in the
modules they call (diagnostics, hover_provider, code_actions, settings/config)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.course.links import CourseLinks
from lsp_server import SERVER_NAME, __version__
from lsp_server.code_actions import OPEN_COURSE, code_actions
from lsp_server.config import DocumentConfigs, is_known_code
from lsp_server.diagnostics import DiagnosticsEngine, result_id
from lsp_server.documents import Snapshot, fs_path, key_for, open_document
from lsp_server.hover_provider import HoverProvider
from lsp_server.notebooks import SYNC_OPTIONS, pulls_cells
from lsp_server.rpc import TfCoachProtocol
from lsp_server.settings import SECTION, Settings, parse_settings

log = logging.getLogger(__name__)


class TfCoachServer(LanguageServer):
    def __init__(self, notebooks_in_jupyterlab: bool = False) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=SYNC_OPTIONS,
            max_workers=2,
            protocol_cls=TfCoachProtocol,
        )
        self.settings = Settings()
        self.configs = DocumentConfigs(self.show_error)
        self.engine = DiagnosticsEngine(self, self.config_for, self.max_document_characters)
        self.hovers = HoverProvider(self, self.links_for, self.max_document_characters)
        self.engine.on_result = self.hovers.prefetch
        self.notebooks_in_jupyterlab = notebooks_in_jupyterlab

    def left_to_jupyterlab(self, uri: str) -> bool:
        """A notebook that jupyterlab-lsp sends as one Python text document at its
        ``.ipynb`` path, while the tfcoach JupyterLab extension coaches it already."""
        return self.notebooks_in_jupyterlab and uri.lower().endswith(".ipynb")

    # -- helpers used by the handlers --------------------------------------------------------
    def warn(self, message: str) -> None:
        log.warning("%s", message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def show_error(self, message: str) -> None:
        log.error("%s", message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=message)
        )

    def root_path(self) -> Path | None:
        root = self.workspace.root_uri
        return fs_path(root) if root else None

    def config_for(self, snap: Snapshot | None) -> Config:
        path = snap.path if snap is not None else None
        return self.configs.config_for(path, self.root_path(), self.settings)

    def max_document_characters(self) -> int:
        """Documents larger than this are not checked (``size_limit.py``)."""
        return self.settings.max_document_characters

    def links_for(self, uri: str) -> CourseLinks:
        """Course links for a document (a cell's config is its notebook's)."""
        path = fs_path(key_for(self.workspace, uri))
        config = self.configs.config_for(path, self.root_path(), self.settings)
        return CourseLinks(config.course_base_url)

    def apply_settings(self, raw: Any) -> None:
        parsed = parse_settings(raw, is_known_code)
        for message in parsed.warnings:
            self.warn(message)
        self.settings = parsed.settings
        self.engine.debounce_s = parsed.settings.debounce_ms / 1000


# The one server of this process (as jedi-language-server has it): the handlers below
# register on it at import; ``create_server`` sets its options.
SERVER = TfCoachServer()


def create_server(notebooks_in_jupyterlab: bool = False) -> TfCoachServer:
    SERVER.notebooks_in_jupyterlab = notebooks_in_jupyterlab
    return SERVER


@SERVER.feature(types.INITIALIZE)
def initialize(ls: TfCoachServer, params: types.InitializeParams) -> None:
    text = params.capabilities.text_document
    ls.engine.pull = bool(text and text.diagnostic)
    ls.engine.push_notebooks = not pulls_cells(params.capabilities.experimental)
    ls.apply_settings(params.initialization_options)


@SERVER.feature(types.INITIALIZED)
async def initialized(ls: TfCoachServer, params: types.InitializedParams) -> None:
    workspace = ls.client_capabilities.workspace
    if workspace and workspace.configuration:
        before = ls.settings
        await pull_configuration(ls)
        if ls.settings != before:
            ls.engine.reanalyze_all()


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: TfCoachServer, params: types.DidOpenTextDocumentParams) -> None:
    if not ls.left_to_jupyterlab(params.text_document.uri):
        ls.engine.schedule(params.text_document.uri, delay=0)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: TfCoachServer, params: types.DidChangeTextDocumentParams) -> None:
    if not ls.left_to_jupyterlab(params.text_document.uri):
        ls.engine.schedule(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TfCoachServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.engine.close(uri, [uri])
    ls.hovers.forget(uri, [uri])


@SERVER.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: TfCoachServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.engine.schedule(params.notebook_document.uri, delay=0)


@SERVER.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: TfCoachServer, params: types.DidChangeNotebookDocumentParams) -> None:
    ls.engine.schedule(params.notebook_document.uri)


@SERVER.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: TfCoachServer, params: types.DidCloseNotebookDocumentParams) -> None:
    uris = [cell.uri for cell in params.cell_text_documents]
    ls.engine.close(params.notebook_document.uri, uris)
    ls.hovers.forget(params.notebook_document.uri, uris)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: TfCoachServer, params: types.DidChangeConfigurationParams
) -> None:
    workspace = ls.client_capabilities.workspace
    if params.settings is None and workspace and workspace.configuration:
        await pull_configuration(ls)
    else:
        ls.apply_settings(params.settings)
    ls.engine.reanalyze_all()


@SERVER.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(
        identifier=SECTION, inter_file_dependencies=False, workspace_diagnostics=False
    ),
)
async def diagnostic(
    ls: TfCoachServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    if ls.left_to_jupyterlab(params.text_document.uri):
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    part = await ls.engine.pull_part(params.text_document.uri)
    if part is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    rid = result_id(part)
    ls.engine.mark_sent(params.text_document.uri, rid)
    if params.previous_result_id == rid:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
    # With the note of a pass that ran out of time, as a pushed report has it.
    return types.RelatedFullDocumentDiagnosticReport(items=list(part.published), result_id=rid)


@SERVER.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: TfCoachServer, params: types.HoverParams) -> types.Hover | None:
    if ls.left_to_jupyterlab(params.text_document.uri):
        return None
    return await ls.hovers.hover(params)


@SERVER.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
async def code_action(
    ls: TfCoachServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    document = open_document(ls.workspace, uri)
    if document is None or ls.left_to_jupyterlab(uri):
        return None
    part = await ls.engine.pull_part(uri)
    if part is None:
        return None
    links = ls.links_for(uri)
    edit_caps = ls.client_capabilities.workspace
    document_changes = bool(
        edit_caps and edit_caps.workspace_edit and edit_caps.workspace_edit.document_changes
    )
    return code_actions(
        part,
        uri,
        document.version,
        params,
        ls.workspace.position_codec,
        links,
        document_changes,
    )


@SERVER.command(OPEN_COURSE)
async def open_course(ls: TfCoachServer, *args: Any) -> bool:
    url = _course_url(ls, args)
    window = ls.client_capabilities.window
    if window and window.show_document and window.show_document.support:
        result = await ls.window_show_document_async(
            types.ShowDocumentParams(uri=url, external=True)
        )
        return result.success
    ls.window_show_message(
        types.ShowMessageParams(type=types.MessageType.Info, message=f"tfcoach course: {url}")
    )
    return True


@SERVER.feature(types.SHUTDOWN)
def shutdown(ls: TfCoachServer, params: None) -> None:
    """Stop the timers and worker threads before the client's ``exit``."""
    ls.engine.shutdown()
    ls.hovers.shutdown()


async def pull_configuration(ls: TfCoachServer) -> None:
    """Ask the client for the ``tfcoach`` section (clients that pull settings)."""
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
    except Exception as error:  # a client may not answer workspace/configuration
        log.warning("workspace/configuration failed: %s", error)
        return
    if values and values[0] is not None:
        ls.apply_settings({SECTION: values[0]})


def _course_url(ls: TfCoachServer, args: tuple[Any, ...]) -> str:
    """``tfcoach.openCourse`` takes one argument: a course URL or a section id."""
    target = args[0] if len(args) == 1 else None
    if not isinstance(target, str) or not target:
        raise JsonRpcInvalidParams(f"{OPEN_COURSE} expects a course URL or section id")
    if target.startswith(("http://", "https://", "file://")):
        return target
    # A bare section id names no document: the workspace's config (editor settings over
    # [tool.tfcoach]) decides the base URL, as it does for diagnostics and hovers.
    url = CourseLinks(ls.config_for(None).course_base_url).url(target)
    if url is None:
        raise JsonRpcInvalidParams(f"unknown course section {target!r}")
    return url


__all__ = ["SERVER", "TfCoachServer", "create_server"]
