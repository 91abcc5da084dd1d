from __future__ import annotations

import textwrap

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC028"

# Runnable: two predictions whose errors cancel (+2 and -2). The squared mean is 0 with a
# zero gradient; the mean of the squares is 4, with a gradient towards the targets.
CANCELLING = """\
import tensorflow as tf

guess = tf.Variable([5.0, 1.0])
truth = tf.constant([3.0, 3.0])
with tf.GradientTape() as tape:
    cost = tf.reduce_mean(guess - truth) ** 2
slope = tape.gradient(cost, guess)
print(float(cost), slope.numpy().tolist())
"""
# Runnable: Keras ops, a reduction over the last axis squared by a call, in a helper
# the tape's loss sums.
ROW_HELPER = """\
import tensorflow as tf
from keras import ops

def row_gap(expected, produced):
    return ops.square(ops.mean(produced - expected, axis=-1))

weights = tf.Variable([[2.0, 0.0], [1.0, 1.0]])
wanted = tf.constant([[1.0, 1.0], [1.0, 1.0]])
with tf.GradientTape() as tape:
    total = ops.sum(row_gap(wanted, weights))
print(round(float(total), 4), tape.gradient(total, weights).numpy().tolist())
"""
FIX_CASES = (
    FixCase(
        CODE,
        CANCELLING,
        CANCELLING.replace(
            "tf.reduce_mean(guess - truth) ** 2", "tf.reduce_mean(tf.square(guess - truth))"
        ),
        "errors that cancel",
    ),
    FixCase(
        CODE,
        ROW_HELPER,
        ROW_HELPER.replace(
            "ops.square(ops.mean(produced - expected, axis=-1))",
            "ops.mean(ops.square(produced - expected), axis=-1)",
        ),
        "keras ops over an axis in a helper",
    ),
)


def test_a_squared_mean_error_in_a_custom_training_step():
    source = """\
        import tensorflow as tf
        import keras

        regressor = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
        opt = keras.optimizers.Adam(1e-3)

        @tf.function
        def fit_batch(features, prices):
            with tf.GradientTape() as tape:
                estimate = regressor(features, training=True)
                error = tf.reduce_mean(estimate - prices) ** 2
            grads = tape.gradient(error, regressor.trainable_variables)
            opt.apply_gradients(zip(grads, regressor.trainable_variables))
            return error
        """
    [finding] = check(source, CODE)
    assert span(finding) == (11, 17, 11, 55)
    assert finding.message == (
        "`tf.reduce_mean(estimate - prices) ** 2` squares the mean of the differences: "
        "positive and negative differences cancel in the mean, so this loss is 0 whenever "
        "`estimate` and `prices` agree on average, and minimising it only matches their "
        "means. It is minimised here: `tape.gradient` in `fit_batch` differentiates it. The "
        "mean of the squared differences is `tf.reduce_mean(tf.square(estimate - prices))`"
    )
    assert finding.section_id == "training-loop"
    assert fixed(source, finding).splitlines()[10] == (
        "        error = tf.reduce_mean(tf.square(estimate - prices))"
    )


