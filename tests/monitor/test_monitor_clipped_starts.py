"""A ``tf.Variable`` started far outside the range a clip then keeps it in (issue #25,
silent bugs; ``training/clipped_starts.py``): the first clip piles the start on a bound (a
white image from noise drawn in [0, 255] for a [0, 1] clip), and the run starts from there.
In a real kernel: the note names the variable, its start and range, the clip and its range;
the printed fix, applied to the cell, keeps the start in the range and the run ends closer
to its target, with no note. Look-alikes stay silent: a start inside the range, a start
with a few outliers the clip trims, [-1, 1] values clipped to [-1, 1]."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SECTION = "creating-slicing-reducing"

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "keras.utils.set_random_seed(2)\n"
    "target_img = tf.constant(np.random.default_rng(3).random((1, 12, 12, 3))"
    ".astype('float32'))\n"
)


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [
        n["text"]
        for n in report["notes"]
        if (n["course"] or {}).get("section") == SECTION and "starts from" in n["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


CANVAS = """painter = keras.optimizers.Adam(0.02)
canvas = tf.Variable(tf.random.uniform((1, 12, 12, 3), maxval=255.0))
for it in range(40):
    with tf.GradientTape() as tape:
        gap = tf.reduce_mean((canvas - target_img) ** 2)
    painter.apply_gradients([(tape.gradient(gap, canvas), canvas)])
    canvas.assign(tf.clip_by_value(canvas, 0.0, 1.0))
"""
CANVAS_START = "canvas = tf.Variable(tf.random.uniform((1, 12, 12, 3), maxval=255.0))"


def test_a_canvas_drawn_in_byte_range_clipped_to_unit_range(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, CANVAS)
    assert text.startswith(
        "`canvas` starts from `tf.random.uniform((1, 12, 12, 3), maxval=255.0)` (line 2 of "
        "this cell), values from about 0 to 255, but `tf.clip_by_value(canvas, 0.0, 1.0)` "
        "(line 7 of this cell) keeps it in [0.0, 1.0]: almost all of the starting values lie "
        "outside that range, so the first clip sets them to 1.0 (the clip's upper bound)"
    )
    saturated = value_of(kernel, "float(tf.reduce_mean(tf.cast(canvas > 0.6, tf.float32)))")
    bad_gap = value_of(kernel, "float(gap)")
    fix = last_code(text)
    assert fix == "canvas = tf.Variable(tf.random.uniform((1, 12, 12, 3), 0.0, 1.0))"
    assert notes_of(kernel, CANVAS.replace(CANVAS_START, fix)) == []
    # The fixed start is noise in [0, 1]: the run gets much closer to its target.
    good_gap = value_of(kernel, "float(gap)")
    assert saturated > 0.9
    assert good_gap < bad_gap / 2
    assert value_of(kernel, "float(tf.reduce_min(canvas)) >= 0.0") is True


STEP = """@tf.function
def nudge():
    pattern.assign_add(0.01 * tf.ones_like(pattern))
    pattern.assign(tf.clip_by_value(pattern, -1.0, 1.0))
"""
PATTERN_START = (
    'pattern = tf.Variable(np.random.default_rng(0).normal(0.0, 4.0, (16, 16)).astype("float32"))'
)
PATTERN = f"""{PATTERN_START}
for _ in range(5):
    nudge()
at_bounds = float(np.mean(np.abs(pattern.numpy()) >= 0.94))
"""


def test_a_normal_start_clipped_in_a_step_defined_earlier(kernel: KernelSession) -> None:
    run(kernel, STEP)
    [text] = notes_of(kernel, PATTERN)
    assert "`tf.clip_by_value(pattern, -1.0, 1.0)` (in `nudge`) keeps it in [-1.0, 1.0]" in text
    assert "80% of the starting values lie outside that range" in text
    assert value_of(kernel, "at_bounds") > 0.7
    fix = last_code(text)
    assert fix == (
        "pattern = tf.Variable(np.random.default_rng(0).uniform(-1.0, 1.0, (16, 16))"
        '.astype("float32"))'
    )
    fixed = PATTERN.replace(PATTERN_START, fix)
    assert notes_of(kernel, fixed) == []
    assert value_of(kernel, "at_bounds") < 0.1


def test_an_array_of_pixels_as_the_start(kernel: KernelSession) -> None:
    cell = (
        "pixels = np.random.default_rng(1).integers(0, 256, (8, 8)).astype('float32')\n"
        "tile = tf.Variable(pixels)\n"
        "tile.assign(tf.clip_by_value(tile, 0.0, 1.0))\n"
    )
    [text] = notes_of(kernel, cell)
    assert text.startswith("`tile` starts from `pixels` (line 2 of this cell), values from ")
    fix = last_code(text)
    assert fix == "tile = tf.Variable(pixels / 255.0)"
    assert notes_of(kernel, cell.replace("tile = tf.Variable(pixels)", fix)) == []
    # The pixels keep their pattern, now in [0, 1].
    assert value_of(kernel, "float(np.abs(tile.numpy() * 255.0 - pixels).max())") < 1e-3


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    inside = (
        "glaze = tf.Variable(tf.random.uniform((1, 12, 12, 3)))\n"
        "glaze.assign(tf.clip_by_value(glaze, 0.0, 1.0))\n"
    )
    assert notes_of(kernel, inside) == []
    # A start near the data with a little noise: the clip trims a few outliers.
    outliers = (
        "near = target_img + tf.random.normal(target_img.shape, stddev=0.05)\n"
        "draft = tf.Variable(near)\n"
        "draft.assign(tf.clip_by_value(draft, 0.0, 1.0))\n"
    )
    assert notes_of(kernel, outliers) == []
    signed = (
        "wave = tf.Variable(tf.random.uniform((32,), -1.0, 1.0))\n"
        "wave.assign(tf.clip_by_value(wave, -1.0, 1.0))\n"
    )
    assert notes_of(kernel, signed) == []
