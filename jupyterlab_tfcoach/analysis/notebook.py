r"""Notebook code cells as one Python source, with positions mapped back to cells.

Cells are joined in order because names flow from cell to cell exactly as in
the kernel. IPython syntax is masked line by line with plain Python of the
same meaning for the analysis (``pass``, or ``name = ...`` for ``x = !ls``),
so every line keeps its number. The statement of a timing magic (``%time y = f(x)``,
``%timeit -n 10 step(x)``) is Python IPython runs: it stays, at its own columns; so does
that of ``out = %time f()``, which binds ``out`` to the value of ``f()`` (``%time``
returns it; other magics bind ``...``). A one-line cell IPython runs as a line magic
without ``%`` (automagic: ``pip install x``, ``ls ./data/``, ``time y = f(x)``) is read
as that magic, valid Python or not, exactly when IPython does (``automagic.py``: the
name must not be bound by an earlier cell). A shell or magic line continued with a trailing
backslash (Colab's ``!pip install ... \``) masks its continuation lines too. A
cell magic whose body is Python (``%%time``, ``%%timeit``, ``%%capture``,
``%%prun``, ``%%debug``) keeps its body; any other cell magic (``%%bash``,
``%%writefile``) is not Python and is blanked as a whole, silently.

A cell that still is not valid Python is blanked too and reported in
``JoinedCells.syntax_errors``: one broken cell, typical while editing, must not
hide the findings of all the others.

``CellPositions`` is the one mapping between a line of the joined source and a line of
a cell, both ways: findings, syntax problems and hover cards all go through it.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from jupyterlab_tfcoach.analysis.automagic import AutomagicLine, automagic_line, binding_of
from jupyterlab_tfcoach.analysis.errors import TOO_DEEP
from jupyterlab_tfcoach.analysis.positions import split_lines

# ``x = !ls`` / ``files = %sx ls``: keep the binding, drop the shell command.
_ASSIGNED_ESCAPE = re.compile(r"^(?P<target>[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*[!%]")


# ``SyntaxProblem.kind``: the code does not parse (a syntax error, or nesting Python's own
# parser refuses) ...
SYNTAX = "syntax"
# ... or it is valid Python nested deeper than the analysis goes (``errors.MAX_NESTING``):
# the code around it was checked. Editors flag syntax errors themselves, not this: a front
# end that stays quiet about syntax errors (the language server) shows this one.
DEPTH = "depth"


@dataclass(frozen=True)
class SyntaxProblem:
    """Code left out of the analysis: a notebook cell (``cell`` its index,
    ``line``/``column`` within it, 1-based) or a whole source (``cell`` None;
    ``line``/``column`` None when there is no position).

    ``kind`` ``SYNTAX``: the cell, or the whole source, does not parse and was left
    out. ``DEPTH``: an expression nested too deeply was left out at that position
    (``cell`` None with no position: an analysis that exceeded Python's recursion
    limit anyway, see ``errors.too_deep_for``); the rest was checked.
    """

    cell: int | None
    line: int | None
    column: int | None
    message: str
    kind: str = SYNTAX

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


def cell_label(cell: int) -> str:
    """How text for people names the code cell with 0-based index ``cell``: ``code cell
    N``, N counted from 1 among code cells (index 2 is ``code cell 3``).

    The one place a label is spelled (``docs/findings.md``, "Naming cells"): CLI text
    locations and input errors, hover cards. Machine fields (JSON, SARIF, REST ``cell``)
    stay 0-based indexes; runtime reports keep IPython's ``Cell In[n]``, which names an
    execution, not a position.
    """
    return f"code cell {cell + 1}"


@dataclass(frozen=True)
class CellPositions:
    """Where each cell's lines are in the joined source (lines 1-based, cells 0-based).

    Every cell takes at least one line (an empty cell: one empty line), so the first
    lines increase strictly. A cell's lines are split as Python counts them
    (``split_lines``: ``\\r\\n``, ``\\r`` or ``\\n``) and joined with ``\\n``: lines
    map one to one whatever a cell's line ends."""

    first_line: tuple[int, ...]  # each cell's first line in the joined source
    line_count: tuple[int, ...]
    # Characters of leading indentation removed from each cell (IPython strips the first
    # line's indentation from every line): add them back to columns within the cell.
    indent: tuple[int, ...] = ()

    def locate(self, line: int) -> tuple[int, int]:
        """Joined-source line -> (cell index, 1-based line within that cell)."""
        cell = max(bisect.bisect_right(self.first_line, line) - 1, 0)
        return cell, line - self.first_line[cell] + 1

    def locate_span(self, line: int, end_line: int) -> tuple[int, int, int]:
        """Joined-source lines of a span -> (cell, line, end line) in the cell of its
        start; an end in a later cell (not for one statement) stops at the cell's end."""
        cell, line_in_cell = self.locate(line)
        end_cell, end_line_in_cell = self.locate(end_line)
        if end_cell != cell:
            end_line_in_cell = self.line_count[cell]
        return cell, line_in_cell, end_line_in_cell

    def where(self, joined_line: int, reader_cell: int) -> str:
        """A line of the joined source as the reader of ``reader_cell`` finds it: ``line
        3`` in that same cell, ``line 1 of code cell 2`` in another (hover cards)."""
        cell, line = self.locate(joined_line)
        return f"line {line}" if cell == reader_cell else f"line {line} of {cell_label(cell)}"

    def joined_line(self, cell: int, line: int) -> int:
        """1-based ``line`` of ``cell`` -> its line in the joined source."""
        return self.first_line[cell] + line - 1

    def indent_of(self, cell: int) -> int:
        return self.indent[cell] if cell < len(self.indent) else 0


