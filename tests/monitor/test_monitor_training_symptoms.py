"""Silent custom-loop bugs found by their symptom at ``tape.gradient`` (issue #25): a loop
whose variables never change (the cause named from the learner's code: new names, a loop
name or a helper's parameter rebound, gradients never applied), a loss that is not a
scalar while training, variables recreated at every step. Each note's fix is run in the
kernel as printed: the note is gone and the variables train. Look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
rs = np.random.default_rng(3)
feats = rs.normal(size=(32, 3)).astype("float32")
true_map = np.array([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.3]], dtype="float32")
labels = (feats @ true_map + 0.2).astype("float32")
xs = rs.uniform(-2, 2, size=(40,)).astype("float32")
ys = (4.0 * xs).astype("float32")
"""
KERNEL = KernelSetup(after_load=SETUP)


def symptom_notes(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        n
        for n in report["notes"]
        if n["text"].startswith(
            ("Nothing trained", "The loss is not a single number", "Variables recreated")
        )
    ]


def report_of(kernel: KernelSession, code: str) -> dict[str, Any]:
    return checked_report(run(kernel, code))


def fix_after(text: str, words: str) -> str:
    found = re.search(re.escape(words) + r" `([^`]+)`", text)
    assert found, text
    return found.group(1)


NEW_NAMES = """weight = tf.Variable(tf.zeros((3, 2)))
offset = tf.Variable(tf.zeros((2,)))
step_size = 0.05
costs = []
for it in range(10):
    with tf.GradientTape() as rec:
        out = feats @ weight + offset
        cost = tf.reduce_mean(tf.square(out - labels))
    g_weight, g_offset = rec.gradient(cost, [weight, offset])
    next_weight = weight - step_size * g_weight
    next_offset = offset - step_size * g_offset
    costs.append(float(cost))
"""
UPDATES = """    next_weight = weight - step_size * g_weight
    next_offset = offset - step_size * g_offset
"""
TRAINED = "[float(tf.reduce_sum(tf.abs(weight))) > 0, costs[-1] < costs[0]]"


def test_gradients_that_only_build_new_tensors(kernel: KernelSession) -> None:
    [found] = symptom_notes(report_of(kernel, NEW_NAMES))
    text = found["text"]
    assert text.startswith("Nothing trained: `rec.gradient` ran 10 times (line 9)")
    for name in ("`weight`", "`offset`", "`g_weight`", "`next_weight`"):
        assert name in text
    assert found["course"]["section"] == "rebinding-variables"
    assert value_of(kernel, TRAINED) == [False, False]
    fix = fix_after(text, "Update the variable in place:")
    assert fix == "weight.assign_sub(step_size * g_weight); offset.assign_sub(step_size * g_offset)"
    fixed = NEW_NAMES.replace(UPDATES, f"    {fix}\n")
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, TRAINED) == [True, True]


def test_gradients_inspected_in_a_loop_are_not_training(kernel: KernelSession) -> None:
    # Look-alike: gradients read to look at their norms, never meant to train.
    inspect_only = NEW_NAMES.replace(
        UPDATES, "    norms = [float(tf.norm(g_weight)), float(tf.norm(g_offset))]\n"
    )
    assert symptom_notes(report_of(kernel, inspect_only)) == []
    # Two gradients of one persistent tape, at two lines: no loop, nothing to say.
    two_calls = """pw = tf.Variable(tf.ones((3, 2)))
with tf.GradientTape(persistent=True) as both:
    main = tf.reduce_mean((feats @ pw - labels) ** 2)
    penalty = 0.01 * tf.reduce_sum(pw ** 2)
g_main = both.gradient(main, pw)
g_penalty = both.gradient(penalty, pw)
del both
"""
    assert symptom_notes(report_of(kernel, two_calls)) == []


LOOP_NAME = """layer_ws = [tf.Variable(tf.ones((3, 2))), tf.Variable(tf.zeros((2,)))]
start = [w.numpy().copy() for w in layer_ws]
for epoch in range(8):
    with tf.GradientTape() as t2:
        cost = tf.reduce_mean((feats @ layer_ws[0] + layer_ws[1] - labels) ** 2)
    gs = t2.gradient(cost, layer_ws)
    for w_i, g_i in zip(layer_ws, gs):
        w_i = w_i - 0.1 * g_i
"""
MOVED = "[bool(np.any(w.numpy() != s)) for w, s in zip(layer_ws, start)]"


