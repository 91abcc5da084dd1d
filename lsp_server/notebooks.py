"""LSP 3.17 notebooks <-> the analysis: a notebook's code cells are analysed
together (names flow between cells, as in the kernel) with ``check_cells``, and
findings go back to each cell's own URI."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from jupyterlab_tfcoach.analysis import check_cells
from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.findings import Finding
from jupyterlab_tfcoach.analysis.notebook import DEPTH, SyntaxProblem

NOTEBOOK_TYPE = "jupyter-notebook"
PYTHON_LANGUAGES = frozenset({"python", "", None})

SYNC_OPTIONS = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook=NOTEBOOK_TYPE, cells=[types.NotebookCellLanguage(language="python")]
        )
    ],
    save=False,
)


def pulls_cells(experimental: Any) -> bool:
    """Whether a client that pulls diagnostics (``textDocument/diagnostic``) pulls them for
    notebook cells too. vscode-languageclient 9 does not (microsoft/vscode-languageserver-node
    #1464): the tfcoach VS Code extension says so with the experimental client capability
    ``{"tfcoach": {"notebookCellDiagnostics": "push"}}``, and its notebooks are pushed."""
    section = experimental.get("tfcoach") if isinstance(experimental, dict) else None
    return not (isinstance(section, dict) and section.get("notebookCellDiagnostics") == "push")


@dataclass(frozen=True)
class CellFindings:
    by_uri: dict[str, list[Finding]]
    broken: set[str]  # cells left out because they do not parse (yet)
    # Code nested too deeply to check, by cell (the first cell when no line is known).
    too_deep: dict[str, list[SyntaxProblem]] = field(default_factory=dict)


def code_cells(
    notebook: types.NotebookDocument, lookup: Callable[[str], TextDocument | None]
) -> list[tuple[str, TextDocument]]:
    """The notebook's Python code cells in order, as (cell URI, open document)."""
    result = []
    for cell in notebook.cells:
        if cell.kind != types.NotebookCellKind.Code:
            continue
        document = lookup(cell.document)
        if document is not None and document.language_id in PYTHON_LANGUAGES:
            result.append((cell.document, document))
    return result


def key_for(workspace: Workspace, uri: str) -> str:
    """The unit of analysis a document belongs to: its notebook, or itself."""
    notebook = workspace.get_notebook_document(cell_uri=uri)
    return notebook.uri if notebook is not None else uri


def analyze_notebook(
    cells: Sequence[tuple[str, str]], config: Config, path: str | None
) -> CellFindings:
    """``cells``: (cell URI, source) of the code cells, in notebook order."""
    checked = check_cells([source for _, source in cells], config, path)
    by_uri: dict[str, list[Finding]] = {}
    for finding in checked.findings:
        if finding.cell is not None and 0 <= finding.cell < len(cells):
            by_uri.setdefault(cells[finding.cell][0], []).append(finding)
    syntax = [problem for problem in checked.syntax_errors if problem.kind != DEPTH]
    if any(problem.cell is None for problem in syntax):
        return CellFindings({}, {uri for uri, _ in cells})  # nothing of it parses
    broken = {cells[p.cell][0] for p in syntax if p.cell is not None}
    too_deep: dict[str, list[SyntaxProblem]] = {}
    for problem in checked.syntax_errors:
        if problem.kind == DEPTH:
            cell = problem.cell if problem.cell is not None and problem.cell < len(cells) else 0
            too_deep.setdefault(cells[cell][0], []).append(problem)
    return CellFindings(by_uri, broken, too_deep)
