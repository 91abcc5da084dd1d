"""Inputs at inference unlike the inputs a Keras model was trained on, and inputs scaled
twice (``training/input_ranges.py``): nothing raises, the predictions mean little or the
model learns on values near 0. In a real kernel: the note names the learner's model, data
and both ranges; the printed fix, run as printed, removes the symptom and the note; the
correct look-alikes (scaling inside the model, the same scaling at predict) stay silent."""

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
    "pix = np.random.randint(0, 256, (256, 6, 6, 1)).astype('uint8')\n"
    "marks = (pix[:, 0, 0, 0] > 127).astype('int32')\n"
    "test_pix = np.random.randint(0, 256, (64, 6, 6, 1)).astype('uint8')\n"
    "test_marks = (test_pix[:, 0, 0, 0] > 127).astype('int32')"
)


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "tf-data"]


def fix_of(text: str, starts: str) -> str:
    [fix] = [s for s in re.findall(r"`([^`]+)`", text) if s.startswith(starts)]
    return fix


def model(name: str, first: str = "") -> str:
    return (
        "keras.utils.set_random_seed(3)\n"
        f"{name} = keras.Sequential([keras.Input((6, 6, 1)), {first}keras.layers.Flatten(), "
        'keras.layers.Dense(2, activation="softmax")])\n'
        f"{name}.compile(optimizer=keras.optimizers.Adam(0.05), "
        'loss="sparse_categorical_crossentropy", '
        'metrics=["accuracy"])\n'
    )


PIPELINE = (
    "train_ds = tf.data.Dataset.from_tensor_slices((pix, marks)).shuffle(256)"
    ".map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)).batch(32)\n"
)


def test_raw_images_given_to_a_model_trained_on_scaled_ones(kernel: KernelSession) -> None:
    run(kernel, PIPELINE + model("clf") + "clf.fit(train_ds, epochs=30, verbose=0)")
    [text] = notes_of(kernel, "guesses = clf.predict(test_pix, verbose=0)")
    assert text.startswith(
        "`clf.predict` was given `test_pix`, inputs from 0 to 255 (uint8), but fit trained "
        "`clf` on `train_ds`, inputs from 0 to 1 (float32) (its first batch): about 255 "
        "times larger."
    )
    fix = fix_of(text, "clf.predict(")
    assert fix == "clf.predict(test_pix / 255.0, verbose=0)"
    assert notes_of(kernel, f"guesses = {fix}") == []
    # The fix gives the model what it trained on: as good as on the training data.
    scaled = value_of(kernel, "float(np.mean(guesses.argmax(1) == test_marks))")
    raw = value_of(
        kernel, "float(np.mean(clf.predict(test_pix, verbose=0).argmax(1) == test_marks))"
    )
    assert scaled > 0.85 and scaled > raw + 0.1
    # evaluate on raw data is told the same way, with its fix.
    [told] = notes_of(kernel, "scores = clf.evaluate(test_pix, test_marks, verbose=0)")
    fixed = fix_of(told, "clf.evaluate(")
    assert fixed == "clf.evaluate(test_pix / 255.0, test_marks, verbose=0)"
    assert notes_of(kernel, f"scores = {fixed}") == []


def test_scaling_inside_the_model_stays_silent(kernel: KernelSession) -> None:
    rescale = "keras.layers.Rescaling(1 / 255), "
    raw_ds = "raw_ds = tf.data.Dataset.from_tensor_slices((pix, marks)).batch(32)\n"
    assert (
        notes_of(kernel, raw_ds + model("inside", rescale) + "inside.fit(raw_ds, verbose=0)") == []
    )
    assert notes_of(kernel, "inside.predict(test_pix, verbose=0)") == []
    # Arrays scaled by hand for both calls: silent too.
    assert notes_of(kernel, model("by_hand") + "by_hand.fit(pix / 255.0, marks, verbose=0)") == []
    assert notes_of(kernel, "by_hand.predict(test_pix / 255.0, verbose=0)") == []
    # Token ids: a sentence's small ids against a training set's large ones are no scale.
    ids = (
        "words = keras.Sequential([keras.Input((5,)), keras.layers.Embedding(1000, 4), "
        "keras.layers.Flatten(), keras.layers.Dense(1)])\n"
        'words.compile(optimizer="adam", loss="mse")\n'
        "words.fit(np.random.randint(0, 1000, (64, 5)).astype('float32'), np.zeros(64), "
        "verbose=0)\n"
    )
    assert notes_of(kernel, ids + "words.predict(np.array([[1.0, 2, 3, 4, 5]]), verbose=0)") == []


def test_inputs_scaled_twice(kernel: KernelSession) -> None:
    rescale = "keras.layers.Rescaling(1 / 255), "
    cell = PIPELINE + model("twice", rescale) + "twice.fit(train_ds, epochs=2, verbose=0)"
    [text] = notes_of(kernel, cell)
    assert text.startswith(
        "`twice` starts with a Rescaling layer (scale 0.00392, that is 1/255), but fit gave "
        "it `train_ds`, inputs already scaled, from 0 to 1 (float32) (its first batch): "
        "they are scaled twice, and the layers after the Rescaling train on values from 0 "
        "to 0.00392"
    )
    # The fix: the raw data to fit, the Rescaling kept.
    raw_ds = "train_ds = tf.data.Dataset.from_tensor_slices((pix, marks)).shuffle(256).batch(32)\n"
    assert (
        notes_of(kernel, raw_ds + model("twice", rescale) + "twice.fit(train_ds, verbose=0)") == []
    )


