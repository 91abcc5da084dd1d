"""When to analyse and how results reach the client.

* Every open file or notebook is analysed on one background thread, never on
  the protocol thread; edits are debounced (``debounceMs``, 200 ms default).
* Push (``publishDiagnostics``) unless the client supports pull
  (``textDocument/diagnostic``): never both, or clients show duplicates.
  Notebooks are pushed even then to a client that says it pulls for files but
  not for notebook cells (``push_notebooks``, see ``notebooks.pulls_cells``).
* A result is published only if its document version and settings generation
  are still current; a stale one is dropped (a newer pass is already queued).
* A newer version cancels the passes of older ones that have not started: while
  a slow pass runs, edits never pile up stale versions behind it. Each pass has
  a time budget (``runner.py``).
* A document over the size limit (``maxDocumentCharacters``) is never queued for a
  pass: its result, one "not checked" note, is made at once (``size_limit.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from jupyterlab_tfcoach.analysis.config import Config
from lsp_server.documents import Snapshot, current_version, key_for, snapshot
from lsp_server.runner import AnalysisResult, Analyzer, PartResult
from lsp_server.size_limit import done, is_too_large, too_large_result

log = logging.getLogger(__name__)

ConfigFor = Callable[[Snapshot], Config]


def result_id(part: PartResult) -> str:
    """Content-based, so an unchanged answer is recognised across versions."""
    digest = hashlib.blake2b(digest_size=12)
    for d in part.published:
        digest.update(
            f"{d.code}|{d.range.start.line}:{d.range.start.character}-"
            f"{d.range.end.line}:{d.range.end.character}|{d.severity}|{d.message}|"
            f"{d.code_description.href if d.code_description else ''}\n".encode()
        )
    return digest.hexdigest()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    """Hand a finished analysis back to the protocol thread (unless it shut down)."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the event loop closed while the analysis ran
        log.debug("event loop closed; dropping an analysis result")


