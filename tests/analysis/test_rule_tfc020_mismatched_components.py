from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed

CODE = "TFC020"

# Runnable: one prior moved and scaled by its deltas; the copied line scales the height by
# the width's delta (exp(0) = 1) instead of its own (exp(log 2) = 2).
SCALED_SIDES = """\
import tensorflow as tf
import numpy as np

def decode(prior, delta):
    size_w = prior[:, 2] - prior[:, 0]
    size_h = prior[:, 3] - prior[:, 1]
    mid_x = prior[:, 0] + delta[:, 0] * size_w
    mid_y = prior[:, 1] + delta[:, 1] * size_h
    out_w = size_w * np.exp(delta[:, 2])
    out_h = size_h * np.exp(delta[:, 2])
    return np.stack([mid_x, mid_y, out_w, out_h], axis=1)

print(decode(np.array([[0.0, 0.0, 2.0, 3.0]]), np.array([[0.5, 0.5, 0.0, np.log(2.0)]])))
"""
CORNERS = """\
import tensorflow as tf

def corners(r):
    left, top, width, height = r[..., 0], r[..., 1], r[..., 2], r[..., 3]
    return tf.stack([top, left, top + width, left + height], axis=-1)

print(corners(tf.constant([[1.0, 2.0, 10.0, 20.0]])).numpy())
"""
FIX_CASES = (
    FixCase(
        CODE,
        SCALED_SIDES,
        SCALED_SIDES.replace(
            "out_h = size_h * np.exp(delta[:, 2])", "out_h = size_h * np.exp(delta[:, 3])"
        ),
        "a copied line keeps the previous component",
    ),
    FixCase(
        CODE,
        CORNERS,
        CORNERS.replace("top + width, left + height", "top + height, left + width"),
        "positions put back with the other size",
    ),
)


def test_a_copied_line_that_keeps_the_previous_component():
    source = """\
        import numpy as np
        import tensorflow as tf

        def apply_deltas(priors, d):
            pw = priors[:, 2] - priors[:, 0]
            ph = priors[:, 3] - priors[:, 1]
            mx = priors[:, 0] + d[:, 0] * pw
            my = priors[:, 1] + d[:, 1] * ph
            new_w = pw * np.exp(d[:, 2])
            new_h = ph * np.exp(d[:, 2])
            return np.stack([mx, my, new_w, new_h], axis=1)
        """
    [finding] = check(source, CODE)
    assert finding.line == 10
    assert finding.message.startswith(
        "`new_h` reads `d[:, 2]`, the component `new_w` reads on the line above, and no "
        "line reads component 3 of `d`: one component is used twice and the next never."
    )
    assert fixed(source, finding).splitlines()[9] == "    new_h = ph * np.exp(d[:, 3])"


def test_a_position_added_to_the_size_of_the_other_axis_in_a_cell():
    cells = [
        "from keras import ops",
        "def to_corners(r):\n"
        "    left, top, width, height = r[..., 0], r[..., 1], r[..., 2], r[..., 3]\n"
        "    return ops.stack((top, left, top + width, left + height), axis=-1)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 3)
    assert finding.message == (
        "`top + width`, `left + height` add to each position a size unpacked at another "
        "place: `left, top, width, height` pairs each of the first 2 with the one 2 places "
        "later, so the list needs `top + height`, `left + width`"
    )
    source = (
        "from keras import ops\n"
        "def to_corners(r):\n"
        "    left, top, width, height = r[..., 0], r[..., 1], r[..., 2], r[..., 3]\n"
        "    return ops.stack((top, left, top + width, left + height), axis=-1)\n"
    )
    [alone] = check(source, CODE)
    assert fixed(source, alone).splitlines()[3] == (
        "    return ops.stack((top, left, top + height, left + width), axis=-1)"
    )


def test_correct_look_alikes_stay_quiet():
    source = """\
        import numpy as np
        import tensorflow as tf

        def apply_deltas(priors, d):
            pw = priors[:, 2] - priors[:, 0]
            ph = priors[:, 3] - priors[:, 1]
            mx = priors[:, 0] + d[:, 0] * pw
            my = priors[:, 1] + d[:, 1] * ph
            new_w = pw * np.exp(d[:, 2])
            new_h = ph * np.exp(d[:, 3])
            return np.stack([mx, my, new_w, new_h], axis=1)

        def shared_scale(a, s):
            # one scale for both sides, and a component 3 that is read below
            side_y = a[..., 0] * tf.exp(s[..., 2])
            side_x = a[..., 1] * tf.exp(s[..., 2])
            angle = s[..., 3]
            return side_y, side_x, angle

        def not_parallel(p):
            first = p[..., 0]
            second = p[..., 1] + 1.0
            area = p[..., 2] * 2.0
            again = tf.sqrt(p[..., 2])
            return first, second, area, again

        def to_corners(r):
            left, top, width, height = r[..., 0], r[..., 1], r[..., 2], r[..., 3]
            return tf.stack([top, left, top + height, left + width], axis=-1)

        def centre_form(r):
            cx, cy, w, h = r[:, 0], r[:, 1], r[:, 2], r[:, 3]
            return tf.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=-1)

        def matrix_terms(m):
            a, b, c, d = m[:, 0], m[:, 1], m[:, 2], m[:, 3]
            return [a + d, b + c]
        """
    assert check(source, CODE) == []
