"""An image metric told another range than the images have (issue #25, silent bugs,
``symptoms/metric_ranges.py``): ``ssim``/``psnr`` with ``max_val=255`` on images in [0, 1],
or ``max_val=1.0`` on raw pixels. Read after the cell from the images the call names, or,
inside a function of the cell, from the first batch of the dataset the cell passes to its
loop. The printed fix is run and gives no note; a matching ``max_val`` stays silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def range_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "tells the metric the images span" in n["text"]]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


SETUP = """clean = tf.random.uniform((6, 24, 24, 1), seed=4)
noisy = tf.clip_by_value(clean + tf.random.normal((6, 24, 24, 1), stddev=0.05, seed=5), 0.0, 1.0)
pixels = tf.cast(tf.random.uniform((6, 24, 24, 1), 0, 256, dtype=tf.int32, seed=6), tf.float32)
blurred = pixels * 0.9
"""


def test_ssim_told_raw_pixel_range_on_unit_images(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = "quality = tf.reduce_mean(tf.image.ssim(noisy, clean, max_val=255))"
    notes = range_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "but they are in [0, 1] (`noisy` from" in notes[0]
    fix = last_code(notes[0])
    assert fix == "tf.image.ssim(noisy, clean, max_val=1.0)"
    fixed = cell.replace("tf.image.ssim(noisy, clean, max_val=255)", fix)
    assert range_notes(checked_report(run(kernel, fixed))) == []
    # Raw pixels told a range of 1.0 (positional max_val): 255.0.
    cell = "db = tf.image.psnr(blurred, pixels, 1.0)"
    notes = range_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "48 dB too low" in notes[0]
    fix = last_code(notes[0])
    assert fix == "tf.image.psnr(blurred, pixels, 255.0)"
    assert range_notes(checked_report(run(kernel, f"db = {fix}"))) == []
    # Images on two scales: no max_val is right, so this note does not offer one.
    assert range_notes(checked_report(run(kernel, "db = tf.image.psnr(noisy, pixels, 1.0)"))) == []
    # Look-alikes: the range that matches the data.
    assert (
        range_notes(checked_report(run(kernel, "db = tf.image.psnr(blurred, pixels, 255)"))) == []
    )


def test_psnr_in_a_function_reads_the_dataset_the_cell_passes(kernel: KernelSession) -> None:
    run(
        kernel,
        SETUP + "pairs = tf.data.Dataset.from_tensor_slices((noisy, clean)).batch(3)",
    )
    cell = """def mean_db(batches):
    scores = []
    for degraded, reference in batches:
        scores.append(tf.image.psnr(degraded, reference, max_val=255.0))
    return float(tf.reduce_mean(tf.concat(scores, 0)))

print(mean_db(pairs))
"""
    notes = range_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "20 * log10(255.0) = 48 dB too high" in notes[0]
    assert "`degraded` from" in notes[0]
    fix = last_code(notes[0])
    assert fix == "tf.image.psnr(degraded, reference, max_val=1.0)"
    fixed = cell.replace("tf.image.psnr(degraded, reference, max_val=255.0)", fix)
    assert range_notes(checked_report(run(kernel, fixed))) == []
    assert float(run(kernel, "print(mean_db(pairs))").stdout.strip()) < 60.0


# Two metrics of one cell on the same images, both told the raw-pixel range: one note
# names both lines and fixes both (fixing only the PSNR would leave the SSIM near 1).
BOTH = """ratio_db = float(tf.reduce_mean(tf.image.psnr(clean, noisy, max_val=255)))
likeness = float(tf.reduce_mean(tf.image.ssim(clean, tf.reverse(noisy, [1]), max_val=255)))
"""


def test_every_metric_of_the_cell_is_fixed_together(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = range_notes(checked_report(run(kernel, BOTH)))
    assert "(line 1 of this cell)" in text and "(line 2 of this cell)" in text
    assert "48 dB too high" in text
    assert "these are 6.5 and 58.5" in text and "pushed near 1" in text
    fixes = re.findall(r"`([^`]+)`", text)[-2:]
    assert fixes == [
        "tf.image.psnr(clean, noisy, max_val=1.0)",
        "tf.image.ssim(clean, tf.reverse(noisy, [1]), max_val=1.0)",
    ]
    # The wrong range scores mirrored images as almost identical.
    assert float(run(kernel, "print(likeness)").stdout) > 0.95
    fixed = BOTH.replace("tf.image.psnr(clean, noisy, max_val=255)", fixes[0]).replace(
        "tf.image.ssim(clean, tf.reverse(noisy, [1]), max_val=255)", fixes[1]
    )
    assert range_notes(checked_report(run(kernel, fixed))) == []
    assert float(run(kernel, "print(likeness)").stdout) < 0.5
    assert float(run(kernel, "print(ratio_db)").stdout) < 40.0
    # Look-alike: only the call with the wrong range is named.
    half = fixed.replace("max_val=1.0)))\nlikeness", "max_val=255)))\nlikeness")
    [only] = range_notes(checked_report(run(kernel, half)))
    assert "line 1 of this cell" in only and "ssim" not in only.lower()
