"""Snapshots of what the editor has open: a text document or a notebook's code
cells, taken on the protocol thread and handed to the analysis thread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from pygls import uris
from pygls.workspace import TextDocument, Workspace

from jupyterlab_tfcoach.analysis.positions import split_lines
from lsp_server.notebooks import code_cells, key_for

__all__ = ["Part", "Snapshot", "current_version", "fs_path", "key_for", "open_document", "snapshot"]


@dataclass(frozen=True)
class Part:
    """One analysed text: the whole file, or one code cell."""

    uri: str
    source: str

    @property
    def lines(self) -> list[str]:
        return split_lines(self.source)


@dataclass(frozen=True)
class Snapshot:
    key: str  # the text document's URI, or the notebook's URI
    version: int | None
    parts: tuple[Part, ...]
    is_notebook: bool
    path: Path | None


def fs_path(uri: str) -> Path | None:
    path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def open_document(workspace: Workspace, uri: str) -> TextDocument | None:
    """An open document, or None (never falls back to reading the disk)."""
    return workspace.text_documents.get(unquote(uri))


def snapshot(workspace: Workspace, key: str) -> Snapshot | None:
    """``key`` is a notebook URI or a standalone text document URI; None if closed."""
    notebook = workspace.get_notebook_document(notebook_uri=key)
    if notebook is not None:
        parts = tuple(
            Part(uri, document.source)
            for uri, document in code_cells(notebook, lambda u: open_document(workspace, u))
        )
        return Snapshot(key, notebook.version, parts, True, fs_path(key))
    document = open_document(workspace, key)
    if document is None:
        return None
    return Snapshot(key, document.version, (Part(key, document.source),), False, fs_path(key))


def current_version(workspace: Workspace, key: str) -> int | bool | None:
    """The version of ``key`` now, or False when it is no longer open."""
    notebook = workspace.get_notebook_document(notebook_uri=key)
    if notebook is not None:
        return notebook.version
    document = open_document(workspace, key)
    return document.version if document is not None else False
