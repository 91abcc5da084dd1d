"""Positions, tested once for every front end: lines as Python counts them, columns between
code points and a client's code units (``analysis/positions.py``: the Jupyter server's
routes and the language server convert with it), and lines between a notebook's cells and
their joined source (``analysis/notebook.py``: findings, syntax problems and hover cards).

No TensorFlow: these are the conversions every finding and hover card goes through."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import PositionCodec

from jupyterlab_tfcoach.analysis import check_cells
from jupyterlab_tfcoach.analysis.notebook import CellPositions, cell_label, join_cells
from jupyterlab_tfcoach.analysis.positions import (
    code_points_to_units,
    split_lines,
    units_to_code_points,
    utf16_units,
)

EMOJI = "\N{GRINNING FACE}"  # outside the Basic Multilingual Plane: two UTF-16 units
FAMILY = "\N{MAN}\N{ZERO WIDTH JOINER}\N{WOMAN}"  # three code points, five UTF-16 units
COMBINING = "e\N{COMBINING ACUTE ACCENT}"  # one letter on screen, two code points

LINES = [
    "",
    "x = 1",
    f"label = '{EMOJI}'; w = w - 1",
    f"{EMOJI}{EMOJI}x",
    f"caf{COMBINING} = tf.Variable(1.0)",
    f"s = '{FAMILY}'  # {COMBINING}{EMOJI}",
    "名前 = tf.constant([1, 2])",  # CJK: one UTF-16 unit each
]


def _utf16_reference(text: str) -> int:
    """An independent count: one unit per code point, two past U+FFFF."""
    return sum(2 if ord(char) > 0xFFFF else 1 for char in text)


# ---------------------------------------------------------------------------------------
# code points <-> UTF-16 (the browser) and the LSP's negotiated encodings


def test_utf16_units_count_surrogate_pairs_and_combining_marks() -> None:
    assert utf16_units("") == 0
    assert utf16_units("abc") == 3
    assert utf16_units(EMOJI) == 2
    assert utf16_units(FAMILY) == 5
    assert utf16_units(COMBINING) == 2  # the accent is a code point of its own
    assert utf16_units("名前") == 2


def test_utf16_units_count_a_lone_surrogate_as_one_unit() -> None:
    # JSON from a browser may carry one (a string cut inside a surrogate pair).
    assert utf16_units("a\ud83d") == 2
    assert units_to_code_points("\ud83dab", 2) == 2
    assert code_points_to_units("\ud83dab", 2) == 2


@pytest.mark.parametrize("line", LINES)
def test_every_code_point_round_trips_through_utf16(line: str) -> None:
    for index in range(len(line) + 1):
        units = code_points_to_units(line, index)
        assert units == _utf16_reference(line[:index])
        assert units_to_code_points(line, units) == index


def test_an_offset_inside_a_surrogate_pair_lands_after_the_character() -> None:
    line = f"a{EMOJI}b"
    # Units: a=0, the emoji 1..2, b=3. Offset 2 is between the emoji's two halves.
    assert units_to_code_points(line, 1) == 1
    assert units_to_code_points(line, 2) == 2
    assert units_to_code_points(line, 3) == 2
    assert units_to_code_points(line, 4) == 3


def test_positions_past_the_end_of_a_line_are_its_end() -> None:
    line = f"w{EMOJI}"
    assert units_to_code_points(line, 3) == 2
    assert units_to_code_points(line, 99) == 2
    assert units_to_code_points("", 5) == 0
    assert code_points_to_units(line, 2) == 3
    assert code_points_to_units(line, 99) == 3
    assert code_points_to_units(line, -1) == 0  # never counted from the end
    assert units_to_code_points(line, -1) == 0


@pytest.mark.parametrize(
    "encoding",
    [
        types.PositionEncodingKind.Utf8,
        types.PositionEncodingKind.Utf16,
        types.PositionEncodingKind.Utf32,
    ],
)
@pytest.mark.parametrize("line", LINES)
def test_the_language_servers_encodings_round_trip(
    encoding: types.PositionEncodingKind, line: str
) -> None:
    # The language server passes its negotiated codec's counter.
    codec = PositionCodec(encoding)
    for index in range(len(line) + 1):
        units = code_points_to_units(line, index, codec.client_num_units)
        assert units == len(line[:index].encode(_PYTHON_CODEC[encoding])) // _WIDTH[encoding]
        assert units_to_code_points(line, units, codec.client_num_units) == index


_PYTHON_CODEC = {
    types.PositionEncodingKind.Utf8: "utf-8",
    types.PositionEncodingKind.Utf16: "utf-16-le",
    types.PositionEncodingKind.Utf32: "utf-32-le",
}
_WIDTH = {
    types.PositionEncodingKind.Utf8: 1,
    types.PositionEncodingKind.Utf16: 2,
    types.PositionEncodingKind.Utf32: 4,
}


def test_the_browsers_count_and_the_language_servers_utf16_agree() -> None:
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    for line in LINES:
        for units in range(utf16_units(line) + 2):
            assert units_to_code_points(line, units) == units_to_code_points(
                line, units, codec.client_num_units
            )


# ---------------------------------------------------------------------------------------
# lines


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", [""]),
        ("\n", [""]),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\rb\r", ["a", "b"]),
        ("a\r\n\rb\nc", ["a", "", "b", "c"]),
        ("a\fb\n", ["a\fb"]),  # a form feed ends no line for Python
        ("a\u2028b\x85c", ["a\u2028b\x85c"]),  # nor do Unicode separators
    ],
)
def test_lines_split_as_python_counts_them(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


# ---------------------------------------------------------------------------------------
# a notebook's cells <-> their joined source

CELLS = [
    "",  # an empty cell: one empty line
    "import tensorflow as tf\n",  # with a trailing newline
    "w = tf.Variable(1.0)",  # without
    "\n",
    "a = 1\r\nb = 2\r\n",  # Windows line ends
    "c = 3\rd = 4",  # old Mac line ends
    f"s = '{EMOJI}'\n\n\nt = s",  # blank lines inside
    "    x = 1\n    y = 2",  # indented: IPython runs it dedented
]


def test_every_line_of_every_cell_round_trips_through_the_joined_source() -> None:
    joined = join_cells(CELLS)
    positions = joined.positions
    joined_lines = joined.source.split("\n")
    assert joined.syntax_errors == ()
    for cell, text in enumerate(CELLS):
        lines = split_lines(text)
        assert positions.line_count[cell] == len(lines)
        for number, line_text in enumerate(lines, start=1):
            joined_line = positions.joined_line(cell, number)
            assert positions.locate(joined_line) == (cell, number)
            indent = positions.indent_of(cell)
            assert joined_lines[joined_line - 1] == line_text[indent:]
    assert joined.source.count("\n") == sum(positions.line_count)
    assert [positions.indent_of(cell) for cell in range(len(CELLS))] == [0] * 7 + [4]


def test_a_span_that_runs_into_a_later_cell_stops_at_its_own_cells_end() -> None:
    positions = CellPositions(first_line=(1, 3, 4), line_count=(2, 1, 3))
    assert positions.locate_span(1, 2) == (0, 1, 2)
    assert positions.locate_span(2, 4) == (0, 2, 2)
    assert positions.locate_span(1, 6) == (0, 1, 2)
    assert positions.locate_span(3, 3) == (1, 1, 1)
    assert positions.locate_span(4, 6) == (2, 1, 3)
    assert positions.indent_of(2) == 0  # no indents recorded: none removed


def test_a_finding_in_a_windows_cell_after_empty_cells_is_placed_in_its_cell() -> None:
    cells = [
        "",
        "\n",
        "import tensorflow as tf\r\n",
        "@tf.function\r\ndef f(x):\r\n    print(x)\r\n",
    ]
    [finding] = check_cells(cells).findings
    assert (finding.code, finding.cell, finding.line, finding.column) == ("TFC002", 3, 3, 5)


def test_a_syntax_error_is_placed_in_its_cell_with_the_cells_indent() -> None:
    cells = ["x = 1\n", "", "  y = (\n  z = 2"]
    [problem] = check_cells(cells).syntax_errors
    assert (problem.cell, problem.line, problem.column) == (2, 1, 7)  # the "(" in the cell


# ---------------------------------------------------------------------------------------
# cell labels: one spelling for people, ``code cell N`` with N = index + 1 (#27)


def test_a_cell_label_counts_code_cells_from_one() -> None:
    # CLI text locations, CLI input errors and hover cards alike; JSON "cell" 2 is this one.
    assert cell_label(2) == "code cell 3"


def test_where_names_another_cell_and_not_the_readers_own() -> None:
    positions = CellPositions(first_line=(1, 2, 3), line_count=(1, 1, 3))
    assert positions.where(4, reader_cell=2) == "line 2"  # the reader's own cell
    assert positions.where(2, reader_cell=2) == "line 1 of code cell 2"  # index 1
