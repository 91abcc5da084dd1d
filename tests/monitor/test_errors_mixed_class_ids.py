"""Integer class ids blended by a float weight (``errors/mixed_class_ids.py``): the dtype
error's fix is the ids as one-hot rows (a cast would run and mix class numbers into
meaningless ones), in a function ``Dataset.map`` traces (the ids read from the mapped
dataset's source) and in eager code; the fixed cells run and give rows of class shares.
0/1 flags keep the cast (soft binary targets), and one-hot rows blended run silently."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

MAPPED = """readings = np.random.default_rng(3).normal(size=(90, 6)).astype("float32")
kinds = np.arange(90) % 5
n_kinds = 5
pairs = tf.data.Dataset.from_tensor_slices((readings, kinds)).batch(18)

def blend_rows(feats, cls):
    t = tf.random.uniform([], 0.0, 1.0)
    feats = t * feats + (1.0 - t) * tf.reverse(feats, [0])
    cls = (1.0 - t) * tf.reverse(cls, [0]) + t * cls
    return feats, cls

blended = pairs.map(blend_rows)
"""


def test_mapped_class_ids_are_mixed_as_one_hot_rows(kernel: KernelSession) -> None:
    error = failing(kernel, MAPPED)
    text = error["explanation"]
    assert "`cls` holds int64 class ids (0 to 4)" in text
    assert "half of class 0 and half of class 4 make 2, a class number that means neither" in text
    assert "`CategoricalCrossentropy`" in text
    assert "Cast the int64 operand" not in text
    assert error["course"]["section"] == "labels-and-loss"
    fix = fix_of(text)
    assert fix == "cls = tf.one_hot(cls, n_kinds)"
    assert "as the first line of `blend_rows`" in text
    fixed = MAPPED.replace(
        "def blend_rows(feats, cls):\n", f"def blend_rows(feats, cls):\n    {fix}\n"
    )
    runs_cleanly(kernel, fixed)
    rows = value_of(kernel, "next(iter(blended))[1].numpy().round(4).tolist()")
    assert len(rows) == 18 and all(len(row) == 5 for row in rows)
    assert all(sum(row) == pytest.approx(1.0, abs=1e-3) for row in rows)


EAGER = """grades = tf.constant([0, 3, 1, 2, 3, 0, 1, 2])
share = tf.constant(0.7)
soft_grades = share * grades + (1 - share) * grades[::-1]
"""


def test_eager_class_ids_read_from_the_tensor(kernel: KernelSession) -> None:
    text = failing(kernel, EAGER)["explanation"]
    assert "`grades` holds int32 class ids (0 to 3)" in text
    assert "on a line before the mix" in text
    fix = fix_of(text)
    assert fix.startswith("grades = tf.one_hot(grades, ")
    runs_cleanly(
        kernel, EAGER.replace("share = tf.constant(0.7)\n", f"share = tf.constant(0.7)\n{fix}\n")
    )
    assert value_of(kernel, "soft_grades.numpy().sum(axis=1).round(4).tolist()") == [1.0] * 8
    assert value_of(kernel, "round(float(soft_grades[0, 0]), 4)") == pytest.approx(0.7)


def test_zero_one_flags_keep_the_cast(kernel: KernelSession) -> None:
    cell = (
        "flags = tf.constant([0, 1, 1, 0, 1])\nweight = tf.constant(0.6)\n"
        "soft_flags = weight * flags + (1 - weight) * tf.reverse(flags, [0])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "one_hot" not in text and "class ids" not in text
    assert "float32" in text.split("Fix: ", 1)[1]


def test_one_hot_rows_blended_run_silently(kernel: KernelSession) -> None:
    cell = (
        "rows_oh = tf.one_hot([2, 0, 1, 2], 3)\nmix_w = tf.constant(0.3)\n"
        "mixed_rows = mix_w * rows_oh + (1 - mix_w) * tf.reverse(rows_oh, [0])"
    )
    runs_cleanly(kernel, cell)