def test_loop_that_rebinds_its_loop_name(kernel: KernelSession) -> None:
    [found] = symptom_notes(report_of(kernel, LOOP_NAME))
    text = found["text"]
    assert "`t2.gradient` ran 8 times" in text
    assert "`w_i = w_i - 0.1 * g_i` only rebinds the loop name `w_i`" in text
    assert "`zip(layer_ws, gs)`" in text
    assert found["course"]["section"] == "rebinding-variables"
    assert value_of(kernel, MOVED) == [False, False]
    fix = fix_after(text, "Update each variable in place:")
    assert fix == "w_i.assign_sub(0.1 * g_i)"
    fixed = LOOP_NAME.replace("w_i = w_i - 0.1 * g_i", fix)
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, MOVED) == [True, True]


HELPER = """def descend(param, grad):
    param = param - 0.05 * grad
    return param

scale = tf.Variable(2.0)
for _ in range(6):
    with tf.GradientTape() as tp:
        err = tf.reduce_mean((scale * xs - ys) ** 2)
    d_scale = tp.gradient(err, scale)
    descend(scale, d_scale)
"""


def test_helper_that_rebinds_its_parameter(kernel: KernelSession) -> None:
    [found] = symptom_notes(report_of(kernel, HELPER))
    text = found["text"]
    assert "`tp.gradient` ran 6 times" in text and "`scale` never changed" in text
    assert "`descend(scale, d_scale)` passes `scale` to `descend`" in text
    assert "`param = param - 0.05 * grad` rebinds its parameter `param`" in text
    assert value_of(kernel, "float(scale)") == 2.0
    fix = fix_after(text, "update the variable in place:")
    assert fix == "param.assign_sub(0.05 * grad)"
    fixed = HELPER.replace("param = param - 0.05 * grad", fix)
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "abs(float(scale) - 4.0) < 2.0")


NEVER_APPLIED = """gain = tf.Variable(0.5)
bias0 = tf.Variable(0.0)
errors = []
for i in range(5):
    with tf.GradientTape() as tape_a:
        cost = tf.reduce_mean((gain * xs + bias0 - ys) ** 2)
    dg, db = tape_a.gradient(cost, [gain, bias0])
    print(i, float(cost))
    errors.append(float(cost))
"""


def test_gradients_never_applied(kernel: KernelSession) -> None:
    # The learner's learning rate, from an earlier cell (set here: the test runs alone too).
    run(kernel, "step_size = 0.05")
    [found] = symptom_notes(report_of(kernel, NEVER_APPLIED))
    text = found["text"]
    assert "`gain`, `bias0` never changed" in text
    assert "The gradients `dg`, `db` are computed but never given to an optimizer" in text
    assert found["course"]["section"] == "stopped-learning"
    # ``step_size`` holds a Python number in this namespace: the user's learning rate.
    fix = fix_after(text, "Apply them after each `tape_a.gradient`:")
    assert fix == "gain.assign_sub(step_size * dg); bias0.assign_sub(step_size * db)"
    fixed = NEVER_APPLIED.replace("    print(i, float(cost))\n", f"    {fix}\n")
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "errors[-1] < errors[0]")


SUMMED = """opt = keras.optimizers.SGD(0.01)
k = tf.Variable(tf.zeros((3, 2)))
for _ in range(5):
    with tf.GradientTape() as tape:
        gap = feats @ k - labels
        per_row = tf.abs(gap)
    grads = tape.gradient(per_row, [k])
    opt.apply_gradients(zip(grads, [k]))
"""


def test_loss_that_is_not_a_scalar(kernel: KernelSession) -> None:
    [found] = symptom_notes(report_of(kernel, SUMMED))
    text = found["text"]
    assert "`per_row` given to `tape.gradient` (line 7) has shape (32, 2)" in text
    assert "computed by `per_row = tf.abs(gap)`" in text and "64 times" in text
    assert found["course"]["section"] == "gradient-tape"
    fix = fix_after(text, "Reduce it to a scalar before taking the gradient:")
    assert fix == "per_row = tf.reduce_mean(tf.abs(gap))"
    fixed = SUMMED.replace("per_row = tf.abs(gap)", fix)
    assert symptom_notes(report_of(kernel, fixed)) == []
    # The mean loss trains: the error falls.
    assert value_of(kernel, "float(tf.reduce_mean(tf.abs(feats @ k - labels))) < 1.9")


