"""Files: a ``.py`` file or an ``.ipynb`` notebook read (UTF-8, notebook JSON checked as
far as the analysis relies on it) and analysed with its folder's configuration."""

from __future__ import annotations

from pathlib import Path

from jupyterlab_tfcoach.analysis.cells import check_cells
from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.engine import analyze_source
from jupyterlab_tfcoach.analysis.errors import (
    AnalysisDepthError,
    AnalysisInputError,
    AnalysisSyntaxError,
)
from jupyterlab_tfcoach.analysis.findings import Finding
from jupyterlab_tfcoach.analysis.notebook import DEPTH, SyntaxProblem, cell_label
from jupyterlab_tfcoach.analysis.project_config import load_config


def _read_text(path: Path, shown: str) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError as error:
        raise AnalysisInputError(shown, "no such file") from error
    except IsADirectoryError as error:
        raise AnalysisInputError(shown, "is a directory") from error
    except OSError as error:
        raise AnalysisInputError(shown, f"cannot read: {error.strerror or error}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AnalysisInputError(
            shown,
            f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})",
        ) from error
    return text[1:] if text.startswith("\ufeff") else text


def _notebook_code_cells(text: str, shown: str) -> list[str] | None:
    """The code cells' sources; None for a notebook in another language.

    Format 4 (all Jupyter has written since 2015) is read with ``json`` and checked as far
    as the analysis relies on it: nbformat and jsonschema take longer to import than the
    whole check of a notebook. Older formats go through nbformat's converters, imported
    only then.
    """
    import json

    def invalid(detail: str) -> AnalysisInputError:
        return AnalysisInputError(shown, f"invalid notebook JSON: {detail}")

    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: absurd nesting
        raise invalid(str(error) or type(error).__name__) from error
    if not isinstance(notebook, dict):
        raise invalid("the top level is not an object")
    version = notebook.get("nbformat")
    if type(version) is not int:
        raise invalid("no integer 'nbformat' version")
    if version != 4:
        import nbformat  # heavy: only for the formats it converts (or rejects)

        try:
            notebook = nbformat.reads(text, as_version=4)
        except Exception as error:  # nbformat raises many types (JSON, schema, version)
            message = str(error).strip()
            raise invalid(message.splitlines()[0] if message else type(error).__name__) from error
    metadata = notebook.get("metadata", {})
    if not isinstance(metadata, dict):
        raise invalid("'metadata' is not an object")
    language_info = metadata.get("language_info") or {}
    kernelspec = metadata.get("kernelspec") or {}
    language = (language_info.get("name") if isinstance(language_info, dict) else None) or (
        kernelspec.get("language") if isinstance(kernelspec, dict) else None
    )
    if isinstance(language, str) and language.lower() not in ("python", "python3"):
        return None
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise invalid("no 'cells' list")
    sources = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise invalid(f"cells[{index}] is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise invalid(f"cells[{index}]: 'source' is not text")
        sources.append(source)
    return sources


def analyze_path(path: str | Path, config: Config | None = None) -> list[Finding]:
    """Findings for a ``.py`` file or an ``.ipynb`` notebook.

    ``config`` None: read ``[tool.tfcoach]`` from the nearest ``pyproject.toml``.
    Raises ``AnalysisInputError`` for unreadable, non-UTF-8, invalid-notebook or
    syntactically invalid input, and for code nested too deeply to check (then with the
    findings of the rest in ``.findings``); ``ConfigError`` for an invalid configuration.
    """
    file_path = Path(path)
    shown = str(path)
    if config is None:
        config = load_config(file_path)
    text = _read_text(file_path, shown)
    if file_path.suffix.lower() == ".ipynb":
        cells = _notebook_code_cells(text, shown)
        if cells is None:
            return []
        result = check_cells(cells, config, shown)
        if result.syntax_errors:
            first = result.syntax_errors[0]
            more = len(result.syntax_errors) - 1
            raise AnalysisInputError(
                shown,
                _cell_problem(first)
                + (f" (and {more} more problem(s); the rest was checked)" if more else ""),
                result.findings,
            )
        return result.findings
    try:
        return analyze_source(text, config, shown)
    except AnalysisDepthError as error:  # the rest of the file was checked: its findings
        raise AnalysisInputError(shown, str(error), error.findings) from error
    except AnalysisSyntaxError as error:
        raise AnalysisInputError(shown, str(error)) from error


def _cell_problem(problem: SyntaxProblem) -> str:
    if problem.kind != DEPTH:
        if problem.cell is None:  # the joined cells fail as a whole (``parse_cells``)
            return f"syntax error in the notebook's code: {problem.message}"
        return (
            f"syntax error in {cell_label(problem.cell)} at line {problem.line}, column "
            f"{problem.column}: {problem.message}"
        )
    if problem.cell is None:  # the analysis exceeded the recursion limit, somewhere
        return problem.message
    return (
        f"{cell_label(problem.cell)}, line {problem.line}, column {problem.column}: "
        f"{problem.message}"
    )
