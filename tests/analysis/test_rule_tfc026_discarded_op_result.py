from __future__ import annotations

import textwrap

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC026"


def test_a_clipped_tensor_left_unbound_gets_the_rebinding():
    source = """\
        import tensorflow as tf

        heights = tf.constant([-3.0, 0.5, 7.0])
        tf.clip_by_value(heights, 0.0, 2.0)
        print(heights)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 1, 4, 36)
    assert finding.message == (
        "`tf.clip_by_value(heights, 0.0, 2.0)` returns a new tensor and its result is thrown "
        "away: TensorFlow ops never change their inputs, so `heights` is left as it was; bind "
        "it: `heights = tf.clip_by_value(heights, 0.0, 2.0)` (for a `tf.Variable`, "
        "`heights.assign(...)`)"
    )
    assert fixed(source, finding).splitlines()[3] == (
        "heights = tf.clip_by_value(heights, 0.0, 2.0)"
    )


def test_a_variable_gets_assign_inside_a_tf_function():
    source = """\
        import tensorflow as tf

        canvas = tf.Variable(tf.zeros((2, 2)))

        @tf.function
        def brighten(delta):
            canvas.assign_add(delta)
            tf.nn.relu(canvas)
            return canvas
        """
    [finding] = check(source, CODE)
    assert "write it into the variable: `canvas.assign(tf.nn.relu(canvas))`" in finding.message
    assert fixed(source, finding).splitlines()[7] == "    canvas.assign(tf.nn.relu(canvas))"


def test_locals_and_parameters_are_rebound_outside_names_are_not():
    source = """\
        import tensorflow as tf

        offsets = tf.constant([1.0, 2.0])

        def scale(counts):
            tf.cast(counts, tf.float32)
            tf.reshape(offsets, [2, 1])
            return counts * offsets
        """
    cast, reshape = check(source, CODE)
    assert fixed(source, cast).splitlines()[5] == "    counts = tf.cast(counts, tf.float32)"
    # ``offsets = ...`` in the function would make it local, unbound at this read.
    assert reshape.fix is None
    assert "bind it: `offsets = tf.reshape(offsets, [2, 1])`" in reshape.message


def test_a_reshape_or_cast_of_a_variable_gets_no_assign():
    source = """\
        import tensorflow as tf

        table = tf.Variable(tf.ones((2, 3)))
        tf.reshape(table, [3, 2])
        tf.math.reduce_sum(table, axis=0)
        print(table.shape)
        """
    reshape, total = check(source, CODE)
    assert (reshape.fix, total.fix) == (None, None)
    assert "`table.assign(...)` needs the variable's own shape and dtype" in reshape.message


def test_the_last_line_of_a_cell_is_displayed_unless_a_semicolon_hides_it():
    cells = [
        "import tensorflow as tf\nscores = tf.constant([0.2, -1.0])",
        "tf.nn.sigmoid(scores)",
        "tf.nn.sigmoid(scores);",
        "tf.nn.sigmoid(scores)\nprint(scores)",
    ]
    findings = check_cells(cells, CODE)
    assert [(f.cell, f.line) for f in findings] == [(2, 1), (3, 1)]
    # In a file nothing is displayed: the same statement is reported.
    assert [f.line for f in check("\n".join(cells[:2]), CODE)] == [3]


def test_look_alikes_are_silent():
    source = """\
        import tensorflow as tf

        weights = tf.Variable([1.0, -2.0])
        ramp = tf.constant([0.5, 1.5])

        def squash(t):
            return tf.clip_by_value(t, 0.0, 1.0)

        clipped = tf.clip_by_value(ramp, 0.0, 1.0)
        squash(ramp)
        weights.assign(tf.clip_by_value(weights, 0.0, 1.0))
        weights.assign_add(ramp)
        tf.print(ramp)
        tf.debugging.assert_positive(ramp)
        tf.debugging.check_numerics(ramp, "ramp")
        tf.summary.scalar("ramp", tf.reduce_mean(ramp), step=0)
        tf.py_function(squash, [ramp], tf.float32)
        tf.reshape(ramp[0], [1])
        tf.clip_by_value(ramp * 2.0, 0.0, 1.0)
        print(clipped, weights)
        """
    assert check(source, CODE) == []


CLIPPED_HEIGHTS = """\
    import tensorflow as tf

    heights = tf.constant([-3.0, 0.5, 7.0])
    tf.clip_by_value(heights, 0.0, 2.0)
    print(heights.numpy().tolist())
    """

PIXELS_KEPT_IN_RANGE = """\
    import tensorflow as tf

    pixels = tf.Variable([0.2, 0.9])
    opt = tf.keras.optimizers.SGD(1.0)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = -tf.reduce_sum(pixels)
        opt.apply_gradients([(tape.gradient(loss, pixels), pixels)])
        tf.clip_by_value(pixels, 0.0, 1.0)

    for _ in range(3):
        step()
    print([round(v, 3) for v in pixels.numpy().tolist()])
    """

# Proven by tests/analysis/test_fixes_proven.py: fixed, the tensor holds the clipped values
# and the variable stays in [0, 1] after each step (as written, it grows to 3.2 and 3.9).
FIX_CASES = (
    FixCase(
        CODE,
        CLIPPED_HEIGHTS,
        CLIPPED_HEIGHTS.replace("tf.clip_by_value(heights", "heights = tf.clip_by_value(heights"),
        "a clipped tensor bound to its name",
    ),
    FixCase(
        CODE,
        PIXELS_KEPT_IN_RANGE,
        textwrap.dedent(PIXELS_KEPT_IN_RANGE).replace(
            "    tf.clip_by_value(pixels, 0.0, 1.0)",
            "    pixels.assign(tf.minimum(tf.maximum(pixels, 0.0), 1.0))",
        ),
        "a variable clipped with assign in a tf.function",
    ),
)