@dataclass(frozen=True)
class JoinedCells:
    source: str
    cell_first_line: tuple[int, ...]  # 1-based line of each cell's first line in ``source``
    cell_line_count: tuple[int, ...]
    syntax_errors: tuple[SyntaxProblem, ...]
    cell_indent: tuple[int, ...] = ()  # see ``CellPositions.indent``

    @cached_property
    def positions(self) -> CellPositions:
        """Positions in ``source`` <-> positions in the cells."""
        return CellPositions(self.cell_first_line, self.cell_line_count, self.cell_indent)

    @cached_property
    def _cells_with_code(self) -> frozenset[int]:
        lines = self.source.split("\n")
        return frozenset(
            cell
            for cell, (first, count) in enumerate(
                zip(self.cell_first_line, self.cell_line_count, strict=True)
            )
            if any(line.strip() for line in lines[first - 1 : first - 1 + count])
        )

    def has_code(self, cell: int) -> bool:
        """Whether any of the cell's code is in ``source``: a cell that does not parse,
        or a cell magic whose body is not Python (``%%writefile``), is left out."""
        return cell in self._cells_with_code

    def problems_with(self, found: Sequence[SyntaxProblem]) -> tuple[SyntaxProblem, ...]:
        """``syntax_errors`` and the problems the analysis of ``source`` ``found`` (lines
        of ``source``, ``cell`` None) placed in their cells, in cell order. A problem
        without a line (the analysis exceeded the recursion limit somewhere) stays
        without a cell."""
        placed = list(self.syntax_errors)
        for problem in found:
            if problem.line is None:
                placed.append(problem)
                continue
            cell, line = self.positions.locate(problem.line)
            # An indented cell was analysed dedented: columns shift back (``cells.py``).
            shift = self.positions.indent_of(cell)
            column = None if problem.column is None else problem.column + shift
            placed.append(SyntaxProblem(cell, line, column, problem.message, problem.kind))
        placed.sort(key=lambda problem: -1 if problem.cell is None else problem.cell)
        return tuple(placed)


# Line magics that run the rest of their line as a Python statement in the user's
# namespace, with the options that take a value (IPython's getopt strings).
_STATEMENT_MAGICS: dict[str, frozenset[str]] = {
    "time": frozenset(),
    "timeit": frozenset("nrp"),
    "prun": frozenset("DlsT"),
}
_COMPOUND_STATEMENTS = (
    ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match,
)  # fmt: skip
# ``%name args``: IPython takes the name up to the first space (``_tr_magic``,
# ``MagicAssign``); the magic's own argument parsing strips the spaces after it.
_ESCAPED_MAGIC = re.compile(r"%(\w+) [ \t]*")


class _Timed(NamedTuple):
    """The Python statement a timing magic runs: where it starts in the line, which
    magic runs it, and whether it is one expression (``%time`` then returns its value)."""

    start: int
    magic: str
    expression: bool