def test_notebook_cells_with_a_loss_helper_a_named_difference_and_an_axis():
    cells = [
        "import tensorflow as tf",
        "def feature_gap(produced, reference):\n"
        "    residual = produced - reference\n"
        "    per_channel = tf.math.square(tf.math.reduce_sum(residual, axis=[1, 2]))\n"
        "    return tf.reduce_mean(per_channel)",
        "canvas = tf.Variable(tf.zeros([1, 8, 8, 3]))\n"
        "for _ in range(10):\n"
        "    with tf.GradientTape() as g:\n"
        "        objective = feature_gap(encoder(canvas), goal_features) + 0.1 * smooth(canvas)\n"
        "    step = g.gradient(objective, canvas)\n"
        "    canvas.assign_sub(0.05 * step)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 3)
    assert finding.message.startswith(
        "`tf.math.square(tf.math.reduce_sum(residual, axis=[1, 2]))` squares the sum of the "
        "differences (`residual` is `produced - reference`): positive and negative "
        "differences cancel in the sum"
    )
    assert (
        "It is minimised here: it is part of what `feature_gap` returns, and `g.gradient` "
        "differentiates that." in finding.message
    )
    assert finding.fix is not None
    assert [edit.new_text for edit in finding.fix.edits] == [
        "tf.math.reduce_sum(tf.math.square(residual), axis=[1, 2])"
    ]


def test_compiled_losses_keras_loss_classes_add_loss_and_numpy():
    source = """\
        import numpy as np
        import tensorflow as tf
        import keras
        from keras import ops

        def drift_loss(y_true, y_pred):
            return ops.sum(y_pred - y_true, axis=-1) ** 2

        class BandLoss(keras.losses.Loss):
            def call(self, y_true, y_pred):
                return tf.square(tf.reduce_mean(tf.subtract(y_pred, y_true), axis=-1))

        class Bottleneck(keras.layers.Layer):
            def call(self, codes, anchors):
                self.add_loss(0.1 * ops.mean(codes - anchors) ** 2)
                return codes

        def host_loss(params):
            fitted = curve(params)
            return np.mean(fitted - observed) ** 2

        def host_gap(params):
            return (curve(params) - observed).sum() ** 2

        net.compile(optimizer="adam", loss={"a": drift_loss, "b": BandLoss()})
        sgd.minimize(lambda: host_loss(theta) + host_gap(theta), [theta])
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [7, 11, 15, 20, 23]
    by_line = {f.line: f for f in findings}
    assert "it is part of what `drift_loss` returns, and `net.compile(loss=...)` trains on" in (
        by_line[7].message
    )
    assert "`BandLoss` is a Keras loss: training minimises that" in by_line[11].message
    assert "`self.add_loss` adds it to the loss" in by_line[15].message
    assert "`sgd.minimize` minimises that" in by_line[20].message
    fixes = {line: [e.new_text for e in f.fix.edits] for line, f in by_line.items() if f.fix}
    assert fixes == {
        7: ["ops.sum(ops.square(y_pred - y_true), axis=-1)"],
        11: ["tf.reduce_mean(tf.square(tf.subtract(y_pred, y_true)), axis=-1)"],
        15: ["ops.mean(ops.square(codes - anchors))"],
        20: ["np.mean(np.square(fitted - observed))"],
        23: ["((curve(params) - observed) ** 2).sum()"],
    }
    repaired = source
    for finding in sorted(findings, key=lambda f: f.line, reverse=True):
        repaired = fixed(repaired, finding)
    assert check(repaired, CODE) == []


def test_statistics_and_deliberate_squared_means_stay_quiet():
    source = """\
        import numpy as np
        import tensorflow as tf
        import scipy.optimize

        def right_loss(pred, y):
            return tf.reduce_mean(tf.square(pred - y))

        def centred_activation_penalty(hidden):
            return tf.reduce_mean(hidden) ** 2

        def toward_half(p):
            return tf.reduce_mean(p - 0.5) ** 2

        def toward_level(p, level=0.25):
            return tf.reduce_mean(p - level) ** 2

        def demeaned(p):
            return tf.reduce_mean(p - tf.reduce_mean(p)) ** 2

        def scale_invariant(pred, depth):
            d = tf.math.log(pred) - tf.math.log(depth)
            return tf.reduce_mean(d**2) - 0.5 * tf.reduce_mean(d) ** 2

        def variance(x):
            return tf.reduce_mean(x**2) - tf.reduce_mean(x) ** 2

        def mse_with_bias_term(pred, y):
            return tf.reduce_mean(tf.square(pred - y)) + tf.reduce_mean(pred - y) ** 2

        def forward(x, y):
            pred = net(x)
            return tf.reduce_mean(tf.square(pred - y)), tf.reduce_mean(pred - y) ** 2

        with tf.GradientTape() as tape:
            pred = net(x)
            loss = (
                right_loss(pred, y)
                + centred_activation_penalty(pred)
                + toward_half(pred)
                + toward_level(pred)
                + demeaned(pred)
                + scale_invariant(pred, y)
                + variance(pred)
                + mse_with_bias_term(pred, y)
            )
            bias = tf.reduce_mean(pred - y) ** 2
            main, drift = forward(x, y)
        tape.gradient(loss + main, net.trainable_variables)
        print("bias", float(bias), float(drift))

        bias_metric = tf.reduce_mean(net(x_val) - y_val) ** 2
        print(float(np.mean(prediction - labels) ** 2))
        scipy.optimize.minimize(lambda p: np.mean(curve(p) - observed) ** 2, p0)
        """
    assert check(source, CODE) == []


def test_the_squared_mean_scores_cancelling_errors_zero_and_the_fix_trains():
    """The pitfall run: errors of +2 and -2 give a squared mean of 0 and no gradient, so
    nothing learns; the rule's fix gives 4, and gradient steps on it reach the targets."""
    [finding] = check(CANCELLING, CODE)
    repaired = fixed(CANCELLING, finding)
    loop = textwrap.dedent("""\
        for _ in range(200):
            with tf.GradientTape() as tape:
                cost = LOSS
            guess.assign_sub(0.1 * tape.gradient(cost, guess))
        """)
    broken_loop = CANCELLING + loop.replace("LOSS", "tf.reduce_mean(guess - truth) ** 2")
    fixed_loss = finding.fix.edits[0].new_text  # type: ignore[union-attr]
    fixed_loop = repaired + loop.replace("LOSS", fixed_loss)
    probes = {"guess": "[round(v, 3) for v in guess.numpy().tolist()]"}
    broken, repaired_run = run_tensorflow(broken_loop, fixed_loop, **probes)
    assert broken.error is None and repaired_run.error is None
    assert broken.stdout == "0.0 [0.0, 0.0]\n"  # a perfect score on a wrong prediction
    assert repaired_run.stdout == "4.0 [2.0, -2.0]\n"
    assert broken.probes["guess"] == [5.0, 1.0]  # nothing learned
    assert repaired_run.probes["guess"] == [3.0, 3.0]
