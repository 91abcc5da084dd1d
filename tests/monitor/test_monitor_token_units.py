"""N-grams of one unit given a name that says the other (issue #25, silent bugs): word
n-grams named "char" and character n-grams named "word" are told with the statement
splitting into the unit the name says; the fix runs in the kernel and gives n-grams of
that unit. Matching names and units, and a split at another separator, stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)


def unit_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "of the wrong unit" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split(" first: ", 1)[1])[0]


def test_word_ngrams_named_characters(kernel: KernelSession) -> None:
    cell = """titles = tf.constant(["deep sea", "red fox runs"])
char_bigrams = tf.strings.ngrams(tf.strings.split(titles), 2, separator="")
"""
    notes = unit_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        '`char_bigrams = tf.strings.ngrams(tf.strings.split(titles), 2, separator="")` '
        "(line 2 of this cell) makes n-grams of words, but `char_bigrams` says characters"
    )
    fix = fix_of(notes[0])
    assert fix == (
        'char_bigrams = tf.strings.ngrams(tf.strings.bytes_split(titles), 2, separator="")'
    )
    fixed = cell.replace(cell.splitlines()[1], fix)
    assert unit_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, 'assert char_bigrams.to_list()[0][:2] == [b"de", b"ee"]'))


def test_character_ngrams_named_words(kernel: KernelSession) -> None:
    cell = """def featurise(batch):
    pieces = tf.strings.unicode_split(batch, "UTF-8")
    word_triples = tf.strings.ngrams(pieces, 3)
    return word_triples

out = featurise(tf.constant(["a b c d"]))
"""
    notes = unit_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "(line 3 in `featurise`) makes n-grams of characters" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "word_triples = tf.strings.ngrams(tf.strings.split(batch), 3)"
    fixed = cell.replace("word_triples = tf.strings.ngrams(pieces, 3)", fix)
    assert unit_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, 'assert out.to_list() == [[b"a b c", b"b c d"]]'))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """docs = tf.constant(["good film", "bad"])
char_trigrams = tf.strings.ngrams(tf.strings.bytes_split(docs), 3, separator="")
word_bigrams = tf.strings.ngrams(tf.strings.split(docs), 2)
field_pairs = tf.strings.ngrams(tf.strings.split(docs, sep=","), 2)
"""
    assert unit_notes(checked_report(run(kernel, cell))) == []