def _timed_statement(magic: str, text: str, position: int) -> _Timed | None:
    """The statement of ``%time <stmt>`` / ``%timeit -n 10 <stmt>`` (line magic ``magic``,
    its arguments at ``position`` of ``text``); None for a magic that runs no statement,
    or one that is not a single simple statement."""
    takes_value = _STATEMENT_MAGICS.get(magic)
    if takes_value is None:
        return None
    while text.startswith("-", position):
        option = re.match(r"-(\w)(\S*)[ \t]+", text[position:])
        if option is None:
            return None
        position += option.end()
        if option.group(1) in takes_value and not option.group(2):
            value = re.match(r"\S+[ \t]+", text[position:])  # ``-n 10``
            if value is None:
                return None
            position += value.end()
    statement = text[position:]
    if not statement or statement.rstrip().endswith("\\"):
        return None
    try:
        body = ast.parse(statement).body
    except (SyntaxError, ValueError):
        return None
    except (RecursionError, MemoryError):
        # Nested past the parser's limits: kept, so that the cell's own parse reports it
        # as too deeply nested (masked as a magic, it would vanish without a word).
        return _Timed(position, magic, expression=False)
    if len(body) != 1 or isinstance(body[0], _COMPOUND_STATEMENTS):
        return None
    return _Timed(position, magic, isinstance(body[0], ast.Expr))


def _timed_escape(stripped: str, percent: int) -> _Timed | None:
    """The statement of the ``%magic ...`` that starts at ``percent`` of ``stripped``."""
    magic = _ESCAPED_MAGIC.match(stripped, percent)
    return None if magic is None else _timed_statement(magic.group(1), stripped, magic.end())


def _mask_line(line: str) -> str:
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if not stripped:
        return line
    timed = _timed_escape(stripped, 0) if stripped[0] == "%" else None
    if timed is not None:
        # ``0;`` padded to the magic's width: the statement stays at its own columns and
        # at its own level (no block around it, so its bindings are not conditional).
        return indent + "0;".ljust(timed.start) + stripped[timed.start :]
    if stripped[0] in "%!":
        return indent + "pass"
    if stripped[0] == "?" or (stripped.rstrip().endswith("?") and "#" not in stripped):
        return indent + "pass"  # IPython help: ``?tf.function`` / ``tf.function??``
    assigned = _ASSIGNED_ESCAPE.match(stripped)
    if assigned:
        escape = assigned.end() - 1
        timed = _timed_escape(stripped, escape) if stripped[escape] == "%" else None
        if timed is not None:
            # ``out = %time f()`` binds what the magic returns: the value of ``f()`` for
            # ``%time`` of an expression, else something else (None, ``-o``'s result).
            # The statement runs either way, at its own columns.
            returns_value = timed.magic == "time" and timed.expression
            filler = "" if returns_value else "...;"
            return (
                indent + stripped[:escape] + filler.ljust(timed.start - escape)
                + stripped[timed.start :]
            )  # fmt: skip
        return f"{indent}{assigned.group('target')} = ..."
    return line


# Cell magics that run their body as Python (IPython's own implementations).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


def mask_ipython(cell_lines: list[str]) -> list[str]:
    """IPython-only lines replaced by Python that binds the same names, one per line."""
    lines = list(cell_lines)
    for index, line in enumerate(lines):
        if line.strip():
            stripped = line.lstrip()
            if stripped.startswith("%%"):
                words = stripped[2:].split(None, 1)
                if not words or words[0] not in PYTHON_CELL_MAGICS:
                    return [""] * len(lines)
                lines[index] = ""  # the magic line; its body is Python
            break
    masked: list[str] = []
    continued = False
    for line in lines:
        if continued:
            # The rest of a shell/magic command continued with a backslash.
            masked.append("")
            continued = line.rstrip().endswith("\\")
            continue
        new = _mask_line(line)
        continued = new != line and line.rstrip().endswith("\\")
        masked.append(new)
    return masked


_LEADING_INDENT = re.compile(r"^[ \t]+")


def strip_leading_indent(cell_lines: list[str]) -> tuple[list[str], int]:
    """IPython's ``leading_indent``: when the cell's first line is indented, that same
    whitespace is removed from every line that starts with it. Returns the lines and how
    many characters were removed."""
    if not cell_lines:
        return cell_lines, 0
    found = _LEADING_INDENT.match(cell_lines[0])
    if found is None:
        return cell_lines, 0
    prefix = found.group(0)
    stripped = [line[len(prefix) :] if line.startswith(prefix) else line for line in cell_lines]
    return stripped, len(prefix)


def _parses(text: str) -> SyntaxError | None:
    try:
        ast.parse(text)
    except SyntaxError as error:
        return error
    except ValueError as error:  # null bytes
        return SyntaxError(str(error) or type(error).__name__)
    except (RecursionError, MemoryError):  # the parser's own depth limits
        return SyntaxError(TOO_DEEP)
    return None


