"""``(N, 1)`` against ``(N,)`` in an ordered comparison (a coverage ``mean(y <= upper)``) and
inside a shared loss a custom loop calls (issue #25, silent bugs). The comparison is read
like the arithmetic was: at a cell's top level and in traced graphs. A loss that ``fit``
also uses (with ``(N, 1)`` targets) must not be rewritten: the fix goes at the call the
learner wrote, on the argument it gave. Each printed fix runs in the kernel and makes the
entry go away; the correct look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(3)
feats = gen.normal(size=(96, 3)).astype("float32")
truth = (feats[:, 0] + 0.1 * gen.normal(size=96)).astype("float32")   # (96,)
"""


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


def fixes_of(text: str) -> tuple[str, str]:
    spans = re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1].split(". ")[0])
    return spans[0], spans[1]


def test_a_coverage_from_an_ordered_comparison(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """upper = (feats[:, :1] + 0.5).astype("float32")     # (96, 1)
print("share under the bound:", np.mean(truth <= upper))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`truth <= upper` (line 2 of this cell) broadcasts `upper`")
    assert "the result is (96, 96)" in notes[0]
    squeezed, widened = fixes_of(notes[0])
    assert squeezed == "truth <= upper[:, 0]" and widened == "truth[:, None] <= upper"
    for fix in (squeezed, widened):
        fixed = cell.replace("truth <= upper", fix)
        report = checked_report(run(kernel, fixed))
        assert broadcast_notes(report) == [], fix
    # A TensorFlow variant: tf.greater inside a cast and a mean.
    cell = """level = tf.constant(feats[:, 1:2])                # (96, 1)
above = tf.reduce_mean(tf.cast(tf.greater(truth, level), tf.float32))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    squeezed, _ = fixes_of(notes[0])
    assert squeezed == "tf.greater(truth, tf.squeeze(level, axis=-1))"
    fixed = cell.replace("tf.greater(truth, level)", squeezed)
    assert broadcast_notes(checked_report(run(kernel, fixed))) == []


def test_comparison_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """upper = (feats[:, :1] + 0.5).astype("float32")
flat_upper = upper.ravel()
a = np.mean(truth <= flat_upper)
b = np.mean(truth[:, None] <= truth[None, :])
c = tf.reduce_mean(tf.cast(upper > 0.0, tf.float32))
"""
    assert broadcast_notes(checked_report(run(kernel, cell))) == []


SHARED = """def spread_cost(target, guess):
    return tf.reduce_mean(tf.abs(guess - target), axis=-1)

net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
net.compile(optimizer="sgd", loss=spread_cost)
net.fit(feats, truth, epochs=1, batch_size=32, verbose=0)
"""


def test_a_shared_loss_in_a_custom_loop_is_fixed_at_the_call(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # fit gives the loss (32, 1) targets: nothing to say.
    assert broadcast_notes(checked_report(run(kernel, SHARED))) == []
    cell = """pairs = tf.data.Dataset.from_tensor_slices((feats, truth)).batch(32)
sgd = keras.optimizers.SGD(0.01)

@tf.function
def one_step(fb, tb):
    with tf.GradientTape() as tape:
        cost = tf.reduce_mean(spread_cost(tb, net(fb)))
    sgd.apply_gradients(zip(tape.gradient(cost, net.trainable_variables), net.trainable_variables))
    return cost

for fb, tb in pairs:
    one_step(fb, tb)
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`guess - target` (Cell In[")
    assert ", in `spread_cost`) broadcasts `guess`" in text
    call_line = "cost = tf.reduce_mean(spread_cost(tb, net(fb)))"
    fixed_line = "cost = tf.reduce_mean(spread_cost(tb[:, None], net(fb)))"
    assert f"The call `{call_line}` (line 7 of this cell, in `one_step`) gives `tb` as" in text
    assert f"make the shapes agree there, `{fixed_line}`." in text
    assert "Make the shapes agree: " not in text  # the shared loss is not rewritten
    assert broadcast_notes(checked_report(run(kernel, cell.replace(call_line, fixed_line)))) == []
    # fit still uses the unchanged loss, silently.
    assert broadcast_notes(checked_report(run(kernel, SHARED))) == []


def test_a_keyword_call_from_an_eager_gradient_loop(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def miss_rate(y_true, y_pred):
    return tf.reduce_mean(tf.cast(tf.not_equal(y_true, tf.round(y_pred)), tf.float32))

scorer = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])

@tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None])])
def evaluate_batch(inp, lab):
    return miss_rate(y_pred=scorer(inp), y_true=lab)

print(float(evaluate_batch(feats, np.round(truth))))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    call_line = "return miss_rate(y_pred=scorer(inp), y_true=lab)"
    fixed_line = "return miss_rate(y_pred=scorer(inp), y_true=lab[:, None])"
    assert f"The call `{call_line}`" in text and f"`{fixed_line}`" in text, text
    assert "(None, None)" in text
    assert broadcast_notes(checked_report(run(kernel, cell.replace(call_line, fixed_line)))) == []
