from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed

CODE = "TFC021"

# Runnable: two boxes apart on both axes share no area, but the two negative lengths multiply
# to a positive one.
APART = """\
import tensorflow as tf

def shared_area(a, b):
    top = tf.maximum(a[:, 0], b[:, 0])
    bottom = tf.minimum(a[:, 2], b[:, 2])
    left = tf.maximum(a[:, 1], b[:, 1])
    right = tf.minimum(a[:, 3], b[:, 3])
    return (bottom - top) * (right - left)

print(shared_area(tf.constant([[0.0, 0.0, 1.0, 1.0]]), tf.constant([[3.0, 3.0, 4.0, 4.0]])).numpy())
"""
FIX_CASES = (
    FixCase(
        CODE,
        APART,
        APART.replace(
            "(bottom - top) * (right - left)",
            "tf.maximum(bottom - top, 0.0) * tf.maximum(right - left, 0.0)",
        ),
        "two boxes apart on both axes",
    ),
)


def test_an_intersection_of_two_unclipped_lengths_gets_each_clipped():
    source = """\
        import tensorflow as tf
        from keras import ops

        def overlap_ratio(p, q):
            lo_r = ops.maximum(p[..., 0], q[..., 0])
            hi_r = ops.minimum(p[..., 2], q[..., 2])
            lo_c = ops.maximum(p[..., 1], q[..., 1])
            hi_c = ops.minimum(p[..., 3], q[..., 3])
            shared = (hi_r - lo_r) * (hi_c - lo_c)
            size_p = (p[..., 2] - p[..., 0]) * (p[..., 3] - p[..., 1])
            return shared / size_p
        """
    [finding] = check(source, CODE)
    assert finding.line == 9
    assert finding.message == (
        "`hi_r - lo_r` and `hi_c - lo_c` are overlap lengths (a minimum minus a maximum) "
        "that are negative for boxes that do not overlap, and their product is positive "
        "when both are: clip each at 0 with `ops.maximum(..., 0.0)` before multiplying"
    )
    assert fixed(source, finding).splitlines()[8] == (
        "    shared = ops.maximum(hi_r - lo_r, 0.0) * ops.maximum(hi_c - lo_c, 0.0)"
    )


def test_the_same_in_notebook_cells_with_numpy():
    cells = [
        "import numpy as np\nimport tensorflow as tf",
        "s0 = np.maximum(u[:, 0], v[:, 0]); e0 = np.minimum(u[:, 2], v[:, 2])\n"
        "s1 = np.maximum(u[:, 1], v[:, 1]); e1 = np.minimum(u[:, 3], v[:, 3])\n"
        "common = (e0 - s0) * (e1 - s1)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 3)
    assert "`np.maximum(..., 0.0)`" in finding.message


def test_clipped_or_masked_overlaps_and_other_products_stay_quiet():
    source = """\
        import tensorflow as tf

        def clipped(p, q):
            y1 = tf.maximum(p[:, 0], q[:, 0])
            y2 = tf.minimum(p[:, 2], q[:, 2])
            x1 = tf.maximum(p[:, 1], q[:, 1])
            x2 = tf.minimum(p[:, 3], q[:, 3])
            return tf.maximum(y2 - y1, 0.0) * tf.maximum(x2 - x1, 0.0)

        def clipped_first(p, q):
            y1 = tf.maximum(p[:, 0], q[:, 0])
            y2 = tf.minimum(p[:, 2], q[:, 2])
            x1 = tf.maximum(p[:, 1], q[:, 1])
            x2 = tf.minimum(p[:, 3], q[:, 3])
            h = tf.maximum(y2 - y1, 0.0)
            w = tf.maximum(x2 - x1, 0.0)
            return h * w

        def masked(p, q):
            y1 = tf.maximum(p[:, 0], q[:, 0])
            y2 = tf.minimum(p[:, 2], q[:, 2])
            x1 = tf.maximum(p[:, 1], q[:, 1])
            x2 = tf.minimum(p[:, 3], q[:, 3])
            valid = tf.cast((y2 > y1) & (x2 > x1), tf.float32)
            return (y2 - y1) * (x2 - x1) * valid

        def areas(p):
            return (p[:, 2] - p[:, 0]) * (p[:, 3] - p[:, 1])

        def spread(a, b):
            hi = tf.reduce_max(a)
            lo = tf.reduce_min(b)
            return (hi - lo) * (hi - lo)
        """
    assert check(source, CODE) == []