class _EarlierCells:
    """What the cells joined so far bind, read from their text on demand: only a one-line
    cell starting with a line magic's name asks (whether that name shadows the magic), so
    most analyses read nothing. Each cell is searched at most once per name asked about."""

    def __init__(self, pieces: list[str], first_lines: list[int], counts: list[int]) -> None:
        # The lists ``join_cells`` fills: read as they are when asked.
        self._pieces = pieces
        self._first_lines = first_lines
        self._counts = counts
        self._known: dict[str, tuple[int, bool]] = {}  # name -> (cells read, bound)

    def bind(self, name: str) -> bool:
        """Whether ``name`` is bound once the cells so far have run, in order."""
        read, bound = self._known.get(name, (0, False))
        cells = len(self._first_lines)
        if read < cells:
            for cell in self._cells_naming(name, read):
                first, count = self._first_lines[cell], self._counts[cell]
                text = "\n".join(self._pieces[first - 1 : first - 1 + count])
                try:
                    tree = ast.parse(text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue  # not run, as far as the analysis knows: it binds nothing
                effect = binding_of(tree, name)
                if effect is not None:
                    bound = effect
        self._known[name] = (cells, bound)
        return bound

    def _cells_naming(self, name: str, start: int) -> list[int]:
        """The cells from ``start`` on whose text has ``name`` as a word, in order: their
        text searched as one, with ``str.find`` (most cells never name a magic)."""
        first_line = self._first_lines[start]
        text = "\n".join(self._pieces[first_line - 1 :])
        found: list[int] = []
        line, searched = first_line, 0
        at = text.find(name)
        while at != -1:
            end = at + len(name)
            if not _is_word_character(text, at - 1) and not _is_word_character(text, end):
                line += text.count("\n", searched, at)
                searched = at
                cell = bisect.bisect_right(self._first_lines, line) - 1
                if not found or found[-1] != cell:
                    found.append(cell)
            at = text.find(name, end)
        return found


def _is_word_character(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def _run_as_magic(lines: list[str], magic: AutomagicLine) -> list[str]:
    """The cell's lines with its automagic line as the analysis reads it, dedented (the
    cell's indent is ``magic.column``): the statement of ``time y = f(x)`` at its own
    columns, any other magic ``pass``."""
    content = lines[magic.line][magic.column :]
    timed = _timed_statement(magic.name, content, magic.arguments - magic.column)
    masked = "pass" if timed is None else "0;".ljust(timed.start) + content[timed.start :]
    return [""] * magic.line + [masked]


def _masked(index: int, lines: list[str]) -> tuple[list[str], int, SyntaxProblem | None]:
    """A cell that does not parse as it is: dedented and its IPython syntax masked, as
    ``(lines, indent, problem)``; blank lines and the problem when it still fails."""
    indent = 0
    dedented, removed = strip_leading_indent(lines)
    if removed and _parses("\n".join(dedented)) is None:
        return dedented, removed, None
    if removed:
        lines, indent = dedented, removed
    lines = mask_ipython(lines)
    masked_error = _parses("\n".join(lines))
    if masked_error is None:
        return lines, indent, None
    # Where it fails once IPython's own syntax is set aside: in a ``%%time`` cell that is
    # the body's error, not the magic line.
    problem = SyntaxProblem(
        cell=index,
        line=max(masked_error.lineno or 1, 1),
        column=max(masked_error.offset or 1, 1) + indent,
        message=masked_error.msg if hasattr(masked_error, "msg") else str(masked_error),
    )
    return [""] * len(lines), indent, problem


def join_cells(
    cells: Sequence[str], blank: Mapping[int, SyntaxProblem] | None = None
) -> JoinedCells:
    """One source for all code cells; broken cells (and those in ``blank``) become blank lines."""
    pieces: list[str] = []
    first_lines: list[int] = []
    counts: list[int] = []
    indents: list[int] = []
    errors: list[SyntaxProblem] = []
    earlier = _EarlierCells(pieces, first_lines, counts)
    next_line = 1
    for index, cell in enumerate(cells):
        lines = split_lines(cell)
        indent = 0
        if blank and index in blank:
            errors.append(blank[index])
            lines = [""] * len(lines)
        elif (magic := automagic_line(lines)) is not None and not earlier.bind(magic.name):
            # IPython runs it as ``%name ...``, valid Python or not (``automagic.py``).
            lines, indent = _run_as_magic(lines, magic), magic.column
        elif _parses("\n".join(lines)) is not None:
            lines, indent, problem = _masked(index, lines)
            if problem is not None:
                errors.append(problem)
        first_lines.append(next_line)
        counts.append(len(lines))
        indents.append(indent)
        pieces.extend(lines)
        next_line += len(lines)
    source = "\n".join(pieces) + ("\n" if pieces else "")
    return JoinedCells(source, tuple(first_lines), tuple(counts), tuple(errors), tuple(indents))
