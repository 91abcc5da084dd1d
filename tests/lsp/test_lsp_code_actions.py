"""Code actions: the rule's quick fix and "Open course", and tfcoach.openCourse."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from jupyterlab_tfcoach.analysis import analyze_source
from jupyterlab_tfcoach.course import course_ref
from tests.lsp.helpers import DATA, config, initialize, open_text, wait_published

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

TRAIN = DATA / "train.py"
TEXT = TRAIN.read_text(encoding="utf-8")


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to ``text``, like an editor would."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        units, index = 0, 0
        while units < position.character:
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return sum(len(x) + 1 for x in lines[: position.line]) + index

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, root=DATA)
    open_text(lsp_client, TRAIN.as_uri(), TEXT)
    lsp_client.train_diagnostics = (await wait_published(lsp_client, TRAIN.as_uri())).diagnostics
    yield
    await lsp_client.shutdown_session()


async def actions_for(client: LanguageClient, diagnostic: types.Diagnostic) -> list[Any]:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=TRAIN.as_uri()),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )


async def test_quick_fix_applies_the_cli_fix(client: LanguageClient) -> None:
    diagnostic = next(d for d in client.train_diagnostics if d.code == "TFC001")
    actions = await actions_for(client, diagnostic)
    fixes = [a for a in actions if a.is_preferred]
    assert len(fixes) == 1
    fix = fixes[0]
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.diagnostics == [diagnostic]
    (change,) = fix.edit.document_changes
    assert change.text_document.uri == TRAIN.as_uri()
    assert change.text_document.version == 1
    finding = next(f for f in analyze_source(TEXT) if f.code == "TFC001")
    assert finding.fix is not None
    assert fix.title.startswith(finding.fix.description)
    fixed = apply(TEXT, change.edits)
    assert "w.assign_sub(lr * g)" in fixed
    assert "TFC001" not in {f.code for f in analyze_source(fixed)}


async def test_open_course_action_runs_the_command(client: LanguageClient) -> None:
    diagnostic = next(d for d in client.train_diagnostics if d.code == "TFC002")
    actions = await actions_for(client, diagnostic)
    finding = next(f for f in analyze_source(TEXT) if f.code == "TFC002")
    ref = course_ref(finding.section_id)
    course = next(a for a in actions if a.title == f"Open course: {ref['title']}")
    assert course.command.command == "tfcoach.openCourse"
    assert course.command.arguments == [ref["url"]]
    assert course.diagnostics == [diagnostic]
    assert not course.is_preferred

    ok = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=course.command.command, arguments=course.command.arguments
        )
    )
    assert ok is True
    shown = client.shown_documents[-1]
    assert shown.uri == ref["url"]
    assert shown.external is True


async def test_open_course_accepts_a_section_id(client: LanguageClient) -> None:
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="tfcoach.openCourse", arguments=["gradient-tape"])
    )
    assert client.shown_documents[-1].uri == course_ref("gradient-tape")["url"]


@pytest.mark.parametrize("arguments", [None, [], [42], ["no-such-section"], ["a", "b"]])
async def test_open_course_rejects_bad_arguments(client: LanguageClient, arguments: Any) -> None:
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tfcoach.openCourse", arguments=arguments)
        )


async def test_no_actions_away_from_findings(client: LanguageClient) -> None:
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=TRAIN.as_uri()),
            range=types.Range(
                start=types.Position(line=1, character=0), end=types.Position(line=1, character=3)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions == []


async def test_only_filter_excludes_other_kinds(client: LanguageClient) -> None:
    diagnostic = next(d for d in client.train_diagnostics if d.code == "TFC001")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=TRAIN.as_uri()),
            range=diagnostic.range,
            context=types.CodeActionContext(
                diagnostics=[diagnostic], only=[types.CodeActionKind.Refactor]
            ),
        )
    )
    assert actions == []
