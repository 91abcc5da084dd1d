"""The course's terms (``course/terms.py``, ``course/terms/<module-id>.json``): every section
and link they name exists, none is an orphan, every rule's section has one, and
``GET tfcoach/api/study/terms`` serves them, behind the token like the other study routes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_tfcoach.analysis import RULES
from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.api_cards import API_CARDS
from jupyterlab_tfcoach.course.terms import (
    TERMS_DIR,
    Term,
    TermsError,
    get_terms,
    load_terms,
    terms_for_section,
)
from jupyterlab_tfcoach.study.progress import ID_PATTERN
from tests.harness import on_server_loop
from tests.server.test_server_routes import Fetch
from tests.server.test_server_study_routes import (  # noqa: F401 (fixtures)
    STUDY,
    raw_fetch,
    study_db,
    tfcoach_config,
)
from tests.study.schemas import problems

TERMS = get_terms()
TERM_IDS = {term.id for term in TERMS}
SECTIONS = {section.id: section for section in get_course().sections}


def test_the_course_has_at_least_60_terms_with_unique_ids() -> None:
    assert len(TERMS) >= 60
    ids = [term.id for term in TERMS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    # A term's id is its card id in the study store.
    assert all(ID_PATTERN.fullmatch(term_id) for term_id in ids)
    assert {path.stem for path in TERMS_DIR.glob("*.json")} <= {m.id for m in get_course().modules}


@pytest.mark.parametrize("term", TERMS, ids=lambda term: term.id)
def test_every_term_names_a_section_of_its_module_and_links_resolve(term: Term) -> None:
    assert term.section_id in SECTIONS, term.section_id
    # Grouped by the module that teaches the term.
    assert SECTIONS[term.section_id].module_id == term.module_id
    for link in (*term.prerequisites, *term.see_also):
        assert link in TERM_IDS, link
        assert link != term.id
    assert term.term.strip() and term.definition.strip()
    # One or two sentences: short enough for a card.
    assert len(term.definition) <= 240, len(term.definition)


def test_no_term_is_an_orphan() -> None:
    linked = {link for term in TERMS for link in (*term.prerequisites, *term.see_also)}
    orphans = [
        term.id
        for term in TERMS
        if term.id not in linked and not term.prerequisites + term.see_also
    ]
    assert orphans == []


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_every_rule_section_has_a_term(rule: Any) -> None:
    """What lets the coach make a card due when a rule fires (``POST study/met``)."""
    found = terms_for_section(rule.section)
    assert found, f"{rule.code}'s section {rule.section} has no term"
    assert all(term.section_id == rule.section for term in found)


def test_every_hover_card_section_has_a_term() -> None:
    for card in API_CARDS.values():
        assert terms_for_section(card.section_id), card.name


def test_a_section_without_terms_has_none() -> None:
    assert terms_for_section("no-such-section") == ()


def test_a_terms_file_of_another_shape_is_refused_naming_the_field(tmp_path: Path) -> None:
    good = {"id": "a", "term": "A", "definition": "d.", "section": "tracing"}
    (tmp_path / "module-09.json").write_text(json.dumps([good, {**good, "prerequisites": "b"}]))
    with pytest.raises(TermsError, match=r"module-09\.json\[1\]\.prerequisites"):
        load_terms(tmp_path)
    (tmp_path / "module-09.json").write_text(json.dumps([{**good, "colour": "red"}]))
    with pytest.raises(TermsError, match="unknown fields: colour"):
        load_terms(tmp_path)
    (tmp_path / "module-09.json").write_text(json.dumps([good]))
    assert load_terms(tmp_path)[0].module_id == "module-09"


@on_server_loop
async def test_the_terms_route_serves_every_term_with_its_module(
    jp_fetch: Fetch,
    raw_fetch: Fetch,  # noqa: F811 (the imported fixture)
    study_db: Path,  # noqa: F811
) -> None:
    for headers in ({}, {"Authorization": "token not-the-token"}):
        response = await raw_fetch(*STUDY, "terms", headers=headers)
        assert response.code == 403, response.body
    response = await jp_fetch(*STUDY, "terms")
    answer = json.loads(response.body)
    assert problems(answer, "termsAnswer") == []
    assert [term["id"] for term in answer["terms"]] == [term.id for term in TERMS]
    tape = next(term for term in answer["terms"] if term["id"] == "tape-watch")
    assert tape["module"] == "module-03"
    assert tape["section"] == "tape-watch"
    assert not study_db.exists()  # the terms are course data, not progress
