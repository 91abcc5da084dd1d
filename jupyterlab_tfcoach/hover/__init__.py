"""Hover cards on TensorFlow names: which card a name under the cursor gets, and
what the card says. Shared by the language server (Markdown hovers) and the
JupyterLab extension (``POST tfcoach/api/hover``, cards in notebook cells).

A hover is a regex on one line (``lexing``) plus a question to the rules' own
binding model, built once per parse of the file or of a notebook's joined cells
(``analysis.lookup``), so it never waits for the analysis and never disagrees
with it on what a name holds. The card text itself is course data
(``jupyterlab_tfcoach.course.api_cards``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from jupyterlab_tfcoach.analysis.errors import AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.lookup import BoundValue, NameLookup
from jupyterlab_tfcoach.analysis.notebook import CellPositions
from jupyterlab_tfcoach.analysis.parsing import parse_cells
from jupyterlab_tfcoach.analysis.positions import split_lines
from jupyterlab_tfcoach.analysis.values import TAPE, VARIABLE
from jupyterlab_tfcoach.course.api_cards import ApiCard, api_card, methods_of
from jupyterlab_tfcoach.hover.lexing import DottedName, code_mask, dotted_at

__all__ = [
    "CardText",
    "CellsIndex",
    "DottedName",
    "NameLookup",
    "Resolution",
    "card_text",
    "code_mask",
    "dotted_at",
    "index_cells",
    "resolve",
    "source_column",
]

# The values whose methods and constructors have cards, by the binding model's kind.
_CARD_KINDS = {VARIABLE: "Variable", TAPE: "GradientTape"}


@dataclass(frozen=True)
class Resolution:
    card: ApiCard
    dotted: DottedName
    receiver: str | None = None  # the bound name for methods / bound objects
    kind: str | None = None  # what the receiver is bound to ("Variable", "GradientTape")
    bound_on_line: int | None = None


def source_column(line_text: str, start: int, indent: int = 0) -> int:
    """The UTF-8 column (as ``ast`` counts) of code point ``start`` of ``line_text``, in
    a parse whose lines lost ``indent`` leading whitespace characters (an indented cell;
    a line that did not start with that whitespace kept its text)."""
    if not line_text[:indent].isspace() or len(line_text) < indent:
        indent = 0
    return max(len(line_text[:start].encode("utf-8")) - indent, 0)


def _card_kind(bound: BoundValue | None) -> str | None:
    return _CARD_KINDS.get(bound.value.kind) if bound is not None else None


def resolve(
    dotted: DottedName, lookup: NameLookup, line: int, column: int, exact: bool = True
) -> Resolution | None:
    """The card for ``dotted`` starting at 1-based ``line`` and UTF-8 ``column`` (in the
    coordinates of the parse behind ``lookup``; ``exact=False`` when that parse is of an
    older version of the text, see ``NameLookup.value_at``)."""
    card = api_card(lookup.canonical(dotted.parts))
    if card is not None:
        return Resolution(card, dotted)
    pos = (line, column)
    if len(dotted.parts) >= 2:
        receiver = lookup.value_at(dotted.parts[:-1], pos, exact)
        kind = _card_kind(receiver)
        method = dotted.parts[-1]
        if receiver is not None and kind is not None and method in methods_of(kind):
            card = api_card(f"{kind}.{method}")
            if card is not None:
                name = ".".join(dotted.parts[:-1])
                return Resolution(card, dotted, name, kind, receiver.line)
    bound = lookup.value_at(dotted.parts, pos, exact)
    kind = _card_kind(bound)
    if bound is not None and kind is not None:
        card = api_card(f"tf.{kind}")
        if card is not None:
            return Resolution(card, dotted, dotted.text, kind, bound.line)
    return None


@dataclass(frozen=True)
class CardText:
    """What a card says, before any front end formats it. ``written`` and ``receiver``
    come from the user's code: front ends escape them (Markdown) or show them as text."""

    title: str  # the public API name: "tf.GradientTape.gradient"
    receiver: str | None  # "tape is bound to a tf.GradientTape on line 3": the name
    bound_to: str | None  # ... the kind ("tf.GradientTape")
    bound_where: str | None  # ... where: "line 3", or "line 2 of code cell 1" in notebooks
    written: str | None  # how the code spells the name, when not as the title
    summary: str
    pitfall: str
    section_id: str

    def to_json(self) -> dict[str, object]:
        return {
            "title": self.title,
            "receiver": self.receiver,
            "bound_to": self.bound_to,
            "bound_where": self.bound_where,
            "written": self.written,
            "summary": self.summary,
            "pitfall": self.pitfall,
        }


def card_text(resolution: Resolution, bound_where: str | None = None) -> CardText:
    """The card's text; ``bound_where`` says where the receiver was bound when the
    table's line numbers are not the reader's (a notebook's joined cells)."""
    card = resolution.card
    title = card.public_name
    bound = resolution.receiver is not None
    written = resolution.dotted.text
    if bound and bound_where is None:
        bound_where = f"line {resolution.bound_on_line}"
    return CardText(
        title=title,
        receiver=resolution.receiver,
        bound_to=f"tf.{resolution.kind}" if bound else None,
        bound_where=bound_where if bound else None,
        written=written if not bound and written != title else None,
        summary=card.summary,
        pitfall=card.pitfall,
        section_id=card.section_id,
    )


@dataclass(frozen=True)
class CellsIndex:
    """A notebook's code cells, joined and indexed once for many hovers."""

    cells: tuple[str, ...]
    lookup: NameLookup | None  # None when the joined cells do not parse
    positions: CellPositions  # the cells' lines in the parse behind ``lookup``
    cell_has_code: tuple[bool, ...]  # False: left out of the parse (see ``JoinedCells``)

    def card_at(self, cell: int, line: int, column: int) -> tuple[CardText, int, int] | None:
        """The card for the name at 0-based ``line``/``column`` (code points) of ``cell``,
        with the name's code-point span on that line."""
        if self.lookup is None or not 0 <= cell < len(self.cells):
            return None
        if not self.cell_has_code[cell]:
            return None  # its names are not in the parse: none of them would be right
        lines = split_lines(self.cells[cell])
        if not 0 <= line < len(lines):
            return None
        dotted = dotted_at(lines[line], column)
        if dotted is None:
            return None
        at = source_column(lines[line], dotted.start, self.positions.indent_of(cell))
        resolution = resolve(dotted, self.lookup, self.positions.joined_line(cell, line + 1), at)
        if resolution is None:
            return None
        where = None
        if resolution.bound_on_line is not None:
            where = self.positions.where(resolution.bound_on_line, cell)
        return card_text(resolution, where), dotted.start, dotted.end


# Each entry holds a notebook's syntax tree and binding model (about 115 MB for a 1 MiB
# notebook, the largest request the route takes): a few notebooks, not a classroom's.
@lru_cache(maxsize=4)
def index_cells(cells: tuple[str, ...]) -> CellsIndex:
    """Join and index ``cells`` (cached: the hovers of one notebook share one parse)."""
    try:
        # As the analysis joins them: a cell that breaks the whole is left out.
        joined, tree = parse_cells(cells)
    except AnalysisSyntaxError:
        return CellsIndex(cells, None, CellPositions((), ()), ())
    has_code = tuple(joined.has_code(index) for index in range(len(cells)))
    return CellsIndex(cells, NameLookup(tree), joined.positions, has_code)
