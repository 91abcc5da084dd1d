"""Silent custom-loop bugs found by their symptom at ``tape.gradient`` (issue #25 part 2):
a probability loss given raw scores (nothing trains), nothing trained with no cause in the
code (the symptom itself, and what to check), weight matrices that start at zero (only the
biases after them learn), variables created inside the loop (names, not attributes), and a
parameter stored as a plain tensor in a tf.Module or Keras layer. Each note's fix is run in
the kernel as printed: the note is gone and the variables train. Look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
gen = np.random.default_rng(11)
inputs = gen.normal(size=(48, 4)).astype("float32")
flags = (inputs[:, :1] + inputs[:, 1:2] > 0).astype("float32")
targets = (inputs @ gen.normal(size=(4, 2)) + 0.5).astype("float32")
"""
KERNEL = KernelSetup(after_load=SETUP)
PREFIXES = (
    "Nothing trained",
    "Weights stuck at zero",
    "Variables recreated",
    "A parameter that never learns",
)


def loop_notes(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in report["notes"] if n["text"].startswith(PREFIXES)]


def report_of(kernel: KernelSession, code: str) -> dict[str, Any]:
    return checked_report(run(kernel, code))


def code_in(text: str, after: str) -> str:
    found = re.search(re.escape(after) + r" `([^`]+)`", text)
    assert found, text
    return found.group(1)


# ------------------------------------------------------------ a probability loss on scores
SCORES = """kern = tf.Variable(tf.zeros((4, 1)))
shift = tf.Variable(0.0)
sgd = keras.optimizers.SGD(learning_rate=0.3)
xent = keras.losses.BinaryCrossentropy()
costs = []
for it in range(12):
    with tf.GradientTape() as rec:
        scores = inputs @ kern + shift
        cost = xent(flags, scores)
    grads = rec.gradient(cost, [kern, shift])
    sgd.apply_gradients(zip(grads, [kern, shift]))
    costs.append(float(cost))
"""
MOVED = "[float(tf.reduce_max(tf.abs(kern))) > 0, costs[-1] < costs[0]]"


def test_probability_loss_given_raw_scores(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, SCORES))
    text = found["text"]
    assert text.startswith("Nothing trained: `rec.gradient` ran 12 times (line 10)")
    assert "`kern`, `shift` never changed" in text
    assert "`xent` expects probabilities (from_logits=False)" in text
    assert "`scores`" in text and "`inputs @ kern + shift`, with no sigmoid" in text
    assert "every gradient was exactly 0" in text
    assert "apply `tf.sigmoid` to `scores`" in text
    assert found["course"]["section"] == "from-logits"
    assert value_of(kernel, MOVED) == [False, False]
    fix = code_in(text, "Tell the loss it gets raw scores:")
    assert fix == "xent = keras.losses.BinaryCrossentropy(from_logits=True)"
    fixed = SCORES.replace("xent = keras.losses.BinaryCrossentropy()", fix)
    assert loop_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, MOVED) == [True, True]
    # A sigmoid before the default loss: probabilities, and they train from zero.
    sigmoid_first = SCORES.replace(
        "cost = xent(flags, scores)", "cost = xent(flags, tf.sigmoid(scores))"
    )
    assert loop_notes(report_of(kernel, sigmoid_first)) == []
    assert value_of(kernel, MOVED) == [True, True]
    # The loss function with from_logits=True on the raw scores.
    function_form = SCORES.replace(
        "cost = xent(flags, scores)",
        "cost = tf.reduce_mean(keras.losses.binary_crossentropy(flags, scores, from_logits=True))",
    )
    assert loop_notes(report_of(kernel, function_form)) == []
    assert value_of(kernel, MOVED) == [True, True]


