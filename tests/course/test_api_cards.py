"""API cards (the hover content): one per TF name the contract lists, each linked to
a course section that exists, found by canonical or public spelling."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from jupyterlab_tfcoach.course import api_cards as api_cards_module
from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.course.api_cards import API_CARDS, ApiCard, api_card, methods_of

# docs/findings.md (hover cards): these names get a card (methods as written on bound objects).
PROMISED_NAMES = {
    "tf.function": "tf.function",
    "tf.Variable": "tf.Variable",
    "tf.constant": "tf.constant",
    "tf.GradientTape": "tf.GradientTape",
    "tf.cast": "tf.cast",
    "tf.print": "tf.print",
    "tf.TensorSpec": "tf.TensorSpec",
    "tape.gradient": "GradientTape.gradient",
    "tape.watch": "GradientTape.watch",
    "v.assign": "Variable.assign",
    "v.assign_add": "Variable.assign_add",
    "v.assign_sub": "Variable.assign_sub",
}

CARDS = list(API_CARDS.values())


def test_every_contract_name_has_a_card() -> None:
    for written, canonical in PROMISED_NAMES.items():
        card = api_card(canonical)
        assert card is not None, written
        assert card.name == canonical


def test_no_card_without_a_contract_name() -> None:
    """A new card is a new promise: add it to this list too (docs/findings.md)."""
    assert set(API_CARDS) == set(PROMISED_NAMES.values())


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_section_resolves(card: ApiCard) -> None:
    assert get_course().section(card.section_id).id == card.section_id


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_card_text_is_one_clean_paragraph(card: ApiCard) -> None:
    for text in (card.summary, card.pitfall):
        assert text.strip() == text and len(text) >= 30, card.name
        assert "\n" not in text and "  " not in text, card.name
        assert text.count("`") % 2 == 0, f"unbalanced inline code in {card.name}"
        assert text[-1] in ".)", card.name
    assert card.summary != card.pitfall


def test_keys_are_the_card_names() -> None:
    assert all(name == card.name for name, card in API_CARDS.items())


def test_public_names() -> None:
    assert api_card("tf.function").public_name == "tf.function"  # type: ignore[union-attr]
    gradient = api_card("GradientTape.gradient")
    assert gradient is not None and gradient.public_name == "tf.GradientTape.gradient"


def test_methods_are_looked_up_through_the_public_class_too() -> None:
    assert api_card("tf.GradientTape.gradient") is api_card("GradientTape.gradient")
    assert api_card("tf.Variable.assign_sub") is api_card("Variable.assign_sub")
    assert methods_of("Variable") == {"assign", "assign_add", "assign_sub"}
    assert methods_of("GradientTape") == {"gradient", "watch"}
    assert methods_of("Tensor") == frozenset()


@pytest.mark.parametrize(
    "name",
    [
        None,
        "",
        "tf.map_fn",
        "function",
        "GradientTape",
        "tf.GradientTape.reset",
        "Variable.read_value",
        "tf.tf.function",
        "numpy.print",
    ],
)
def test_unknown_names_have_no_card(name: str | None) -> None:
    assert api_card(name) is None


def test_cards_are_immutable() -> None:
    with pytest.raises(TypeError):
        API_CARDS["tf.cast"] = API_CARDS["tf.print"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        API_CARDS["tf.cast"].pitfall = "x"  # type: ignore[misc]


def test_imports_only_the_standard_library() -> None:
    """The course package runs in the user's kernel (ARCHITECTURE.md): stdlib only."""
    tree = ast.parse(Path(api_cards_module.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module is not None
            imported.add(node.module)
    heads = {name.split(".")[0] for name in imported}
    assert heads and heads <= set(sys.stdlib_module_names) | {"__future__"}
