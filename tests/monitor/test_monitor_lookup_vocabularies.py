"""Lookup layers in the learner's own cells (issue #25): a vocabulary given as a column of
observations (each value repeated), and an Embedding sized by the count of terms where
the lookup that made its ids also gives the out-of-vocabulary index. Each printed fix is
applied to the cell, which then runs and gives what was meant; correct look-alikes keep
their entry free of it or raise nothing."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run
from tests.harness import error_of_failing_cell as failing

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
from keras import layers
keras.utils.set_random_seed(5)
plays = np.array(["jazz", "rock", "jazz", "folk", "rock", "jazz", "soul", "folk"])
heard_stations = [40, 12, 40, 7, 12, 12, 40, 7, 99]
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_vocabulary_given_every_occurrence(kernel: KernelSession) -> None:
    cell = """genre_lookup = layers.StringLookup(vocabulary=plays)
print(genre_lookup.vocabulary_size())
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "preprocessing-adapt"
    assert "`plays` has 8 entries but only 4 different values" in text, text
    fix = text.split("Fix: ", 1)[1]
    unique_fix, adapt_fix = spans(fix)[0], spans(fix)[-1]
    assert unique_fix == "genre_lookup = layers.StringLookup(vocabulary=np.unique(plays))"
    assert adapt_fix == "genre_lookup.adapt(plays)"
    fixed = cell.replace("genre_lookup = layers.StringLookup(vocabulary=plays)", unique_fix)
    report = checked_report(run(kernel, fixed))
    assert report["error"] is None
    # One index per genre and one for unseen values.
    assert run(kernel, "print(genre_lookup.vocabulary_size())").stdout.strip() == "5"
    # The same on an IntegerLookup's set_vocabulary, a list of numbers.
    cell = """stations = layers.IntegerLookup()
stations.set_vocabulary(heard_stations)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`heard_stations` has 9 entries but only 4 different values" in text, text
    fix = spans(text.split("Fix: ", 1)[1])[0]
    assert fix == "stations.set_vocabulary(np.unique(heard_stations))"
    report = checked_report(
        run(kernel, cell.replace("stations.set_vocabulary(heard_stations)", fix))
    )
    assert report["error"] is None


def test_vocabulary_of_distinct_terms_stays_silent(kernel: KernelSession) -> None:
    cell = """genre_lookup = layers.StringLookup(vocabulary=["jazz", "rock", "folk", "soul"])
print(genre_lookup(tf.constant(["soul", "polka"])).numpy())
"""
    execution = run(kernel, cell)
    assert execution.stdout.split() == ["[4", "0]"]
    assert checked_report(execution)["error"] is None


def test_embedding_sized_by_terms_under_a_lookup(kernel: KernelSession) -> None:
    cell = """n_genres = len(np.unique(plays))
genre_codes = layers.StringLookup()
genre_codes.adapt(plays)
genre_vectors = layers.Embedding(n_genres, 3)
out = genre_vectors(genre_codes(tf.constant(plays)))
"""
    # A constant elsewhere holding the right number by chance is not the size to name.
    run(kernel, "SLOTS = 5")
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "preprocessing-adapt"
    assert "`genre_codes`, a StringLookup" in text, text
    assert "index 0 is its slot for values outside the vocabulary" in text
    assert "4 terms take indices 1 to 4" in text
    assert "input_dim=4 counts the terms without that slot" in text
    assert "SLOTS" not in text
    fix = spans(text.split("Fix: ", 1)[1])[-1]
    assert fix == "layers.Embedding(genre_codes.vocabulary_size(), 3)", text
    fixed = cell.replace("layers.Embedding(n_genres, 3)", fix)
    report = checked_report(run(kernel, fixed + "print(out.shape)"))
    assert report["error"] is None
    # Every index the lookup gives has its row, the unseen-value slot included.
    shown = run(kernel, "print(genre_vectors(genre_codes(tf.constant(['polka']))).shape)")
    assert shown.stdout.strip() == "(1, 3)"


def test_embedding_of_plain_ids_keeps_its_reading(kernel: KernelSession) -> None:
    # Look-alike: ids that no lookup made; the lookup in the namespace is not named.
    run(kernel, "genre_codes = layers.StringLookup()\ngenre_codes.adapt(plays)")
    cell = """ids = np.array([[0, 3, 6]])
vectors = layers.Embedding(6, 2)(ids)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "genre_codes" not in text and "outside the vocabulary" not in text, text
