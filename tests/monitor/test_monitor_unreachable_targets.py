"""Targets a model's output can never reach (issue #25, ``symptoms/unreachable_targets.py``),
where ``loss_agreement`` cannot read them: a custom GradientTape loop comparing a tanh or
relu head with targets outside its range (a loss object, a hand-written square), and a
``fit`` with the learner's own loss function on -1/1 labels for a sigmoid. In a real
kernel; each fix, run as printed, makes the note go and the loss fall; correct
look-alikes stay quiet."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\n",
)
SECTION = "output-activation"


def notes_of(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "can never output those targets" in note["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


HOUSES = """rng = np.random.default_rng(11)
rooms = rng.normal(size=(640, 5)).astype("float32")
house_prices = (rooms @ rng.normal(size=(5, 1)) * 4 + 12).astype("float32")
def make_valuer(head):
    keras.utils.set_random_seed(2)
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(32, activation="relu"), head])
valuer = make_valuer(keras.layers.Dense(1, activation="tanh"))
"""
LOOP = """squared = keras.losses.MeanSquaredError()
adam = keras.optimizers.Adam(0.01)
for epoch in range(4):
    for start in range(0, 640, 64):
        with tf.GradientTape() as tape:
            guess = valuer(rooms[start:start + 64], training=True)
            batch_loss = squared(house_prices[start:start + 64], guess)
        grads = tape.gradient(batch_loss, valuer.trainable_variables)
        adam.apply_gradients(zip(grads, valuer.trainable_variables))
final = float(squared(house_prices, valuer(rooms)))
"""


def test_tanh_head_in_a_custom_loop_told_and_fixed(kernel: KernelSession) -> None:
    run(kernel, HOUSES)
    [text] = notes_of(checked_report(run(kernel, LOOP)))
    assert text.startswith(
        "`squared(house_prices[start:start + 64], guess)` (line 7) compares `valuer`'s "
        "output with `house_prices`, but `valuer` ends with `valuer.layers[1]`, "
        "`keras.layers.Dense(1, activation=\"tanh\")`: activation 'tanh' only outputs values "
        "in (-1, 1), and `house_prices` runs from"
    ), text
    before = value_of(kernel, "final")
    assert text.endswith(
        "build `valuer` with `keras.layers.Dense(1, activation=None)` as its last layer, then "
        "train it again."
    ), text
    fix = re.search(r"build `valuer` with `([^`]+)`", text)
    assert fix is not None
    run(kernel, f"valuer = make_valuer({fix.group(1)})\n")
    assert notes_of(checked_report(run(kernel, LOOP))) == []
    assert value_of(kernel, "final") < before / 3


def test_relu_head_and_a_hand_written_loss_on_standardized_tensors(
    kernel: KernelSession,
) -> None:
    setup = """rng = np.random.default_rng(4)
signals = tf.constant(rng.normal(size=(400, 3)), tf.float32)
raw = signals @ tf.constant([[1.5], [-2.0], [0.5]]) + 30.0
z_target = (raw - tf.reduce_mean(raw)) / tf.math.reduce_std(raw)
scorer = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8),
                           keras.layers.Dense(1, activation="relu", name="score")])
sgd = keras.optimizers.SGD(0.05)
"""
    run(kernel, setup)
    loop = """for step in range(20):
    with tf.GradientTape() as tape:
        err = tf.reduce_mean(tf.square(scorer(signals) - z_target))
    sgd.apply_gradients(zip(tape.gradient(err, scorer.trainable_variables),
                            scorer.trainable_variables))
"""
    [text] = notes_of(checked_report(run(kernel, loop)))
    assert "`scorer(signals) - z_target` (line 3) compares `scorer`'s output with `z_target`" in (
        text
    ), text
    assert "activation 'relu' only outputs values in [0, inf)" in text, text
    assert 'keras.layers.Dense(1, activation=None, name="score")' in text, text


def test_own_loss_in_fit_with_labels_of_minus_one_and_one(kernel: KernelSession) -> None:
    setup = """rng = np.random.default_rng(9)
reviews = rng.normal(size=(500, 4)).astype("float32")
polarity = np.where(reviews[:, :1] + reviews[:, 1:2] > 0, 1.0, -1.0).astype("float32")
def smooth_l2(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred))
def make_judge():
    keras.utils.set_random_seed(1)
    judge = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
    judge.compile(keras.optimizers.Adam(0.05), smooth_l2)
    return judge
judge = make_judge()
"""
    run(kernel, setup)
    cell = "judge.fit(reviews, polarity, epochs=5, verbose=0)\n"
    [text] = notes_of(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`judge.fit(reviews, polarity, epochs=5, verbose=0)` (line 1) trains `judge` on "
        "`polarity`, but `judge` ends with `judge.layers[0]`, "
        '`keras.layers.Dense(1, activation="sigmoid")`'
    ), text
    fix = last_code(text)
    assert fix == 'polarity = (polarity == 1).astype("float32")'
    run(kernel, f"{fix}\njudge = make_judge()\n")
    assert notes_of(checked_report(run(kernel, cell))) == []
    accuracy = "float(np.mean((judge.predict(reviews, verbose=0) > 0.5) == (polarity == 1)))"
    assert value_of(kernel, accuracy) > 0.9


def test_look_alikes_stay_quiet(kernel: KernelSession) -> None:
    setup = """rng = np.random.default_rng(2)
