"""A batch meeting an element of another length (issue #25): when the dataset's chain cuts
``window``s without ``drop_remainder``, the entry names the short windows at the end of
the data and the fix is the learner's window statement with ``drop_remainder=True`` (run:
the corrected pipeline iterates, every batch full-width); texts of different lengths get
the rule and no rewritten line; a pipeline with full windows stays silent."""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    error_of_failing_cell,
    fix_in,
    runs_without_error_entry,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\n",
    after_load="",
)

PIPELINE = """SPAN = 10
readings = np.linspace(-1.0, 1.0, 90).astype("float32")
pairs = tf.data.Dataset.from_tensor_slices(readings)
pairs = pairs.window(SPAN, shift=2)
pairs = pairs.flat_map(lambda chunk: chunk.batch(SPAN))
pairs = pairs.map(lambda seq: (seq[:7], seq[7:])).batch(4)
"""
LOOP = """widths = []
for history, future in pairs:
    widths.append(int(future.shape[1]))
"""


def test_window_without_drop_remainder_is_named_with_its_fix(kernel: KernelSession) -> None:
    runs_without_error_entry(kernel, PIPELINE)
    error = error_of_failing_cell(kernel, LOOP)
    text = error["explanation"]
    assert "The batch being made from `pairs` met an element of shape [" in text
    assert "`history`, `future` still hold the last batch made before this one" in text
    assert "`drop_remainder` is False by default" in text
    assert "hold fewer than 10 elements" in text
    assert error["course"]["section"] == "tf-data"
    assert "in line 4 of cell In[" in text
    fix = fix_in(text)
    assert fix == "pairs = pairs.window(SPAN, shift=2, drop_remainder=True)"
    runs_without_error_entry(kernel, PIPELINE.replace("pairs = pairs.window(SPAN, shift=2)", fix))
    runs_without_error_entry(kernel, LOOP)
    widths = value_of(kernel, "widths")
    # (90 - 10) // 2 + 1 = 41 full windows in 11 batches, every target 3 steps wide.
    assert len(widths) == 11 and set(widths) == {3}


def test_texts_of_different_lengths_get_no_window_fix(kernel: KernelSession) -> None:
    cell = """ragged_ids = tf.data.Dataset.from_generator(
    lambda: ([1] * n for n in (3, 3, 5)),
    output_signature=tf.TensorSpec([None], tf.int32),
).batch(3)
lengths = [int(b.shape[1]) for b in ragged_ids]
"""
    error = error_of_failing_cell(kernel, cell)
    text = error["explanation"]
    assert "`window`" not in text and "drop_remainder" not in text
    assert "padded_batch" in text


def test_full_windows_stay_silent(kernel: KernelSession) -> None:
    fixed = PIPELINE.replace(
        "pairs = pairs.window(SPAN, shift=2)",
        "pairs = pairs.window(SPAN, shift=2, drop_remainder=True)",
    )
    runs_without_error_entry(kernel, fixed + LOOP)
