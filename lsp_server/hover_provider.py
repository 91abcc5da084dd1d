"""Hover requests: the binding model built off the protocol thread and cached per
document, a one-line lookup per hover, jedi only as a deadline-bound fallback.

A document over the size limit (``size_limit.py``) is never indexed: a hover in it
answers None before its lines are even split, and whatever was kept for it (index,
lines) is dropped."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from jupyterlab_tfcoach.analysis.engine import gc_paused
from jupyterlab_tfcoach.analysis.errors import AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.notebook import CellPositions
from jupyterlab_tfcoach.analysis.parsing import parse_cells, parse_module
from jupyterlab_tfcoach.analysis.positions import (
    code_points_to_units,
    split_lines,
    units_to_code_points,
)
from jupyterlab_tfcoach.course.api_cards import api_card
from jupyterlab_tfcoach.course.links import CourseLinks
from jupyterlab_tfcoach.hover import NameLookup
from lsp_server import hover
from lsp_server.documents import (
    Snapshot,
    current_version,
    fs_path,
    key_for,
    open_document,
    snapshot,
)
from lsp_server.jedi_fallback import JediFallback, is_user_module
from lsp_server.size_limit import is_too_large

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexedSource:
    version: int | None
    lookup: NameLookup
    source: str  # what jedi sees (a notebook's joined cells)
    # part uri -> its code cell, for the parts whose code is in the parse (every cell of
    # a notebook but those left out of it; a file: its own uri, cell 0)
    cell_of: dict[str, int]
    positions: CellPositions | None  # a notebook's cells in ``source``; None: a file

    def source_line(self, uri: str, line: int) -> tuple[int, int] | None:
        """0-based ``line`` of the part ``uri`` -> (its 1-based line in ``source``, the
        indentation the parse removed from it); None for a part not in the parse."""
        cell = self.cell_of.get(uri)
        if cell is None:
            return None
        if self.positions is None:
            return line + 1, 0
        return self.positions.joined_line(cell, line + 1), self.positions.indent_of(cell)

    def bound_where(self, uri: str, resolution: hover.Resolution) -> str | None:
        """Where the receiver was bound, as the reader of the part ``uri`` finds it (``line
        1 of code cell 2``): a notebook's lines in ``source`` are not its cells' lines.
        None for a file, whose lines are the parse's (the card says ``line N``)."""
        cell = self.cell_of.get(uri)
        if self.positions is None or cell is None or resolution.bound_on_line is None:
            return None
        return self.positions.where(resolution.bound_on_line, cell)


def _index(snap: Snapshot) -> IndexedSource | None:
    with gc_paused():  # the parse and the model: allocations that all stay alive
        return _build_index(snap)


def _build_index(snap: Snapshot) -> IndexedSource | None:
    try:
        if snap.is_notebook:
            # Joined and parsed as the analysis does it (so diagnostics and hovers agree
            # on cells and lines, and a cell that breaks the whole is left out).
            joined, tree = parse_cells([part.source for part in snap.parts])
            source = joined.source
            # A cell left out of the parse gets no card: its names are not in the tree.
            cell_of = {p.uri: i for i, p in enumerate(snap.parts) if joined.has_code(i)}
            positions: CellPositions | None = joined.positions
        else:
            source = snap.parts[0].source
            tree = parse_module(source)
            cell_of, positions = {snap.key: 0}, None
    except AnalysisSyntaxError:
        return None
    return IndexedSource(snap.version, NameLookup(tree), source, cell_of, positions)


# Documents whose index is kept, least recently hovered dropped first. Each index holds
# its syntax tree and binding model (about 15 MB for a 5,000-line file).
MAX_INDEXED = 8
# How long after a hover answered from a stale index the document is indexed again.
REINDEX_DELAY_S = 0.05


