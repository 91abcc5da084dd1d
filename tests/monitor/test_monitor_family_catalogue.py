"""The error families ``docs/report.md`` lists are the catalogue the generic error entry
walks (``errors/families.py::FAMILIES``): the same families, in the order they are tried,
with the course section each links, and the counts the text gives. No kernel: the
catalogue is plain records, the document plain Markdown."""

from __future__ import annotations

import importlib
import pkgutil
import re

from jupyterlab_tfcoach.monitor import errors
from jupyterlab_tfcoach.monitor.errors.families import FAMILIES
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily
from tests.harness import REPO_ROOT

REPORT_DOC = (REPO_ROOT / "docs" / "report.md").read_text(encoding="utf-8")
SECTION_HEADING = "## `error`: the failing line and the error families"
NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
}


def families_part() -> str:
    """The report document's part on the error families, up to its next heading."""
    start = REPORT_DOC.index(SECTION_HEADING) + len(SECTION_HEADING)
    return REPORT_DOC[start:].split("\n#", 1)[0]


def family_tables() -> list[list[list[str]]]:
    """Each Markdown table of that part whose first column is ``family``: its rows' cells."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in families_part().splitlines():
        if not line.startswith("|"):
            current = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == "family":
            current = []
            tables.append(current)
        elif current is not None and not set(cells[0]) <= {"-"}:
            assert len(cells) == 4, f"a row with {len(cells)} cells: {line}"
            current.append(cells)
    return tables


def documented_name(cell: str) -> str:
    """The family's name, without a trailing note in parentheses."""
    return re.sub(r"\s*\([^()]*\)$", "", cell)


def test_every_family_record_is_in_the_catalogue_once() -> None:
    """A record written in a ``families_*.py`` module but not listed would never be tried."""
    records = [
        value
        for module in pkgutil.iter_modules(errors.__path__)
        if module.name.startswith("families_")
        for value in vars(importlib.import_module(f"{errors.__name__}.{module.name}")).values()
        if isinstance(value, ErrorFamily)
    ]
    assert len(records) >= 18
    assert sorted(id(record) for record in records) == sorted(id(family) for family in FAMILIES)
    assert len({family.name for family in FAMILIES}) == len(FAMILIES)


def test_the_document_lists_the_catalogue_in_order() -> None:
    rows = [row for table in family_tables() for row in table]
    assert [documented_name(row[0]) for row in rows] == [family.name for family in FAMILIES]


def test_each_documented_course_section_is_the_familys() -> None:
    rows = [row for table in family_tables() for row in table]
    sections = [re.findall(r"`([a-z0-9-]+)`", row[3])[:1] for row in rows]
    assert sections == [[family.section] for family in FAMILIES]


def test_the_counts_the_document_gives_are_the_catalogues() -> None:
    part = families_part()
    counts = [int(n) for n in re.findall(r"\b(\d+) families", part)]
    counts += [int(n) for n in re.findall(r"\((\d+) in all\)", part)]
    assert counts and set(counts) == {len(FAMILIES)}
    # "the last four are in the second table", "Four more families": its rows.
    *_, last = family_tables()
    words = re.findall(r"the last (\w+) are in the second table|(\w+) more famil(?:y|ies)\b", part)
    told = [NUMBER_WORDS[(a or b).lower()] for a, b in words]
    assert told and set(told) == {len(last)}
