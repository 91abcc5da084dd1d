"""A probability loss given raw scores in a custom loop that still trains (issue #25, the
activation and ``from_logits`` must agree in custom loops too): the loss object left at
``from_logits=False`` and called on a head with no activation. The entry names the call,
the loss and the prediction as written, with the values that prove they are scores; the
fix (the loss made with ``from_logits=True``) runs and gives the true cross-entropy, and
gets no entry. Probabilities given to the same loss, and scores given to a
``from_logits=True`` loss, stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SETUP = """rng = np.random.default_rng(1)
feats = rng.normal(size=(96, 5)).astype("float32")
kinds = np.argmax(feats[:, :3], axis=1).astype("int32")
inp = keras.Input(shape=(5,))
hidden = keras.layers.Dense(8, activation="relu")(inp)
net = keras.Model(inp, {"kind": keras.layers.Dense(3, name="kind")(hidden)})
"""

LOOP = """kind_loss = keras.losses.SparseCategoricalCrossentropy()
opt = keras.optimizers.Adam(1e-2)
for _ in range(5):
    with tf.GradientTape() as tape:
        outs = net(feats, training=True)
        cost = kind_loss(kinds, outs["kind"])
    grads = tape.gradient(cost, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
per_row = tf.nn.sparse_softmax_cross_entropy_with_logits(kinds, outs["kind"])
true_cost = float(tf.reduce_mean(per_row))
"""


def logits_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "from-logits"
    ]


def test_scores_given_to_a_probability_loss_in_a_loop(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = logits_notes(checked_report(run(kernel, LOOP)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        '`kind_loss(kinds, outs["kind"])` (line 6 of this cell): `kind_loss` expects '
        'probabilities (from_logits=False), but `outs["kind"]` holds raw scores: its values '
        "run from"
    ), text
    fix = "kind_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)"
    assert f"`{fix}`" in text
    # The clipped loss is not the cross-entropy of these scores.
    assert abs(value_of(kernel, "float(cost)") - value_of(kernel, "true_cost")) > 0.1
    fixed = LOOP.replace(LOOP.splitlines()[0], fix)
    assert logits_notes(checked_report(run(kernel, fixed))) == []
    assert abs(value_of(kernel, "float(cost)") - value_of(kernel, "true_cost")) < 1e-5


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    with_softmax = LOOP.replace('outs["kind"])\n', 'tf.nn.softmax(outs["kind"]))\n', 1)
    probabilities = with_softmax.replace(
        'cost = kind_loss(kinds, tf.nn.softmax(outs["kind"]))',
        'probs = tf.nn.softmax(outs["kind"])\n        cost = kind_loss(kinds, probs)',
    )
    assert "kind_loss(kinds, probs)" in probabilities
    assert logits_notes(checked_report(run(kernel, probabilities))) == []
    told_logits = LOOP.replace(
        "SparseCategoricalCrossentropy()", "SparseCategoricalCrossentropy(from_logits=True)"
    )
    assert logits_notes(checked_report(run(kernel, told_logits))) == []
