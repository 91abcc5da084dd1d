"""Image ops refused by a size read from the op's signature and the operands' shapes
(issue #25, ``errors/families_image_ops.py``): an SSIM window (``filter_size``, its default
when left out) larger than the images, and ``depth_to_space`` given a channel count its
block size does not divide, traced to the layer that made the channels. Every printed fix
is applied and runs; calls of the right sizes, and errors of other causes, get no such
entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_default_window_larger_than_the_images(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "crops_a = tf.random.uniform((4, 6, 6, 1), seed=1)\n"
        "crops_b = tf.random.uniform((4, 6, 6, 1), seed=2)",
    )
    cell = "likeness = tf.image.ssim(crops_a, crops_b, max_val=1.0)"
    text = failing(kernel, cell)["explanation"]
    assert "slides a 11x11 window over each image (`filter_size=11`, the default" in text
    assert "`crops_a` (6x6, a (4, 6, 6, 1) float32 tensor)" in text
    assert "Pass `filter_size=` no larger than 6" in text
    fix = fix_of(text)
    assert fix == "likeness = tf.image.ssim(crops_a, crops_b, max_val=1.0, filter_size=5)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "tuple(likeness.shape)") == [4]
    # A window given explicitly, on single images (rank 3): the given value is replaced.
    runs_cleanly(kernel, "tile = np.random.rand(7, 9, 3).astype('float32')")
    cell = "same = tf.image.ssim(tile, tile * 0.9, 1.0, filter_size=9)"
    text = failing(kernel, cell)["explanation"]
    assert "(`filter_size=9`, 9)" in text
    fix = fix_of(text)
    assert fix == "same = tf.image.ssim(tile, tile * 0.9, 1.0, filter_size=7)"
    runs_cleanly(kernel, fix)
    # Look-alike: images larger than the window, refused for another cause (the channel
    # counts differ): no window entry.
    text = failing(
        kernel, "tf.image.ssim(tf.zeros((2, 16, 16, 3)), tf.zeros((2, 16, 16, 1)), 1.0)"
    )["explanation"]
    assert "window" not in text
    runs_cleanly(
        kernel, "ok = tf.image.ssim(tf.zeros((2, 16, 16, 3)), tf.zeros((2, 16, 16, 3)), 1.0)"
    )


def test_depth_to_space_channels_come_from_the_layer_before(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "pics = tf.random.uniform((2, 5, 5, 1), seed=3)\n"
        "feats = keras.layers.Conv2D(2 * 4, 3, padding='same')(pics)",
    )
    cell = "bigger = tf.nn.depth_to_space(feats, 3)"
    text = failing(kernel, cell)["explanation"]
    assert "needs 9 * C channels for C channels out; `feats` has 8" in text
    assert "They come from `feats`, made by `keras.layers.Conv2D(2 * 4, 3, padding='same')`" in text
    assert "2 * 4 = 8 channels: the count for a block size of 2" in text
    fix = fix_of(text)
    assert fix == "feats = keras.layers.Conv2D(2 * 9, 3, padding='same')(pics)"
    runs_cleanly(kernel, f"{fix}\n{cell}")
    assert value_of(kernel, "tuple(bigger.shape)") == [2, 15, 15, 2]
    # Inside a layer of the learner's, the channels made by a functional model's conv.
    layer = """class Unfold(keras.layers.Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, t):
        return tf.nn.depth_to_space(t, self.factor)
"""
    runs_cleanly(kernel, layer)
    cell = """entry = keras.Input((12, 12, 1))