# A Keras layer's output (nothing written says it is a score): its values, read after
# the cell, are all below 0, so the clip cuts every one of them.
LAYER_SCORES = """head = keras.layers.Dense(
    1, kernel_initializer="zeros", bias_initializer=keras.initializers.Constant(-3.0)
)
adam = keras.optimizers.Adam(0.05)
for it in range(6):
    with tf.GradientTape() as tape:
        out = head(inputs)
        cost = tf.reduce_mean(keras.losses.binary_crossentropy(flags, out))
    grads = tape.gradient(cost, head.trainable_variables)
    adam.apply_gradients(zip(grads, head.trainable_variables))
"""


def test_probability_loss_function_told_from_the_values(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, LAYER_SCORES))
    text = found["text"]
    assert "`keras.losses.binary_crossentropy` without from_logits=True" in text
    assert "`out`" in text and "its values run from -3 to -3, outside [0, 1]" in text
    fix = code_in(text, "Tell the loss it gets raw scores:")
    assert fix == "keras.losses.binary_crossentropy(flags, out, from_logits=True)"
    fixed = LAYER_SCORES.replace("keras.losses.binary_crossentropy(flags, out)", fix)
    assert loop_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "float(head.bias.numpy()[0]) != -3.0")


# ------------------------------------------------------------ nothing trained, no cause named
CLIPPED = """slope = tf.Variable(tf.fill((4, 1), -2.0))
sgd = keras.optimizers.SGD(learning_rate=0.1)
for it in range(5):
    with tf.GradientTape() as rec:
        guess = tf.clip_by_value(inputs @ slope - 50.0, 0.0, 1.0)
        cost = tf.reduce_mean(tf.square(guess - flags))
    g_all = rec.gradient(cost, [slope])
    sgd.apply_gradients(zip(g_all, [slope]))
"""


def test_nothing_trained_is_told_with_what_to_check(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, CLIPPED))
    text = found["text"]
    assert text.startswith("Nothing trained: `rec.gradient` ran 5 times (line 7), but `slope`")
    assert "Every gradient was exactly 0 at the second step" in text
    assert found["course"]["section"] == "stopped-learning"
    check = code_in(text, "Print the gradients' sizes to see them:")
    assert value_of(kernel, check) == [0.0]
    # The same loop with a learning rate of 0: the gradients are not 0, the update is.
    zero_rate = CLIPPED.replace("- 50.0, 0.0, 1.0)", ", 0.0, 1.0)").replace(
        "learning_rate=0.1", "learning_rate=0.0"
    )
    [found] = loop_notes(report_of(kernel, zero_rate))
    assert "check that the learning rate is not 0" in found["text"]
    [check] = re.findall(r"not all 0 \(`([^`]+)`\)", found["text"])
    [size] = value_of(kernel, check)
    assert size > 0
    # No update in the cell: the gradients are gathered to be applied elsewhere.
    kept = CLIPPED.replace(
        "    sgd.apply_gradients(zip(g_all, [slope]))\n", "    saved = list(g_all)\n"
    )
    assert loop_notes(report_of(kernel, kept)) == []


# ------------------------------------------------------------ weight matrices started at zero
ZERO_MLP = """Wa = tf.Variable(tf.zeros((4, 8)))
ba = tf.Variable(tf.zeros((8,)))
Wb = tf.Variable(tf.zeros((8, 2)))
bb = tf.Variable(tf.zeros((2,)))
net_vars = [Wa, ba, Wb, bb]
costs = []
for it in range(15):
    with tf.GradientTape() as rec:
        hid = tf.tanh(inputs @ Wa + ba)
        cost = tf.reduce_mean(tf.square(hid @ Wb + bb - targets))
    grads = rec.gradient(cost, net_vars)
    for v, g in zip(net_vars, grads):
        v.assign_sub(0.1 * g)
    costs.append(float(cost))
"""
MATRICES_MOVED = "[float(tf.reduce_max(tf.abs(Wa))) > 0, float(tf.reduce_max(tf.abs(Wb))) > 0]"