def test_derivatives_of_an_element_wise_function_stay_silent(kernel: KernelSession) -> None:
    # Look-alike: the derivative of sin at several points, a vector target, no training.
    code = """z = tf.Variable([0.5, 1.0, 2.0])
slopes = []
for point in [[0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [0.0, 0.5, 1.5]]:
    z.assign(point)
    with tf.GradientTape() as tape:
        wave = tf.sin(z)
    dwave_dz = tape.gradient(wave, z)
    slopes.append(dwave_dz)
"""
    assert symptom_notes(report_of(kernel, code)) == []


RECREATED = """class Regressor(tf.Module):
    def predict(self, x):
        self.kernel = tf.Variable(tf.random.normal((x.shape[-1], 2)))
        self.shift = tf.Variable(tf.zeros((2,)))
        return x @ self.kernel + self.shift

net = Regressor()
history = []
for step in range(12):
    with tf.GradientTape() as watch:
        cost = tf.reduce_mean((net.predict(feats) - labels) ** 2)
    grads = watch.gradient(cost, net.trainable_variables)
    for v, g in zip(net.trainable_variables, grads):
        v.assign_sub(0.1 * g)
    history.append(float(cost))
"""
GUARDED = """class Regressor(tf.Module):
    def __init__(self):
        super().__init__()
        self.built = False

    def predict(self, x):
        if not self.built:
            self.kernel = tf.Variable(tf.random.normal((x.shape[-1], 2)))
            self.shift = tf.Variable(tf.zeros((2,)))
            self.built = True
        return x @ self.kernel + self.shift
"""


def test_variables_recreated_at_every_step(kernel: KernelSession) -> None:
    [found] = symptom_notes(report_of(kernel, RECREATED))
    text = found["text"]
    assert "at each `watch.gradient` call (line 12) `net` holds new variable objects" in text
    assert "`self.kernel`, `self.shift`" in text and "`Regressor.predict`" in text
    assert found["course"]["section"] == "variables"
    # The guard the note describes, written into the class: created once, trained.
    assert "`self.built = False` in `__init__`, then `if not self.built:`" in text
    fixed = RECREATED.replace(RECREATED.split("\n\n", 1)[0], GUARDED.rstrip("\n"))
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "history[-1] < history[0] / 2")


def test_keras_layer_built_once_stays_silent(kernel: KernelSession) -> None:
    code = """class Affine(keras.layers.Layer):
    def build(self, input_shape):
        self.mat = self.add_weight(shape=(input_shape[-1], 2), initializer="zeros")

    def call(self, x):
        return x @ self.mat

aff = Affine()
adam = keras.optimizers.Adam(0.05)
for _ in range(4):
    with tf.GradientTape() as tape:
        cost = tf.reduce_mean((aff(feats) - labels) ** 2)
    grads = tape.gradient(cost, aff.trainable_variables)
    adam.apply_gradients(zip(grads, aff.trainable_variables))
"""
    assert symptom_notes(report_of(kernel, code)) == []


KERAS_LOOP = """clf = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)]
)
first = clf(feats)
for ep in range(4):
    with tf.GradientTape() as tp:
        cost = tf.reduce_mean(keras.losses.mean_squared_error(labels, clf(feats)))
    grads = tp.gradient(cost, clf.trainable_variables)
    for weight_k, grad_k in zip(clf.trainable_variables, grads):
        weight_k -= 0.1 * grad_k
"""


def test_keras_weights_updated_with_minus_equals(kernel: KernelSession) -> None:
    # On a Keras variable ``v -= ...`` makes a new tensor and rebinds the loop name.
    [found] = symptom_notes(report_of(kernel, KERAS_LOOP))
    text = found["text"]
    assert "`tp.gradient` ran 4 times (line 8)" in text
    assert "the variables in `clf.trainable_variables` never changed" in text
    assert "`weight_k -= 0.1 * grad_k` only rebinds the loop name `weight_k`" in text
    fix = fix_after(text, "Update each variable in place:")
    assert fix == "weight_k.assign_sub(0.1 * grad_k)"
    fixed = KERAS_LOOP.replace("weight_k -= 0.1 * grad_k", fix)
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "bool(np.any(clf(feats).numpy() != first.numpy()))")


