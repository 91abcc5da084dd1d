"""Integer pixels met by a float image in [0, 1] (``errors/pixel_scales.py``).

``tf.image.ssim`` of a uint8 frame and a float frame in [0, 1] fails on the dtypes. A
``tf.cast`` of the uint8 side runs but compares numbers 0 to 255 with numbers 0 to 1: the
entry names the scales, converts the integer image with ``convert_image_dtype`` and sets
``max_val`` to 1.0; the fix runs and scores a frame against itself as 1. The same clash
in an operator gets the same conversion. A uint8 image against float pixels 0 to 255 (the
same scale) keeps the plain cast."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

FRAMES = """rng = np.random.default_rng(5)
denoised = tf.constant(rng.uniform(0.1, 0.9, size=(2, 24, 24, 1)).astype("float32"))
frames_u8 = tf.cast(tf.round(denoised * 255.0), tf.uint8)
"""


def test_a_uint8_frame_scored_against_a_unit_float_frame(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FRAMES)
    error = failing(kernel, "similarity = tf.image.ssim(frames_u8, denoised, 255.0)")
    text = error["explanation"]
    assert error["course"]["section"] == "dtype-casting"
    assert "two images are on different scales" in text, text
    assert "`frames_u8` holds uint8 pixels from" in text
    assert "`denoised` floats from" in text
    assert "tf.cast(frames_u8" not in text
    fix = fix_of(text)
    assert fix == (
        "similarity = tf.image.ssim(tf.image.convert_image_dtype(frames_u8, tf.float32), "
        "denoised, 1.0)"
    )
    runs_cleanly(kernel, fix)
    # The frames are the same picture rounded to 8 bits: nearly identical once on one scale.
    assert value_of(kernel, "float(tf.reduce_min(similarity))") > 0.99


def test_an_operator_between_the_two_scales(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FRAMES)
    cell = "gap = tf.reduce_mean(tf.abs(frames_u8 - denoised))"
    text = failing(kernel, cell)["explanation"]
    assert "two images are on different scales" in text, text
    fix = fix_of(text)
    assert fix == (
        "gap = tf.reduce_mean(tf.abs(tf.image.convert_image_dtype(frames_u8, tf.float32) "
        "- denoised))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(gap)") < 0.01


def test_same_scale_pixels_keep_the_cast(kernel: KernelSession) -> None:
    """Float pixels 0 to 255 beside uint8 pixels: the scales agree, a cast is the fix."""
    runs_cleanly(kernel, FRAMES + "raw_float = denoised * 255.0\n")
    text = failing(kernel, "diff = frames_u8 - raw_float")["explanation"]
    assert "different scales" not in text
    assert "tf.cast(frames_u8, tf.float32)" in text
    runs_cleanly(
        kernel,
        "score = tf.image.ssim(tf.image.convert_image_dtype(frames_u8, tf.float32), "
        "denoised, max_val=1.0)",
    )
