"""Random augmentation where it silently does harm: in the data a model is evaluated on
(``training/evaluation_augmentation.py``), and cached after the random map so every epoch
replays the same augmented examples (``symptoms/dataset_order.py``, with
``symptoms/random_maps.py``). In a real kernel: the note names the learner's dataset and
call, the printed fix runs and the note is gone, and correct look-alikes stay silent
(augmentation on the training data only, a cache before the random map, a cached map
that draws nothing)."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(5)\n"
    "pics = np.random.rand(128, 6, 6, 1).astype('float32')\n"
    "tags = (pics[:, :, :3, 0].mean((1, 2)) > 0.5).astype('int32')\n"
    "flip = keras.layers.RandomFlip('horizontal')\n"
    "def jitter(x, y):\n"
    "    return flip(x, training=True), y\n"
    "def scale(x, y):\n"
    "    return x * 2.0, y\n"
    "net = keras.Sequential([keras.Input((6, 6, 1)), keras.layers.Flatten(), "
    "keras.layers.Dense(2, activation='softmax')])\n"
    "net.compile(optimizer='adam', loss='sparse_categorical_crossentropy', "
    "metrics=['accuracy'])"
)


def notes_in(kernel: KernelSession, code: str, section: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


SOURCE = "tf.data.Dataset.from_tensor_slices((pics, tags))"


def test_augmentation_in_the_evaluation_data(kernel: KernelSession) -> None:
    run(kernel, f"train_ds = {SOURCE}.map(jitter).batch(32)\nnet.fit(train_ds, verbose=0)")
    cell = f"test_ds = {SOURCE}.map(jitter).batch(32)\nscores = net.evaluate(test_ds, verbose=0)"
    [text] = notes_in(kernel, cell, "tf-data")
    assert text.startswith(
        "`net.evaluate` measures `net` on `test_ds`, whose pipeline has a map that draws "
        "random numbers (an augmentation)"
    )
    fix = code_spans(text)[-1]
    assert fix == f"test_ds = {SOURCE}.batch(32)"
    assert notes_in(kernel, f"{fix}\nscores = net.evaluate(test_ds, verbose=0)", "tf-data") == []
    # Without the random map, evaluate gives the same numbers every time.
    again = value_of(kernel, "net.evaluate(test_ds, verbose=0) == scores")
    assert again is True
    # fit's validation_data is told the same way.
    noisy = f"val_ds = {SOURCE}.map(jitter).batch(32)\n"
    [told] = notes_in(
        kernel, noisy + "net.fit(train_ds, validation_data=val_ds, verbose=0)", "tf-data"
    )
    assert told.startswith("`net.fit` validates `net` on `val_ds` (validation_data)")
    # Look-alikes: augmentation on the training data only; a map that draws nothing.
    clean = f"val_ds = {SOURCE}.map(scale).batch(32)\n"
    assert (
        notes_in(kernel, clean + "net.fit(train_ds, validation_data=val_ds, verbose=0)", "tf-data")
        == []
    )
    assert notes_in(kernel, "net.evaluate(val_ds, verbose=0)", "tf-data") == []
    # The training pipeline evaluated on purpose: its augmentation belongs to it.
    assert notes_in(kernel, "net.evaluate(train_ds, verbose=0)", "tf-data") == []


def test_cache_after_a_random_map(kernel: KernelSession) -> None:
    fit = "\nnet.fit(aug_ds, epochs=2, verbose=0)"
    cell = f"aug_ds = {SOURCE}.map(jitter).cache().shuffle(128).batch(32)" + fit
    [text] = notes_in(kernel, cell, "tf-data-order")
    assert text.startswith(
        "`aug_ds` caches after a map that draws random numbers (an augmentation, "
        "`.map(...).cache()`): the cache keeps the elements of the first pass"
    )
    fix = code_spans(text)[-1]
    assert fix == f"aug_ds = {SOURCE}.cache().map(jitter).shuffle(128).batch(32)"
    assert notes_in(kernel, f"{fix}\nnet.fit(aug_ds, epochs=2, verbose=0)", "tf-data-order") == []
    # The symptom, measured: two passes over the cached-after-map order are the same
    # examples; over the fixed order they differ (the flips are drawn again).
    run(kernel, f"bad = {SOURCE}.map(jitter).cache()\ngood = {SOURCE}.cache().map(jitter)")
    same = (
        "bool(np.array_equal(*[np.stack([x for x, _ in {0}.as_numpy_iterator()]) for _ in '12']))"
    )
    assert value_of(kernel, same.format("bad")) is True
    assert value_of(kernel, same.format("good")) is False
    # Look-alike: a cached map that draws nothing.
    plain = f"plain_ds = {SOURCE}.map(scale).cache().batch(32)\nnet.fit(plain_ds, verbose=0)"
    assert notes_in(kernel, plain, "tf-data-order") == []


def test_cache_after_a_random_map_told_where_the_pipeline_is_built(
    kernel: KernelSession,
) -> None:
    # Built in one cell, trained on in a later one: told when built, and only once.
    run(kernel, "def wobble(x, y):\n    return tf.image.random_brightness(x, 0.2), y")
    cell = (
        f"epoch_ds = ({SOURCE}\n    .map(wobble, num_parallel_calls=tf.data.AUTOTUNE)\n"
        "    .cache()\n    .shuffle(64)\n    .batch(16)\n    .prefetch(tf.data.AUTOTUNE))"
    )
    [text] = notes_in(kernel, cell, "tf-data-order")
    assert text.startswith("`epoch_ds` caches after a map that draws random numbers")
    assert notes_in(kernel, "net.fit(epoch_ds, epochs=2, verbose=0)", "tf-data-order") == []
    fix = code_spans(text)[-1]
    assert ".cache().map(wobble" in fix
    assert notes_in(kernel, fix, "tf-data-order") == []
    # A Keras random layer in the map, the cache in a separate statement of the cell.
    layered = f"flipped = {SOURCE}.map(jitter)\nkept_ds = flipped.cache().batch(32)"
    [told] = notes_in(kernel, layered, "tf-data-order")
    assert told.startswith("`kept_ds` caches after a map that draws random numbers")
    # Look-alikes: the cache below the random map, and a cached map that draws nothing.
    right = f"ok_ds = {SOURCE}.cache().map(wobble).batch(16)"
    assert notes_in(kernel, right, "tf-data-order") == []
    assert notes_in(kernel, f"still_ds = {SOURCE}.map(scale).cache()", "tf-data-order") == []


BLEND = (
    "def blend_pairs(x, y):\n"
    "    order = tf.random.shuffle(tf.range(tf.shape(x)[0]))\n"
    "    return 0.7 * x + 0.3 * tf.gather(x, order), y\n"
    "def reorder_rows(x, y):\n"
    "    order = tf.random.shuffle(tf.range(tf.shape(x)[0]))\n"
    "    return tf.gather(x, order) - tf.reduce_mean(x, axis=0), tf.gather(y, order)\n"
)


def test_rows_blended_with_shuffled_rows_in_the_evaluation_data(kernel: KernelSession) -> None:
    """A map whose only draw is a shuffle, used to blend each example with another one of
    its batch (mixup), alters the examples: evaluating on it is told; the fix evaluates
    the same batches unblended. A shuffle of the rows, centred by the batch's mean, blends
    nothing and stays silent."""
    run(kernel, BLEND + f"net.fit({SOURCE}.batch(32), verbose=0)")
    cell = (
        f"holdout_ds = {SOURCE}.batch(32).map(blend_pairs)\n"
        "blended_scores = net.evaluate(holdout_ds, verbose=0)"
    )
    [text] = notes_in(kernel, cell, "tf-data")
    assert text.startswith("`net.evaluate` measures `net` on `holdout_ds`, whose pipeline"), text
    fix = code_spans(text)[-1]
    assert fix == f"holdout_ds = {SOURCE}.batch(32)"
    plain = f"{fix}\nplain_scores = net.evaluate(holdout_ds, verbose=0)"
    assert notes_in(kernel, plain, "tf-data") == []
    assert value_of(kernel, "net.evaluate(holdout_ds, verbose=0) == plain_scores") is True
    reordered = (
        f"shuffled_ds = {SOURCE}.batch(32).map(reorder_rows)\nnet.evaluate(shuffled_ds, verbose=0)"
    )
    assert notes_in(kernel, reordered, "tf-data") == []