class HoverProvider:
    def __init__(
        self,
        server: LanguageServer,
        links_for: Callable[[str], CourseLinks],
        max_characters: Callable[[], int],
    ) -> None:
        self._server = server
        self._links_for = links_for
        self._max_characters = max_characters  # the current maxDocumentCharacters
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfcoach-hover-index")
        # Stored by the index thread, read by the protocol thread.
        self._indexes: OrderedDict[str, IndexedSource] = OrderedDict()
        self._indexes_lock = threading.Lock()
        self._pending: dict[str, tuple[int | None, Future[IndexedSource | None]]] = {}
        self._prefetching: Future[IndexedSource | None] | None = None
        self._awaited: set[Future[IndexedSource | None]] = set()  # a hover waits for these
        self._reindexing: dict[str, asyncio.TimerHandle] = {}
        self._lines: dict[str, tuple[int | None, list[str]]] = {}
        self.jedi = JediFallback()

    def _too_large(self, snap: Snapshot) -> bool:
        """Whether ``snap`` is over the size limit; if so, nothing is kept for it."""
        if not is_too_large(snap, self._max_characters()):
            return False
        self.forget(snap.key, [part.uri for part in snap.parts])
        return True

    def _build(self, snap: Snapshot) -> Future[IndexedSource | None]:
        if self._too_large(snap):
            never: Future[IndexedSource | None] = Future()
            never.set_result(None)
            return never
        pending = self._pending.get(snap.key)
        if pending is not None and pending[0] == snap.version:
            return pending[1]
        future = self._executor.submit(_index, snap)
        self._pending[snap.key] = (snap.version, future)

        def store(done: Future[IndexedSource | None]) -> None:
            # Also run, at once, by ``cancel()``. Only the document's latest build is
            # kept: not one superseded by a newer version's, nor one of a closed document.
            if self._pending.get(snap.key, (None, None))[1] is not done:
                return
            self._pending.pop(snap.key, None)
            if done.cancelled() or done.exception() is not None or done.result() is None:
                return
            with self._indexes_lock:
                self._indexes[snap.key] = done.result()  # type: ignore[assignment]
                self._indexes.move_to_end(snap.key)
                while len(self._indexes) > MAX_INDEXED:
                    self._indexes.popitem(last=False)

        future.add_done_callback(store)
        return future

    def prefetch(self, key: str) -> None:
        """Index a document the first time it was analysed, so that the first hover
        does not wait for the parse; later edits re-index lazily, on hover.

        Only the document analysed last is indexed ahead: when an editor opens many
        files at once, the hover comes in the one being edited, and its index must not
        wait behind the others'. A queued index of an earlier one is dropped, unless a
        hover already waits for it."""
        snap = snapshot(self._server.workspace, key)
        if snap is None or self._too_large(snap):
            return
        if key in self._indexes or key in self._pending:
            return
        previous = self._prefetching
        if previous is not None and previous not in self._awaited:
            previous.cancel()  # only if it has not started; a running one finishes
        self._prefetching = self._build(snap)

    def forget(self, key: str, uris: list[str]) -> None:
        if (timer := self._reindexing.pop(key, None)) is not None:
            timer.cancel()
        with self._indexes_lock:
            self._indexes.pop(key, None)
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending[1].cancel()  # not started: never runs; running: not stored
        for uri in uris:
            self._lines.pop(uri, None)

    def _reindex(self, key: str) -> None:
        self._reindexing.pop(key, None)
        snap = snapshot(self._server.workspace, key)
        if snap is not None:
            self._build(snap)

    def _indexed(self, key: str) -> IndexedSource | None:
        with self._indexes_lock:
            index = self._indexes.get(key)
            if index is not None:
                self._indexes.move_to_end(key)
            return index

    async def _index_for(self, snap: Snapshot) -> IndexedSource | None:
        key = snap.key
        index = self._indexed(key)
        if index is not None:
            if index.version != snap.version and key not in self._reindexing:
                # Answer from the slightly stale index now, re-index just after: the
                # parse holds the interpreter lock (about 100 ms for 5,000 lines), and
                # started at once it would hold up this very answer.
                loop = asyncio.get_running_loop()
                self._reindexing[key] = loop.call_later(REINDEX_DELAY_S, self._reindex, key)
            return index
        future = self._build(snap)
        self._awaited.add(future)
        try:
            await asyncio.shield(asyncio.wrap_future(future))
        finally:
            self._awaited.discard(future)
        return self._indexed(key)

    def _line(self, uri: str, number: int) -> str | None:
        document = open_document(self._server.workspace, uri)
        if document is None:
            return None
        cached = self._lines.get(uri)
        if cached is None or cached[0] != document.version:
            cached = (document.version, split_lines(document.source))
            self._lines[uri] = cached
        lines = cached[1]
        return lines[number] if 0 <= number < len(lines) else None

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri, position = params.text_document.uri, params.position
        key = key_for(self._server.workspace, uri)
        snap = snapshot(self._server.workspace, key)
        if snap is None or self._too_large(snap):
            return None
        line_text = self._line(uri, position.line)
        if line_text is None or not line_text.strip():
            return None
        codec = self._server.workspace.position_codec
        column = units_to_code_points(line_text, position.character, codec.client_num_units)
        dotted = hover.dotted_at(line_text, column)
        if dotted is None:
            return None
        index = await self._index_for(snap)
        if index is None:
            return None
        in_source = index.source_line(uri, position.line)
        if in_source is None:
            return None
        line, indent = in_source  # the parse saw an indented cell dedented
        at = hover.source_column(line_text, dotted.start, indent)
        # A stale index (the text changed since) cannot tell which name is at a position.
        exact = index.version == current_version(self._server.workspace, key)
        resolution = hover.resolve(dotted, index.lookup, line, at, exact)
        if resolution is None:
            shifted = max(column - indent, 0)
            resolution = await self._jedi(dotted, index, key, line, shifted, at)
        if resolution is None:
            return None
        links = self._links_for(uri)
        kind = self._content_kind()
        start = code_points_to_units(line_text, dotted.start, codec.client_num_units)
        end = code_points_to_units(line_text, dotted.end, codec.client_num_units)
        markdown = kind == types.MarkupKind.Markdown
        where = index.bound_where(uri, resolution)
        return types.Hover(
            contents=types.MarkupContent(
                kind=kind, value=hover.render(resolution, links, markdown, where)
            ),
            range=types.Range(
                start=types.Position(line=position.line, character=start),
                end=types.Position(line=position.line, character=end),
            ),
        )

    def _content_kind(self) -> types.MarkupKind:
        """Markdown unless the client asks for plain text only (``hover.contentFormat``)."""
        capabilities = self._server.client_capabilities.text_document
        formats = capabilities.hover.content_format if capabilities and capabilities.hover else None
        if formats and types.MarkupKind.Markdown not in formats:
            return types.MarkupKind.PlainText
        return types.MarkupKind.Markdown

    async def _jedi(
        self,
        dotted: hover.DottedName,
        index: IndexedSource,
        key: str,
        line: int,
        column: int,
        source_column: int,
    ) -> hover.Resolution | None:
        imported = index.lookup.imported_from(dotted.parts[0], (line, source_column))
        if imported is None:
            return None
        path = fs_path(key)
        root_uri = self._server.workspace.root_uri
        root = fs_path(root_uri) if root_uri else None
        if not is_user_module(imported[0], imported[1], path, root):
            return None
        card_key = await self.jedi.card_key(
            index.source, str(path) if path else None, str(root) if root else None, line, column
        )
        card = api_card(card_key)
        return hover.Resolution(card, dotted) if card is not None else None

    def shutdown(self) -> None:
        for timer in self._reindexing.values():
            timer.cancel()
        self._reindexing.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.jedi.shutdown()
