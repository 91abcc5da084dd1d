"""What a custom loop does with its gradient list, silently wrong (issue #25,
``symptoms/gradient_lists.py``): ``accum += grads`` on a Python list appends instead of
adding, and clipped gradients computed but not applied change nothing. Each note's fix,
applied, trains as meant; the correct loops beside them get no note."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(1)
acc_model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
acc_opt = keras.optimizers.SGD(0.1)
xs = np.random.rand(16, 3).astype("float32")
ys = np.random.rand(16, 1).astype("float32")
before = [v.numpy().copy() for v in acc_model.trainable_variables]
"""
ACCUMULATE = """accum = [tf.zeros_like(v) for v in acc_model.trainable_variables]
for mx, my in zip(np.split(xs, 4), np.split(ys, 4)):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((acc_model(mx) - my) ** 2)
    grads = tape.gradient(loss, acc_model.trainable_variables)
    accum += grads
acc_opt.apply_gradients(zip(accum, acc_model.trainable_variables))
"""
MOVED = (
    "max(float(np.abs(v.numpy() - w).max()) for v, w in zip(acc_model.trainable_variables, before))"
)


def loop_notes(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [
        n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "training-loop"
    ]


def test_gradients_added_to_a_list_with_plus_equals(kernel: KernelSession) -> None:
    [text] = loop_notes(kernel, SETUP + ACCUMULATE)
    assert text.startswith("`accum += grads` (line 12 of this cell) does not add the gradients")
    assert "it now holds 20 items" in text
    assert value_of(kernel, MOVED) == 0.0  # the zeros were applied: nothing moved
    # Each micro-batch's loss is a mean: the sum is averaged as it is made (a plain sum
    # would be 4 times the whole batch's gradient, itself told).
    fix = "accum = [a + g / 4 for a, g in zip(accum, grads)]"
    assert f"`{fix}`" in text
    assert loop_notes(kernel, SETUP + ACCUMULATE.replace("accum += grads", fix)) == []
    assert value_of(kernel, MOVED) > 0.0
    # Look-alike: += on a running loss (a tensor, not a list of gradients).
    total = SETUP + (
        "total = 0.0\nwith tf.GradientTape() as tape:\n"
        "    loss = tf.reduce_mean(acc_model(xs))\n"
        "grads = tape.gradient(loss, acc_model.trainable_variables)\ntotal += loss\n"
    )
    assert loop_notes(kernel, total) == []


CLIP = """with tf.GradientTape() as tape:
    loss = tf.reduce_mean((acc_model(xs) - ys) ** 2) * 100.0
grads = tape.gradient(loss, acc_model.trainable_variables)
clipped, norm = tf.clip_by_global_norm(grads, 0.01)
acc_opt.apply_gradients(zip(grads, acc_model.trainable_variables))
"""


def test_clipped_gradients_computed_but_the_originals_applied(kernel: KernelSession) -> None:
    [text] = loop_notes(kernel, SETUP + CLIP)
    assert text.startswith("`clipped` is computed from `grads` (line 10 of this cell")
    assert value_of(kernel, MOVED) > 0.01 * 0.1  # the unclipped step
    fix = "acc_opt.apply_gradients(zip(clipped, acc_model.trainable_variables))"
    assert f"`{fix}`" in text
    fixed = SETUP + CLIP.replace(
        "acc_opt.apply_gradients(zip(grads, acc_model.trainable_variables))", fix
    )
    assert loop_notes(kernel, fixed) == []
    assert value_of(kernel, MOVED) <= 0.01 * 0.1 + 1e-6  # at most lr * clip norm