pixels = rng.normal(size=(300, 6)).astype("float32")
is_cat = (pixels[:, 0] > 0).astype("float32")[:, None]
angle = np.tanh(pixels[:, 1:2]).astype("float32")
price_like = (pixels[:, 2:3] * 10 + 50).astype("float32")
cat_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, activation="sigmoid")])
angle_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, activation="tanh")])
price_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])
bce = keras.losses.BinaryCrossentropy()
opt = keras.optimizers.Adam()
def own(y_true, y_pred):
    return tf.reduce_mean(tf.abs(y_true - y_pred))
price_net.compile("adam", own)
"""
    run(kernel, setup)
    quiet = [
        # A sigmoid trained on 0/1 labels.
        """with tf.GradientTape() as tape:
    l = bce(is_cat, cat_net(pixels))
opt.apply_gradients(zip(tape.gradient(l, cat_net.trainable_variables),
                        cat_net.trainable_variables))
""",
        # A tanh trained on targets within [-1, 1].
        """with tf.GradientTape() as tape:
    out = angle_net(pixels)
    l = tf.reduce_mean((out - angle) ** 2)
g = tape.gradient(l, angle_net.trainable_variables)
""",
        # A linear head for prices, in a loop and in fit with an own loss.
        """with tf.GradientTape() as tape:
    l = tf.reduce_mean(tf.abs(price_like - price_net(pixels)))
g = tape.gradient(l, price_net.trainable_variables)
""",
        "price_net.fit(pixels, price_like, epochs=1, verbose=0)\n",
        # A comprehension's name is its own: `t` holds `angle` there, not the global.
        "t = price_like\n"
        "with tf.GradientTape() as tape:\n"
        "    l = sum(tf.reduce_mean((t - angle_net(pixels)) ** 2) for t in [angle])\n"
        "g = tape.gradient(l, angle_net.trainable_variables)\n",
    ]
    for cell in quiet:
        assert notes_of(checked_report(run(kernel, cell))) == [], cell


def test_class_ids_for_a_softmax_over_several_units_stay_quiet(kernel: KernelSession) -> None:
    """Class ids of shape (N,) or (N, 1) are not values a softmax over K units must output:
    the learner's own loss (one_hot, a gather) turns them into probabilities to compare.
    Before, their range (0..K-1) was read as out of (0, 1) and the note pushed
    activation=None, which breaks the classifier. Targets with one value per unit still
    get the note."""
    setup = """rng = np.random.default_rng(21)
leaves = rng.normal(size=(360, 7)).astype("float32")
species = rng.integers(0, 3, size=360)
grade = rng.integers(0, 5, size=(360, 1))
def soft_ce(y_true, y_pred):
    ids = tf.cast(tf.reshape(y_true, [-1]), tf.int32)
    picked = tf.gather(y_pred, ids, axis=1, batch_dims=1)
    return -tf.reduce_mean(tf.math.log(picked + 1e-6) * (1.0 - picked) ** 2)
botanist = keras.Sequential([keras.Input((7,)), keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(3, activation="softmax")])
botanist.compile(keras.optimizers.Adam(0.01), soft_ce)
grader = keras.Sequential([keras.Input((7,)), keras.layers.Dense(5, activation="softmax")])
sparse = keras.losses.SparseCategoricalCrossentropy()
rms = keras.optimizers.RMSprop(0.01)
counts = rng.integers(0, 9, size=(360, 3)).astype("float32")
def gap(y_true, y_pred):
    return tf.reduce_mean(tf.abs(y_true - y_pred))
mixer = keras.Sequential([keras.Input((7,)), keras.layers.Dense(3, activation="softmax")])
mixer.compile("adam", gap)
"""
    run(kernel, setup)
    quiet = [
        "botanist.fit(leaves, species, epochs=2, verbose=0)\n",
        """for begin in range(0, 360, 90):
    with tf.GradientTape() as tape:
        cost = sparse(grade[begin:begin + 90], grader(leaves[begin:begin + 90]))
    rms.apply_gradients(zip(tape.gradient(cost, grader.trainable_variables),
                            grader.trainable_variables))
""",
    ]
    for cell in quiet:
        assert notes_of(checked_report(run(kernel, cell))) == [], cell
    # One value per unit, outside (0, 1): still a target the softmax cannot output.
    [text] = notes_of(checked_report(run(kernel, "mixer.fit(leaves, counts, verbose=0)\n")))
    assert "activation 'softmax' only outputs values in (0, 1), and `counts` runs from" in text
