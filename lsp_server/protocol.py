"""Findings -> LSP shapes.

A Finding counts 1-based lines and 1-based *code point* columns (``end_column``
one past the last character); LSP counts 0-based lines and columns in the
negotiated position encoding (UTF-16 unless the client offered another), converted
by ``analysis/positions.py`` with the codec's counter.
A finding's related locations become the Diagnostic's ``relatedInformation``,
in the finding's own document or, for a notebook, in the cell they are in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import PositionCodec

from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, RelatedLocation, Severity
from jupyterlab_tfcoach.analysis.positions import code_points_to_units
from jupyterlab_tfcoach.course.links import CourseLinks

SOURCE = "tfcoach"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def to_position(
    lines: Sequence[str], line: int, column: int, codec: PositionCodec
) -> types.Position:
    """1-based line / code-point column -> LSP position (clamped to the document)."""
    index = max(line - 1, 0)
    if index >= len(lines):
        return types.Position(line=index, character=0)
    text = lines[index].rstrip("\r\n")
    character = code_points_to_units(text, column - 1, codec.client_num_units)
    return types.Position(line=index, character=character)


def to_range(
    lines: Sequence[str],
    span: Finding | Edit,
    codec: PositionCodec,
) -> types.Range:
    return types.Range(
        start=to_position(lines, span.line, span.column, codec),
        end=to_position(lines, span.end_line, span.end_column, codec),
    )


@dataclass(frozen=True)
class DocumentPart:
    """A document (or one notebook code cell) related locations can point into."""

    uri: str
    lines: Sequence[str]


def _related_part(
    finding: Finding,
    related: RelatedLocation,
    here: DocumentPart | None,
    cells: Sequence[DocumentPart] | None,
) -> DocumentPart | None:
    """The document a related location is in: the finding's own one, or, in a notebook,
    the code cell with its index (``cells`` in the order the analysis numbered them)."""
    if related.cell is None or related.cell == finding.cell:
        return here
    if cells is not None and 0 <= related.cell < len(cells):
        return cells[related.cell]
    return None


def to_related_information(
    finding: Finding,
    codec: PositionCodec,
    here: DocumentPart | None,
    cells: Sequence[DocumentPart] | None = None,
) -> list[types.DiagnosticRelatedInformation] | None:
    """LSP ``relatedInformation`` for a finding's related locations; those whose document
    is unknown (no ``here``, or a cell not in ``cells``) are left out."""
    information = []
    for related in finding.related:
        part = _related_part(finding, related, here, cells)
        if part is None:
            continue
        location = types.Location(
            uri=part.uri,
            range=types.Range(
                start=to_position(part.lines, related.line, related.column, codec),
                end=to_position(part.lines, related.end_line, related.end_column, codec),
            ),
        )
        information.append(
            types.DiagnosticRelatedInformation(location=location, message=related.message)
        )
    return information or None


def to_diagnostic(
    finding: Finding,
    lines: Sequence[str],
    codec: PositionCodec,
    links: CourseLinks,
    uri: str | None = None,
    cells: Sequence[DocumentPart] | None = None,
) -> types.Diagnostic:
    """``uri``: the document the diagnostic is published for (needed for related
    information); ``cells``: a notebook's code cells, so related locations in other
    cells point at the right cell document."""
    href = links.url(finding.section_id)
    here = DocumentPart(uri, lines) if uri is not None else None
    return types.Diagnostic(
        range=to_range(lines, finding, codec),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=to_related_information(finding, codec, here, cells),
        data={"name": finding.name, "section": finding.section_id},
    )


def to_diagnostics(
    findings: Iterable[Finding],
    lines: Sequence[str],
    codec: PositionCodec,
    links: CourseLinks,
    uri: str | None = None,
    cells: Sequence[DocumentPart] | None = None,
) -> list[types.Diagnostic]:
    return [to_diagnostic(f, lines, codec, links, uri, cells) for f in findings]


def to_text_edits(fix: Fix, lines: Sequence[str], codec: PositionCodec) -> list[types.TextEdit]:
    return [
        types.TextEdit(range=to_range(lines, edit, codec), new_text=edit.new_text)
        for edit in fix.edits
    ]


def to_workspace_edit(
    fix: Fix,
    uri: str,
    version: int | None,
    lines: Sequence[str],
    codec: PositionCodec,
    document_changes: bool,
) -> types.WorkspaceEdit:
    """A WorkspaceEdit for one document: versioned ``documentChanges`` when the
    client supports them (so a stale fix is rejected), else ``changes``."""
    edits = to_text_edits(fix, lines, codec)
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=list(edits),
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: list(edits)})


def overlaps(a: types.Range, b: types.Range) -> bool:
    """True when two ranges touch (an empty cursor range inside or at an edge counts)."""
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end