def test_standardised_features_get_no_made_up_scaling(kernel: KernelSession) -> None:
    """Features standardised with the training statistics, then raw ones at predict: no
    factor is invented from the two ranges (it would not be the learner's preprocessing).
    The standardised copy the learner already made is named, and running it is silent."""
    setup = (
        "keras.utils.set_random_seed(4)\n"
        "rooms = np.random.uniform(20, 300, (200, 3)).astype('float32')\n"
        "price = rooms.sum(axis=1) / 100.0\n"
        "centre, spread = rooms.mean(axis=0), rooms.std(axis=0)\n"
        "rooms_n = (rooms - centre) / spread\n"
        "new_rooms = np.random.uniform(20, 300, (40, 3)).astype('float32')\n"
        "reg = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        'reg.compile(optimizer="adam", loss="mse")\n'
        "reg.fit(rooms_n, price, epochs=2, verbose=0)\n"
    )
    run(kernel, setup)
    [text] = notes_of(kernel, "guess = reg.predict(new_rooms, verbose=0)")
    assert "`reg.predict` was given `new_rooms`" in text
    assert "Apply the preprocessing you applied to `rooms_n`" in text
    assert "/ " not in text.split("times")[1] and "Rescaling(1 / 255)" not in text
    assert "keras.layers.Normalization` adapted on the raw training data" in text
    # With the standardised copy made, the note names it; running it is silent.
    run(kernel, "new_rooms_n = (new_rooms - centre) / spread")
    [text] = notes_of(kernel, "guess = reg.predict(new_rooms, verbose=0)")
    fixed = fix_of(text, "reg.predict(")
    assert fixed == "reg.predict(new_rooms_n, verbose=0)"
    assert notes_of(kernel, f"guess = {fixed}") == []


def test_validation_data_left_raw_while_training_data_was_standardised(
    kernel: KernelSession,
) -> None:
    """fit's own validation_data on the raw scale while x was standardised (issue #25,
    our own probe cell): the val_ figures mean little. Told after that fit; giving the
    validation data the training statistics is silent and the val_loss is the held-out
    loss evaluate computes on the standardised rows."""
    setup = (
        "keras.utils.set_random_seed(6)\n"
        "sizes = np.random.uniform(500, 1500, (240, 3)).astype('float32')\n"
        "cost = sizes.sum(axis=1) / 1000.0\n"
        "mid, width = sizes[:200].mean(axis=0), sizes[:200].std(axis=0)\n"
        "sizes_n = (sizes[:200] - mid) / width\n"
        "est = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        'est.compile(optimizer="adam", loss="mse")\n'
    )
    run(kernel, setup)
    cell = "log = est.fit(sizes_n, cost[:200], epochs=2, verbose=0, validation_data=(sizes[200:], cost[200:]))"  # noqa: E501
    [text] = notes_of(kernel, cell)
    assert text.startswith("`est.fit` was given validation inputs from "), text
    assert "but fit trained `est` on `sizes_n`" in text
    assert "Apply the preprocessing you applied to `sizes_n`" in text
    fixed = cell.replace("(sizes[200:], ", "((sizes[200:] - mid) / width, ")
    assert notes_of(kernel, fixed) == []
    held_out = "est.evaluate((sizes[200:] - mid) / width, cost[200:], verbose=0)"
    check = f"print(abs(log.history['val_loss'][-1] - {held_out}) < 1e-4)"
    assert run(kernel, check).stdout.strip() == "True"


def test_a_cast_of_uint8_pixels_is_rescaled_where_it_is_made(kernel: KernelSession) -> None:
    """The inputs come from ``tf.cast`` of uint8 pixels two steps back: the fix is that
    cast made a ``convert_image_dtype`` (which also rescales everything else computed from
    it), not only the model's input."""
    run(kernel, PIPELINE + model("sorter") + "sorter.fit(train_ds, epochs=3, verbose=0)")
    cell = """as_float = tf.cast(test_pix, tf.float32)
batch_in = tf.reshape(as_float, (-1, 6, 6, 1))
brightness = tf.reduce_mean(as_float)
votes = sorter.predict(batch_in, verbose=0)
"""
    [text] = notes_of(kernel, cell)
    assert (
        "The scale comes from `as_float = tf.cast(test_pix, tf.float32)` (line 1 of this cell)"
    ) in text
    assert "(`as_float`, `batch_in`, `brightness`)" in text
    assert "inside the model" not in text  # the targets made from the cast stay on 0..255
    fix = fix_of(text, "as_float = tf.image")
    assert fix == "as_float = tf.image.convert_image_dtype(test_pix, tf.float32)"
    assert notes_of(kernel, cell.replace("as_float = tf.cast(test_pix, tf.float32)", fix)) == []
    assert value_of(kernel, "float(tf.reduce_max(batch_in))") <= 1.0
    assert value_of(kernel, "float(brightness)") < 1.0
