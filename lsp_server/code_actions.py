"""Code actions for tfcoach diagnostics: the rule's quick fix, and a way to
open the course section that explains it."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace import PositionCodec

from jupyterlab_tfcoach.course.links import CourseLinks
from lsp_server.protocol import SOURCE, overlaps, to_workspace_edit
from lsp_server.runner import PartResult

OPEN_COURSE = "tfcoach.openCourse"


def _same(a: types.Diagnostic, b: types.Diagnostic) -> bool:
    return a.source == b.source and a.code == b.code and a.range == b.range


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def code_actions(
    part: PartResult,
    uri: str,
    version: int | None,
    params: types.CodeActionParams,
    codec: PositionCodec,
    links: CourseLinks,
    document_changes: bool,
) -> list[types.CodeAction]:
    only = [str(k) for k in params.context.only] if params.context.only else None
    if not _wanted(types.CodeActionKind.QuickFix, only):
        return []
    sent = [d for d in params.context.diagnostics if d.source == SOURCE]
    fixes: list[types.CodeAction] = []
    courses: dict[str, types.CodeAction] = {}
    for finding, ours in zip(part.findings, part.diagnostics, strict=True):
        if not overlaps(ours.range, params.range):
            continue
        diagnostic = next((d for d in sent if _same(d, ours)), ours)
        if finding.fix is not None:
            fixes.append(
                types.CodeAction(
                    title=f"{finding.fix.description} ({finding.code})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=True,
                    edit=to_workspace_edit(
                        finding.fix, uri, version, part.lines, codec, document_changes
                    ),
                )
            )
        ref = links.ref(finding.section_id)
        if ref is None:
            continue
        action = courses.get(ref["url"])
        if action is None:
            title = f"Open course: {ref['title']}"
            courses[ref["url"]] = types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title=title, command=OPEN_COURSE, arguments=[ref["url"]]),
            )
        elif action.diagnostics is not None:
            action.diagnostics.append(diagnostic)
    return fixes + list(courses.values())
