"""Documents too large to check (setting ``maxDocumentCharacters``, default 1,048,576).

A generated 5 MiB file took the server 8-12 s to analyse and 6-10 s to answer its first
hover, and grew the process from 55 MB to over 1 GB (its syntax trees and binding models).
The parse holds the interpreter lock, so meanwhile a hover in another file waited 2-4 s and
another file's diagnostics 8-16 s (``benchmarks/bench_lsp_huge.py``). Such files are
generated or data, not code a learner writes; so a document over the limit is not checked
at all:

* it is never parsed: the diagnostics engine answers with a ready-made result (one
  Information diagnostic on its first line naming its size, the limit and the setting,
  published or pulled like any result) instead of queueing an analysis pass;
* it gets no hover index: a hover in it answers None at once, and any index (or split
  lines, or last good findings) kept from when it was smaller is dropped;
* when an edit or the setting brings it under the limit, it is analysed again as usual.

Size is counted in characters (code points, ``len`` of the text: free, where UTF-8 bytes
would mean encoding the whole text on every keystroke); for ASCII text that is its size
in bytes. A notebook's size is its code cells' characters together, as they are parsed
together.
"""

from __future__ import annotations

import re
from concurrent.futures import Future

from lsprotocol import types
from pygls.workspace import PositionCodec

from lsp_server.documents import Snapshot
from lsp_server.runner import AnalysisResult, PartResult, note_diagnostic
from lsp_server.settings import MAX_DOCUMENT_CHARACTERS_KEY, SECTION

SETTING = f"{SECTION}.{MAX_DOCUMENT_CHARACTERS_KEY}"
# The note's range ends at the end of the first line, measured on at most this much of it
# (a minified file may be one line of megabytes).
_FIRST_LINE = re.compile(r"[^\r\n]{0,1000}")


def characters(snap: Snapshot) -> int:
    """The size of a text document, or of a notebook's code cells together."""
    return sum(len(part.source) for part in snap.parts)


def is_too_large(snap: Snapshot, limit: int) -> bool:
    return characters(snap) > limit


def too_large_message(snap: Snapshot, limit: int) -> str:
    what = "this notebook's code cells are" if snap.is_notebook else "this file is"
    return (
        f"tfcoach: not checked: {what} too large ({characters(snap):,} characters; "
        f"the limit is {limit:,}, setting {SETTING})"
    )


def too_large_result(
    snap: Snapshot, limit: int, codec: PositionCodec, generation: int
) -> AnalysisResult:
    """The result of a document over the limit, built without parsing it: the one note on
    the first line of the file (of its first code cell), and nothing for the other cells
    (so that their earlier findings are cleared)."""
    parts: dict[str, PartResult] = {}
    for index, part in enumerate(snap.parts):
        notes: tuple[types.Diagnostic, ...] = ()
        if index == 0:
            match = _FIRST_LINE.match(part.source)
            first_line = match.group() if match is not None else ""
            notes = (note_diagnostic(too_large_message(snap, limit), [first_line], codec),)
        parts[part.uri] = PartResult(part.uri, (), (), (), notes)
    return AnalysisResult(snap.key, snap.version, generation, parts)


def done(result: AnalysisResult) -> Future[AnalysisResult]:
    """``result`` as a finished future: what an analysis pass hands back."""
    future: Future[AnalysisResult] = Future()
    future.set_result(result)
    return future
