"""Input pipelines that silently change the data (issue #25, silent data bugs): a
validation or test pipeline built with a random map (``symptoms/evaluation_pipelines.py``),
``from_generator`` given one existing iterator (``symptoms/generator_reuse.py``), 0 tested
as padding where 0 is real data (``symptoms/padding_zeros.py``), and a mean over a ragged
tensor padded by ``to_tensor`` (``symptoms/padded_means.py``). In a real kernel: the
symptom holds, the note names the learner's names, the printed fix run as printed makes
the result right and the note go; correct look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def notes_in(kernel: KernelSession, code: str, section: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


# ------------------------------------------------------------------ evaluation pipelines
PIECES = (
    "imgs = np.random.rand(20, 8, 8, 3).astype('float32')\n"
    "tags = np.arange(20) % 2\n"
    "flip = keras.layers.RandomFlip('horizontal')\n"
    "def jitter(x, y):\n"
    "    return flip(x, training=True), y\n"
    "def scale(x, y):\n"
    "    return x / 2.0, y\n"
)
SAME_TWICE = (
    "a = np.concatenate([x.numpy() for x, _ in {name}])\n"
    "b = np.concatenate([x.numpy() for x, _ in {name}])\n"
    "same = bool(np.array_equal(a, b))\n"
)


def test_a_holdout_pipeline_built_with_a_random_map(kernel: KernelSession) -> None:
    run(kernel, PIECES)
    cell = (
        "holdout_ds = tf.data.Dataset.from_tensor_slices((imgs, tags))"
        ".batch(4).map(scale).map(jitter)\n"
    )
    [text] = notes_in(kernel, cell, "tf-data")
    run(kernel, SAME_TWICE.format(name="holdout_ds"))
    assert value_of(kernel, "same") is False  # the symptom: each pass sees other images
    assert text.startswith(
        "`holdout_ds` is validation or test data, but its pipeline has `.map(jitter)`, whose "
        "function draws random numbers (an augmentation)"
    ), text
    fix = codes(text)[-1]
    assert (
        fix == "holdout_ds = tf.data.Dataset.from_tensor_slices((imgs, tags)).batch(4).map(scale)"
    )
    assert notes_in(kernel, fix, "tf-data") == []
    run(kernel, SAME_TWICE.format(name="holdout_ds"))
    assert value_of(kernel, "same") is True


def test_a_training_pipeline_with_augmentation_stays_silent(kernel: KernelSession) -> None:
    run(kernel, PIECES)
    train = "train_ds = tf.data.Dataset.from_tensor_slices((imgs, tags)).batch(4).map(jitter)\n"
    assert notes_in(kernel, train, "tf-data") == []
    test = "test_ds = tf.data.Dataset.from_tensor_slices((imgs, tags)).batch(4).map(scale)\n"
    assert notes_in(kernel, test, "tf-data") == []


def test_a_random_subsample_in_a_test_pipeline_stays_silent(kernel: KernelSession) -> None:
    """A map that keeps a random subset of an element's rows (``tf.random.shuffle`` then a
    slice) alters no value: a set sampled to a fixed size is sampled in evaluation too.
    Dropping that map would drop its scaling as well, so nothing is told, at build or at
    ``evaluate``. A map that also adds noise to the rows is still told."""
    run(
        kernel,
        "readings = np.random.default_rng(4).normal(size=(24, 30, 4)).astype('float32')\n"
        "marks = np.arange(24) % 3\n"
        "def pick_rows(window, mark):\n"
        "    kept = tf.random.shuffle(window)[:10]\n"
        "    return kept / tf.reduce_max(tf.abs(kept)), mark\n"
        "def pick_noisy_rows(window, mark):\n"
        "    kept = tf.random.shuffle(window)[:10]\n"
        "    return kept + tf.random.normal(tf.shape(kept), stddev=0.1), mark\n"
        "reader = keras.Sequential([keras.Input((None, 4)), keras.layers.GlobalAveragePooling1D(),"
        " keras.layers.Dense(3)])\n"
        "reader.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))\n",
    )
    built = (
        "dev_windows = tf.data.Dataset.from_tensor_slices((readings, marks))"
        ".map(pick_rows).batch(6)\n"
    )
    assert notes_in(kernel, built, "tf-data") == []
    assert notes_in(kernel, "dev_loss = reader.evaluate(dev_windows, verbose=0)\n", "tf-data") == []
    noisy = (
        "dev_windows = tf.data.Dataset.from_tensor_slices((readings, marks))"
        ".map(pick_noisy_rows).batch(6)\n"
    )
    [text] = notes_in(kernel, noisy, "tf-data")
    assert text.startswith(
        "`dev_windows` is validation or test data, but its pipeline has `.map(pick_noisy_rows)`"
    ), text


# ------------------------------------------------------------------ generator reuse
STREAM = (
    "feed = iter([(1.0, 0), (2.0, 1), (3.0, 0)])\n"
    "feed_ds = tf.data.Dataset.from_generator(lambda: feed, output_signature=("
    "tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.int32)))\n"
    "counts = [sum(1 for _ in feed_ds) for _ in range(2)]\n"
)


def test_from_generator_given_one_existing_iterator(kernel: KernelSession) -> None:
    [text] = notes_in(kernel, STREAM, "python-iterators")
    assert value_of(kernel, "counts") == [3, 0]  # the symptom: the second pass is empty
    assert text.startswith(
        "`lambda: feed` (line 2 of this cell) gives `from_generator` the same iterator "
        "`feed` each time the dataset is iterated."
    ), text
    fix = codes(text)[-1]
    assert fix == "lambda: iter([(1.0, 0), (2.0, 1), (3.0, 0)])"
    assert notes_in(kernel, STREAM.replace("lambda: feed", fix), "python-iterators") == []
    assert value_of(kernel, "counts") == [3, 3]


def test_from_generator_given_a_generator_function_stays_silent(kernel: KernelSession) -> None:
    cell = (
        "def rows():\n"
        "    yield from [(1.0, 0), (2.0, 1)]\n"
        "rows_ds = tf.data.Dataset.from_generator(rows, output_signature=("
        "tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.int32)))\n"
        "made = lambda: rows()\n"
        "again_ds = tf.data.Dataset.from_generator(made, output_signature=("
        "tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.int32)))\n"
    )
    assert notes_in(kernel, cell, "python-iterators") == []


# ------------------------------------------------------------------ padding zeros
ROWS = (
    "def token_rows():\n"
    "    yield from ([5, 0, 7], [3, 4], [0, 9, 9, 2])\n"
    "row_ds = tf.data.Dataset.from_generator(token_rows, "
    "output_signature=tf.TensorSpec((None,), tf.int32))\n"
)
LENGTHS = (
    "batch_ds = row_ds.padded_batch(3)\n"
    "ids = next(iter(batch_ds))\n"
    "sizes = tf.reduce_sum(tf.cast(ids != 0, tf.int32), axis=1).numpy().tolist()\n"
)


def test_zero_taken_for_padding_where_zero_is_a_real_id(kernel: KernelSession) -> None:
    run(kernel, ROWS)
    [text] = notes_in(kernel, LENGTHS, "tf-data")
    assert value_of(kernel, "sizes") == [2, 2, 3]  # the symptom: real zeros not counted
    assert text.startswith(
        "`ids != 0` (line 3 of this cell) takes 0 for padding, but 0 is also a real value of "
        "`ids`: 1 of its 3 rows holds a 0 between other values (row 0, position 1)"
    ), text
    padded, compared = codes(text)[-2:]
    assert padded == "batch_ds = row_ds.padded_batch(3, padding_values=-1)"
    assert compared == "ids != -1"
    fixed = LENGTHS.replace("batch_ds = row_ds.padded_batch(3)", padded).replace(
        "ids != 0", compared
    )
    assert notes_in(kernel, fixed, "tf-data") == []
    assert value_of(kernel, "sizes") == [3, 2, 4]


def test_zero_tests_on_data_without_inner_zeros_stay_silent(kernel: KernelSession) -> None:
    cell = "tokens = tf.constant([[3, 4, 0], [5, 0, 0], [0, 0, 6]])\nmask = tokens != 0\n"
    assert notes_in(kernel, cell, "tf-data") == []


# ------------------------------------------------------------------ padded means
VISITS = (
    "visits = tf.ragged.constant([[2.0, 4.0], [1.0, 1.0, 1.0, 5.0]])\n"
    "grid = visits.to_tensor()\n"
    "per_user = tf.reduce_mean(grid, axis=1).numpy().tolist()\n"
)


def test_a_mean_over_a_ragged_tensor_padded_with_zeros(kernel: KernelSession) -> None:
    [text] = notes_in(kernel, VISITS, "reducing-tensors")
    assert value_of(kernel, "per_user") == [1.5, 2.0]  # the symptom: 1.5 for a mean of 3
    assert text.startswith(
        "`tf.reduce_mean(grid, axis=1)` (line 3 of this cell) reduces `grid`, which holds "
        "`visits.to_tensor()`, where the rows of `visits` hold 2 to 4 values"
    ), text
    fix = codes(text)[-1]
    assert fix == "tf.reduce_mean(visits, axis=1)"
    assert (
        notes_in(kernel, VISITS.replace("tf.reduce_mean(grid, axis=1)", fix), "reducing-tensors")
        == []
    )
    assert value_of(kernel, "per_user") == [3.0, 2.0]


def test_sums_and_rows_of_one_length_stay_silent(kernel: KernelSession) -> None:
    summed = VISITS.replace("reduce_mean", "reduce_sum")
    assert notes_in(kernel, summed, "reducing-tensors") == []
    even = (
        "pairs = tf.ragged.constant([[2.0, 4.0], [1.0, 3.0]])\n"
        "mean_pair = tf.reduce_mean(pairs.to_tensor(), axis=1)\n"
    )
    assert notes_in(kernel, even, "reducing-tensors") == []


# ------------------------------------------------------------------ vectorizer length
REVIEWS = (
    "reviews = ['the plot was slow but the ending was great'] * 6 + ['short one']\n"
    "vec = keras.layers.TextVectorization(output_sequence_length=3)\n"
    "vec.adapt(reviews)\n"
    "ids = vec(reviews)\n"
    "kept = vec.get_vocabulary().index('great') in ids.numpy()[0].tolist()\n"
)


def test_a_vectorizer_length_that_cuts_most_texts(kernel: KernelSession) -> None:
    [text] = notes_in(kernel, REVIEWS, "preprocessing-adapt")
    assert value_of(kernel, "kept") is False  # the symptom: the deciding word is cut
    assert text.startswith(
        "`vec` keeps the first 3 tokens of each text (`output_sequence_length=3`), but 6 of "
        "the 7 texts in `reviews` (line 4 of this cell) have more words, up to 9"
    ), text
    fix = [c for c in codes(text) if c.startswith("output_sequence_length=")][-1]
    assert fix == "output_sequence_length=9"
    assert (
        notes_in(kernel, REVIEWS.replace("output_sequence_length=3", fix), "preprocessing-adapt")
        == []
    )
    assert value_of(kernel, "kept") is True


def test_a_vectorizer_length_that_fits_most_texts_stays_silent(kernel: KernelSession) -> None:
    mostly_short = (
        "lines = ['good film'] * 8 + ['a very long review of a film that goes on']\n"
        "vec2 = keras.layers.TextVectorization(output_sequence_length=4)\n"
        "vec2.adapt(lines)\n"
        "line_ids = vec2(lines)\n"
    )
    assert notes_in(kernel, mostly_short, "preprocessing-adapt") == []