def test_weight_matrices_started_at_zero(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, ZERO_MLP))
    text = found["text"]
    assert text.startswith(
        "Weights stuck at zero: `Wa`, `ba`, `Wb` started all zeros and never changed over "
        "15 steps (line 11) while `bb` trained"
    )
    assert found["course"]["section"] == "zero-initialization"
    assert value_of(kernel, MATRICES_MOVED) == [False, False]
    fix = code_in(text, "start the weight matrices at small random values:")
    assert fix == (
        "Wa = tf.Variable(tf.random.normal((4, 8), stddev=0.1)); "
        "Wb = tf.Variable(tf.random.normal((8, 2), stddev=0.1))"
    )
    fixed = ZERO_MLP.replace("Wa = tf.Variable(tf.zeros((4, 8)))", fix).replace(
        "Wb = tf.Variable(tf.zeros((8, 2)))\n", ""
    )
    assert loop_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, MATRICES_MOVED) == [True, True]
    assert value_of(kernel, "costs[-1] < costs[0]")
    linear = """lin_w = tf.Variable(tf.zeros((4, 2)))
lin_b = tf.Variable(tf.zeros((2,)))
for it in range(5):
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean(tf.square(inputs @ lin_w + lin_b - targets))
    d_w, d_b = rec.gradient(cost, [lin_w, lin_b])
    lin_w.assign_sub(0.1 * d_w)
    lin_b.assign_sub(0.1 * d_b)
"""
    assert loop_notes(report_of(kernel, linear)) == []


# ------------------------------------------------------------ variables created in the loop
IN_LOOP = """costs = []
for it in range(8):
    coef = tf.Variable(tf.zeros((4, 2)))
    icpt = tf.Variable(tf.zeros((2,)))
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean(tf.square(inputs @ coef + icpt - targets))
    d_coef, d_icpt = rec.gradient(cost, [coef, icpt])
    coef.assign_sub(0.1 * d_coef)
    icpt.assign_sub(0.1 * d_icpt)
    costs.append(float(cost))
"""


def test_variables_created_inside_the_loop(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, IN_LOOP))
    text = found["text"]
    assert text.startswith(
        "Variables recreated at every step: at each `rec.gradient` call (line 7) `coef` and "
        "`icpt` are new variable objects: `coef = tf.Variable(tf.zeros((4, 2)))`, "
        "`icpt = tf.Variable(tf.zeros((2,)))` run inside `for it in range(8):`"
    )
    assert found["course"]["section"] == "variables"
    assert value_of(kernel, "costs[-1] == costs[0]")
    # The fix as the note says it: those statements moved above the loop.
    moved = re.findall(r"`([^`]+)`", text.split("Create the variables once, before the loop:")[1])
    *statements, loop = moved
    assert loop == "for it in range(8):"
    body = IN_LOOP
    for statement in statements:
        body = body.replace(f"    {statement}\n", "")
    fixed = body.replace(f"{loop}\n", "\n".join(statements) + f"\n{loop}\n")
    assert loop_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "costs[-1] < costs[0] / 2")
    before = """coef = tf.Variable(tf.zeros((4, 2)))
icpt = tf.Variable(tf.zeros((2,)))
for it in range(6):
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean(tf.square(inputs @ coef + icpt - targets))
    d_coef, d_icpt = rec.gradient(cost, [coef, icpt])
    coef.assign_sub(0.1 * d_coef)
    icpt.assign_sub(0.1 * d_icpt)
"""
    assert loop_notes(report_of(kernel, before)) == []


def test_variables_created_inside_a_functions_loop(kernel: KernelSession) -> None:
    in_function = """def train_line(steps):
    for k in range(steps):
        gain = tf.Variable(tf.ones((4, 2)))
        with tf.GradientTape() as tp:
            cost = tf.reduce_mean(tf.square(inputs @ gain - targets))
        tp_grad = tp.gradient(cost, gain)
        gain.assign_sub(0.1 * tp_grad)
    return gain

train_line(4)
"""
    [found] = loop_notes(report_of(kernel, in_function))
    assert (
        "`gain` is a new variable object: `gain = tf.Variable(tf.ones((4, 2)))` runs"
        in (found["text"])
    )
    assert (
        "move `gain = tf.Variable(tf.ones((4, 2)))` above `for k in range(steps):`"
        in (found["text"])
    )