def test_gradient_result_thrown_away(kernel: KernelSession) -> None:
    code = """wv = tf.Variable(tf.ones((3, 2)))
for ep in range(3):
    with tf.GradientTape() as tp:
        cost = tf.reduce_mean((feats @ wv - labels) ** 2)
    tp.gradient(cost, [wv])
"""
    [found] = symptom_notes(report_of(kernel, code))
    text = found["text"]
    assert "The result of `tp.gradient(cost, [wv])` is thrown away" in text
    keep = fix_after(text, "Keep them,").rstrip(",")
    apply = fix_after(text, "and apply them:")
    assert keep == "grads = tp.gradient(cost, [wv])"
    fixed = code.replace("    tp.gradient(cost, [wv])\n", f"    {keep}\n    {apply}\n")
    assert symptom_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "float(tf.reduce_sum(wv)) != 6.0")


def test_a_rebinding_already_reported_is_not_told_twice(kernel: KernelSession) -> None:
    # ``vv`` held a variable before the cell, so the namespace diff sees it rebound; but the
    # loop only rebinds its name: "Nothing trained" tells it (with the same fix) and the
    # diff's entry, which would say to create ``vv`` again, is not told as well.
    run(kernel, "vv = tf.Variable(1.0)")
    code = KERAS_LOOP.replace("weight_k", "vv").replace("clf", "clf2")
    report = report_of(kernel, code)
    assert report["variables"] == []
    [found] = symptom_notes(report)
    assert "only rebinds the loop name `vv`" in found["text"]
    assert fix_after(found["text"], "Update each variable in place:") == (
        "vv.assign_sub(0.1 * grad_k)"
    )


def test_a_plain_rebinding_is_not_told_twice(kernel: KernelSession) -> None:
    # Not a loop name: ``vv2 = vv2 - lr * g`` at the loop's level. The variable entry tells
    # it; "Nothing trained" does not repeat it.
    run(kernel, "vv2 = tf.Variable(tf.ones((3, 2)))")
    code = (
        "for ep in range(4):\n"
        "    with tf.GradientTape() as tp:\n"
        "        cost = tf.reduce_mean((feats @ vv2 - labels) ** 2)\n"
        "    g = tp.gradient(cost, vv2)\n"
        "    vv2 = vv2 - 0.1 * g\n"
    )
    execution = run(kernel, code, ok=False)
    [entry] = execution.report["variables"]
    assert entry["name"] == "vv2" and entry["change"] == "rebound_to_tensor"
    assert symptom_notes(execution.report) == []


def test_loop_name_that_held_a_variable_before_the_cell(kernel: KernelSession) -> None:
    """The loop name already held one of the variables (an earlier cell's loop left it
    there): the cell is still told as nothing trained because only the loop name changed,
    not as a variable to create again, and the one fix trains."""
    run(kernel, "layer_ws = [tf.Variable(tf.ones((3, 2))), tf.Variable(tf.zeros((2,)))]")
    run(kernel, "for w_i in layer_ws:\n    print(w_i.shape)")
    loop = LOOP_NAME.split("\n", 1)[1]  # the same loop, on the variables made above
    report = report_of(kernel, loop)
    [found] = symptom_notes(report)
    assert "`w_i = w_i - 0.1 * g_i` only rebinds the loop name `w_i`" in found["text"]
    assert [v["name"] for v in report["variables"]] == []
    assert not any("again as a variable" in n["text"] for n in report["notes"])
    fix = fix_after(found["text"], "Update each variable in place:")
    report_of(kernel, LOOP_NAME.split("\n", 1)[0])
    assert symptom_notes(report_of(kernel, loop.replace("w_i = w_i - 0.1 * g_i", fix))) == []
    assert value_of(kernel, "float(tf.reduce_sum(layer_ws[1] ** 2)) > 0.0") is True