class DiagnosticsEngine:
    def __init__(
        self, server: LanguageServer, config_for: ConfigFor, max_characters: Callable[[], int]
    ) -> None:
        self._server = server
        self._config_for = config_for
        self._max_characters = max_characters  # the current maxDocumentCharacters
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfcoach-analysis")
        self._analyzer = Analyzer()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._inflight: dict[tuple[str, int | None, int], Future[AnalysisResult]] = {}
        self._results: dict[str, AnalysisResult] = {}
        self._published: dict[str, set[str]] = {}  # key -> uris we published for
        self._sent_ids: dict[str, str] = {}  # pull: uri -> result id the client holds
        self.pull = False
        self.push_notebooks = False  # pull mode, but the client never pulls for cells
        self.on_result: Callable[[str], None] = lambda key: None  # after a current result
        self.debounce_s = 0.2
        self.generation = 0

    # -- scheduling ------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Analyse the file or notebook ``uri`` belongs to, after the debounce delay."""
        key = key_for(self._server.workspace, uri)
        if not self.pushes(key):
            self._maybe_refresh_later(key)
            return
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()
        wait = self.debounce_s if delay is None else delay
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(wait, self._start_push, key)

    def reanalyze_all(self) -> None:
        """Settings changed: everything is stale."""
        self.generation += 1
        self._results.clear()
        if self.pull:
            self._request_refresh()
        workspace = self._server.workspace
        keys = set(workspace.notebook_documents) | {
            uri for uri in workspace.text_documents if key_for(workspace, uri) == uri
        }
        for key in keys:
            if self.pushes(key):
                self.schedule(key, delay=0)

    def pushes(self, key: str) -> bool:
        """Whether the findings of ``key`` (a file or notebook) are pushed, not pulled."""
        if not self.pull:
            return True
        workspace = self._server.workspace
        return self.push_notebooks and workspace.get_notebook_document(notebook_uri=key) is not None

    def _submit(self, snap: Snapshot) -> Future[AnalysisResult]:
        token = (snap.key, snap.version, self.generation)
        future = self._inflight.get(token)
        if future is not None:
            return future
        # Passes queued for an older version (or settings) of the same document are now
        # stale: cancel them, so they never run after a slow pass (a running one can't be).
        for (key, version, _), queued in list(self._inflight.items()):
            if key == snap.key and queued.cancel():
                log.debug("cancelled the queued pass of %s v%s", key, version)
        codec = self._server.workspace.position_codec
        limit = self._max_characters()
        if is_too_large(snap, limit):
            log.info("%s v%s is over %s characters: not checked", snap.key, snap.version, limit)
            # Its last good findings (from when it was smaller) are never needed again.
            self._executor.submit(self._analyzer.forget, [part.uri for part in snap.parts])
            return done(too_large_result(snap, limit, codec, self.generation))
        config = self._config_for(snap)
        future = self._executor.submit(self._analyzer.run, snap, config, codec, self.generation)
        self._inflight[token] = future
        future.add_done_callback(lambda _: self._inflight.pop(token, None))
        return future

    def _start_push(self, key: str) -> None:
        self._timers.pop(key, None)
        snap = snapshot(self._server.workspace, key)
        if snap is None:
            return
        loop = asyncio.get_running_loop()
        future = self._submit(snap)
        future.add_done_callback(lambda f: _call_soon(loop, self._on_push_result, f))

    def _is_current(self, result: AnalysisResult) -> bool:
        return result.generation == self.generation and result.version == current_version(
            self._server.workspace, result.key
        )

    def _on_push_result(self, future: Future[AnalysisResult]) -> None:
        if future.cancelled():
            return
        if (error := future.exception()) is not None:
            log.error("analysis failed", exc_info=error)
            return
        result = future.result()
        if not self._is_current(result):
            log.debug("dropping stale result for %s v%s", result.key, result.version)
            return
        self._results[result.key] = result
        previous = self._published.get(result.key, set())
        for uri, part in result.parts.items():
            self._publish(uri, part.published, result.version)
        for uri in previous - set(result.parts):
            self._publish(uri, [], None)  # a cell that was deleted or became markdown
        self._published[result.key] = set(result.parts)
        self.on_result(result.key)

    def _publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self._server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    # -- closing -----------------------------------------------------------------------------
    def close(self, key: str, uris: list[str]) -> None:
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()
        self._results.pop(key, None)
        for uri in uris:
            self._sent_ids.pop(uri, None)
        published = self._published.pop(key, set())
        for uri in published if self.pull else published | set(uris):
            self._publish(uri, [], None)
        self._executor.submit(self._analyzer.forget, [*published, *uris])

    # -- pull --------------------------------------------------------------------------------
    async def pull_part(self, uri: str) -> PartResult | None:
        """The current result for one document (or cell), analysing it if needed."""
        workspace = self._server.workspace
        key = key_for(workspace, uri)
        result = self._results.get(key)
        if result is None or not self._is_current(result):
            while True:
                snap = snapshot(workspace, key)
                if snap is None:
                    return None
                future = self._submit(snap)
                try:
                    result = await asyncio.shield(asyncio.wrap_future(future))
                    break
                except asyncio.CancelledError:
                    if not future.cancelled():
                        raise  # this request itself was cancelled
                    # A newer version superseded the queued pass: analyse that one.
            if self._is_current(result):
                self._results[key] = result
                self.on_result(key)
        return result.parts.get(uri)

    def _refresh_supported(self) -> bool:
        caps = self._server.client_capabilities.workspace
        return bool(caps and caps.diagnostics and caps.diagnostics.refresh_support)

    def _request_refresh(self) -> None:
        if self._refresh_supported():
            self._server.workspace_diagnostic_refresh(None)

    def _maybe_refresh_later(self, key: str) -> None:
        """Pull mode, notebook edited: other cells' findings may change (names flow
        between cells), so ask the client to pull again once the edit settles."""
        if self._server.workspace.get_notebook_document(notebook_uri=key) is None:
            return
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(self.debounce_s, self._refresh_if_changed, key)

    def _refresh_if_changed(self, key: str) -> None:
        self._timers.pop(key, None)
        snap = snapshot(self._server.workspace, key)
        if snap is None:
            return
        loop = asyncio.get_running_loop()

        def compare(after: AnalysisResult) -> None:
            if not self._is_current(after):
                return
            self._results[key] = after
            if any(
                uri in self._sent_ids and self._sent_ids[uri] != result_id(part)
                for uri, part in after.parts.items()
            ):
                self._request_refresh()

        def done(future: Future[AnalysisResult]) -> None:
            if not future.cancelled() and future.exception() is None:
                compare(future.result())

        current = self._results.get(key)
        if current is not None and self._is_current(current):
            compare(current)  # a pull already analysed this version: do not analyse it again
            return
        future = self._submit(snap)
        future.add_done_callback(lambda f: _call_soon(loop, done, f))

    def mark_sent(self, uri: str, rid: str) -> None:
        self._sent_ids[uri] = rid

    def shutdown(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