hidden = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(entry)
hidden = keras.layers.Conv2D(1 * 9, 3, padding="same")(hidden)
upscaler = keras.Model(entry, Unfold(4)(hidden))
"""
    text = failing(kernel, cell)["explanation"]
    assert "a block size of 4" in text
    assert "`t` has 9" in text
    fix = fix_of(text)
    assert fix == 'hidden = keras.layers.Conv2D(1 * 16, 3, padding="same")(hidden)'
    runs_cleanly(
        kernel, cell.replace('hidden = keras.layers.Conv2D(1 * 9, 3, padding="same")(hidden)', fix)
    )
    assert value_of(kernel, "tuple(upscaler.output.shape)") == [None, 48, 48, 1]
    # Made by something else than a layer: the rule without a fix.
    runs_cleanly(kernel, "flat = tf.zeros((1, 4, 4, 6))")
    text = failing(kernel, "tf.nn.depth_to_space(flat, 2)")["explanation"]
    assert "give it a multiple of 4 channels" in text
    # Look-alike: a channel count the block size divides.
    runs_cleanly(kernel, "fine = tf.nn.depth_to_space(feats, 3)")


def test_a_missing_max_val_is_read_from_the_images(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "restored = tf.random.uniform((3, 10, 10, 3), seed=7)\n"
        "target = tf.random.uniform((3, 10, 10, 3), seed=8)\n"
        "frame_a = np.random.randint(0, 256, (2, 16, 16, 1)).astype('float32')\n"
        "frame_b = np.clip(frame_a + 3.0, 0, 255)",
    )
    text = failing(kernel, "gain = tf.image.psnr(restored, target)")["explanation"]
    assert "images in [0, 1], so 1.0 (255 only for raw pixels)" in text
    assert "documentation shows" not in text
    fix = fix_of(text)
    assert fix == "gain = tf.image.psnr(restored, target, max_val=1.0)"
    runs_cleanly(kernel, fix)
    assert 0.0 < value_of(kernel, "float(tf.reduce_mean(gain))") < 20.0
    text = failing(kernel, "sim = tf.image.ssim(frame_a, frame_b)")["explanation"]
    assert "images in [0, 255], so 255.0" in text
    fix = fix_of(text)
    assert fix == "sim = tf.image.ssim(frame_a, frame_b, max_val=255.0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(tf.reduce_mean(sim))") > 0.9


def test_depth_to_space_channels_with_the_block_size_once_get_it_twice(
    kernel: KernelSession,
) -> None:
    # ``tones * STEP`` channels before a block of STEP: one factor of the block is missing.
    runs_cleanly(
        kernel,
        "STEP, tones = 3, 2\n"
        "plates = tf.random.uniform((2, 4, 4, 5), seed=11)\n"
        "maps = keras.layers.Conv2D(tones * STEP, 1)(plates)",
    )
    cell = "spread_out = tf.nn.depth_to_space(maps, STEP)"
    text = failing(kernel, cell)["explanation"]
    assert "They come from `maps`, made by `keras.layers.Conv2D(tones * STEP, 1)`" in text
    assert "`tones * STEP` = 6 is 2 channels times the block size once" in text
    fix = fix_of(text)
    assert fix == "maps = keras.layers.Conv2D(tones * STEP * STEP, 1)(plates)"
    runs_cleanly(kernel, f"{fix}\n{cell}")
    assert value_of(kernel, "tuple(spread_out.shape)") == [2, 12, 12, 2]
    # In a function that builds a model, through ``keras.ops``: the layer is the last
    # assignment of the op's input before it, in that function.
    builder = """def widen(side):
    seed_in = keras.Input((side, side, 1))
    z = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(seed_in)
    z = keras.layers.Conv2D(STEP * 1, 3, padding="same")(z)
    grown = keras.ops.depth_to_space(z, STEP)
    return keras.Model(seed_in, grown)
"""
    cell = builder + "widener = widen(5)"
    text = failing(kernel, cell)["explanation"]
    assert 'made by `keras.layers.Conv2D(STEP * 1, 3, padding="same")` (line 4' in text
    fix = fix_of(text)
    assert fix == 'z = keras.layers.Conv2D(STEP * 1 * STEP, 3, padding="same")(z)'
    fixed = cell.replace('z = keras.layers.Conv2D(STEP * 1, 3, padding="same")(z)', fix)
    runs_cleanly(kernel, fixed + "\nwidened = widener(tf.ones((2, 5, 5, 1)))")
    assert value_of(kernel, "tuple(widened.shape)") == [2, 15, 15, 1]
    # A count written as a plain number, or another product: the rule, no guessed fix.
    runs_cleanly(kernel, "maps_six = keras.layers.Conv2D(6, 1)(plates)")
    text = failing(kernel, "tf.nn.depth_to_space(maps_six, STEP)")["explanation"]
    assert "it must produce 9 * C channels" in text
    assert "Fix:" not in text
    # Look-alike: the block size twice among the factors raises nothing.
    runs_cleanly(
        kernel,
        "maps_ok = keras.layers.Conv2D(tones * STEP * STEP, 1)(plates)\n"
        "ok_out = tf.nn.depth_to_space(maps_ok, STEP)",
    )