# ------------------------------------------------------------ a parameter kept as a tensor
AFFINE = """class Affine2(tf.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.mat = tf.Variable(tf.random.normal((n_in, n_out), stddev=0.1))
        self.offset = tf.zeros((n_out,))

    def __call__(self, x):
        return x @ self.mat + self.offset

aff = Affine2(4, 2)
sgd = keras.optimizers.SGD(learning_rate=0.1)
for it in range(20):
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean(tf.square(aff(inputs) - targets))
    grads = rec.gradient(cost, aff.trainable_variables)
    sgd.apply_gradients(zip(grads, aff.trainable_variables))
"""


def test_module_parameter_stored_as_a_tensor(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, AFFINE))
    text = found["text"]
    assert text.startswith(
        "A parameter that never learns: `self.offset` of `Affine2` is a plain tensor, not "
        "a variable: `self.offset = tf.zeros((n_out,))` (in `Affine2.__init__`)"
    )
    assert "so it is not in `aff.trainable_variables`" in text
    assert found["course"]["section"] == "parameters-are-variables"
    fix = code_in(text, "Make it a variable:")
    assert fix == "self.offset = tf.Variable(tf.zeros((n_out,)))"
    fixed = AFFINE.replace("self.offset = tf.zeros((n_out,))", fix)
    assert loop_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "float(tf.reduce_max(tf.abs(aff.offset))) > 0")
    # A mask made from data and a zero padding row: constants on purpose.
    code = """class Masked(tf.Module):
    def __init__(self, mask):
        super().__init__()
        self.mat = tf.Variable(tf.random.normal((4, 2), stddev=0.1))
        self.mask = tf.constant(mask)
        self.pad = tf.zeros((1, 2))

    def __call__(self, x):
        out = (x @ self.mat) * self.mask
        return tf.concat([out, self.pad], axis=0)[:-1]

msk = Masked(np.array([1.0, 0.0], dtype="float32"))
sgd = keras.optimizers.SGD(learning_rate=0.1)
for it in range(5):
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean(tf.square(msk(inputs) - targets))
    grads = rec.gradient(cost, msk.trainable_variables)
    sgd.apply_gradients(zip(grads, msk.trainable_variables))
"""
    assert loop_notes(report_of(kernel, code)) == []


KERAS_AFFINE = """class ShiftedDense(keras.layers.Layer):
    def build(self, input_shape):
        self.kern = self.add_weight(shape=(input_shape[-1], 2), initializer="glorot_uniform")
        self.bias = tf.zeros((2,))

    def call(self, x):
        return tf.matmul(x, self.kern) + self.bias

sd = ShiftedDense()
sd(inputs)
adam = keras.optimizers.Adam(0.05)
for it in range(10):
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean(tf.square(sd(inputs) - targets))
    grads = rec.gradient(cost, sd.trainable_variables)
    adam.apply_gradients(zip(grads, sd.trainable_variables))
"""


def test_keras_layer_parameter_stored_as_a_tensor(kernel: KernelSession) -> None:
    [found] = loop_notes(report_of(kernel, KERAS_AFFINE))
    fix = code_in(found["text"], "Make it a variable:")
    assert fix == 'self.bias = self.add_weight(shape=(2,), initializer="zeros")'
    fixed = KERAS_AFFINE.replace("self.bias = tf.zeros((2,))", fix)
    assert loop_notes(report_of(kernel, fixed)) == []
    assert value_of(kernel, "[len(sd.trainable_variables), float(sd.bias.numpy().max()) != 0]") == [
        2,
        True,
    ]
