"""A lookup table whose rows the session reads by id, L2-normalised over axis 0
(``symptoms/lookup_tables.py``): each column gets length 1, no row does. The note names
the call, the table, the lookup that makes its rows items, the rows' lengths and a norm
written over the same axis; its fix (``axis=-1``) applied gives every row length 1. A Dense
kernel normalised per unit, a table looked up by columns, and a row normalisation stay
silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SONGS = """song_vectors = tf.Variable(
    tf.reshape(tf.range(1.0, 29.0), (7, 4)) / 10.0, name="songs"
)

def playlist_vectors(playlist):
    return tf.nn.embedding_lookup(song_vectors, playlist)

print(playlist_vectors(tf.constant([0, 3])).shape)
"""

RESCALE = """def rescale_songs():
    song_vectors.assign(tf.math.l2_normalize(song_vectors, axis={axis}))

rescale_songs()
print(float(tf.reduce_max(tf.norm(song_vectors, axis=0))))
"""


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    return note_texts(checked_report(run(kernel, code)))


def table_notes(texts: list[str]) -> list[str]:
    return [t for t in texts if "over axis 0: each column gets length 1" in t]


def test_a_table_looked_up_by_rows_normalised_over_its_columns(kernel: KernelSession) -> None:
    assert table_notes(notes_of(kernel, SONGS)) == []
    notes = table_notes(notes_of(kernel, RESCALE.format(axis=0)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`tf.math.l2_normalize(song_vectors, axis=0)` (line 2, in `rescale_songs`)" in text
    assert "the (7, 4) `song_vectors`" in text, text
    assert "(`tf.nn.embedding_lookup(song_vectors, playlist)`, cell In[" in text
    assert "the columns of `song_vectors` have length 1 and its rows lengths from" in text
    assert "`tf.norm(song_vectors, axis=0)` measures the columns too" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "song_vectors.assign(tf.math.l2_normalize(song_vectors, axis=-1))"
    # The fix in the function: every song's row has length 1, and the note is gone.
    run(kernel, SONGS)
    fixed = RESCALE.format(axis=0).replace(
        "song_vectors.assign(tf.math.l2_normalize(song_vectors, axis=0))", fix
    )
    assert table_notes(notes_of(kernel, fixed)) == []
    lengths = value_of(kernel, "tf.norm(song_vectors, axis=1).numpy().round(5).tolist()")
    assert lengths == [1.0] * 7


def test_a_name_bound_to_the_normalised_table_of_an_embedding_layer(
    kernel: KernelSession,
) -> None:
    code = (
        "genre_layer = keras.layers.Embedding(6, 3)\n"
        "genre_layer(np.array([[0, 5]]))\n"
        "unit_genres = tf.math.l2_normalize(genre_layer.embeddings, 0)\n"
    )
    notes = table_notes(notes_of(kernel, code))
    assert len(notes) == 1, notes
    assert "the table of the Embedding layer `genre_layer`" in notes[0], notes[0]
    assert "the columns of `unit_genres` have length 1" in notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "unit_genres = tf.math.l2_normalize(genre_layer.embeddings, -1)"
    assert table_notes(notes_of(kernel, code.replace(code.splitlines()[-1], fix))) == []
    rows = value_of(kernel, "np.linalg.norm(unit_genres.numpy(), axis=1).round(5).tolist()")
    assert rows == [1.0] * 6


def test_kernels_column_tables_and_row_normalisations_stay_silent(
    kernel: KernelSession,
) -> None:
    silent = [
        # A Dense kernel normalised per unit (weight normalisation): read as a matrix only.
        "proj = keras.layers.Dense(5)\nproj(np.ones((2, 3), 'float32'))\n"
        "proj.kernel.assign(tf.math.l2_normalize(proj.kernel, axis=0))",
        # Items are the columns: looked up along axis 1, normalised over axis 0 on purpose.
        "codebook = tf.Variable(tf.random.normal((4, 9)))\n"
        "picked = tf.gather(codebook, [1, 8], axis=1)\n"
        "codebook.assign(tf.math.l2_normalize(codebook, axis=0))",
        # Rows looked up, rows normalised.
        SONGS + "song_vectors.assign(tf.math.l2_normalize(song_vectors, axis=-1))",
        # A parameter of the function, not the session's table.
        SONGS + "def unit(song_vectors):\n"
        "    return tf.math.l2_normalize(song_vectors, axis=0)\n"
        "out = unit(tf.ones((3, 2)))",
    ]
    for code in silent:
        assert table_notes(notes_of(kernel, code)) == [], code
