"""A fit whose loss became NaN because the learner's loss function (or a helper it calls)
divides by a sum that is 0 for a row of zeros (issue #25). The diverged note names the
helper, its caller, the line in its definition and the fix ``tf.math.divide_no_nan``; the
test redefines the helper with the fix and the run stays finite, with no note. Look-alike:
a loss gone NaN through a log, whose helper divides by a sum of exps (never 0), does not
blame the division."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n"
    "keras.utils.set_random_seed(4)\n",
    after_load="",
)

DATA = """feats = np.random.randn(256, 5).astype("float32")
tags = (np.random.rand(256, 4) > 0.7).astype("float32")
tags[::16] = 0.0   # some samples carry no tag at all
def tagger():
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(4)])
"""

HELPER = """def tag_share(targets):
    on = tf.cast(targets > 0.5, tf.float32)
    return on / tf.reduce_sum(on, axis=1, keepdims=True)

def share_loss(y_true, y_pred):
    return -tf.reduce_sum(tag_share(y_true) * tf.nn.log_softmax(y_pred), axis=1)
"""

FIT = """net = tagger()
net.compile(optimizer=keras.optimizers.SGD(0.05), loss=share_loss)
log = net.fit(feats, tags, batch_size=32, epochs=3, verbose=0)
"""


def nan_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == "nan-inf" and "diverged" in n["text"]
    ]


def test_a_helper_dividing_by_a_zero_row_sum(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, HELPER)
    notes = nan_notes(checked_report(run(kernel, FIT)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`net.fit`: the run diverged: the loss became nan"), text
    assert (
        "Cause: The loss function divides by a sum that can be 0: `tag_share` (called by "
        "`share_loss`), line 3 of its definition, computes "
        "`on / tf.reduce_sum(on, axis=1, keepdims=True)`"
    ) in text, text
    fix = "tf.math.divide_no_nan(on, tf.reduce_sum(on, axis=1, keepdims=True))"
    assert f"Fix: `{fix}`" in text
    run(kernel, HELPER.replace("on / tf.reduce_sum(on, axis=1, keepdims=True)", fix))
    assert nan_notes(checked_report(run(kernel, FIT))) == []
    assert value_of(kernel, "all(np.isfinite(log.history['loss']))") is True


def test_a_nan_from_a_log_does_not_blame_a_sum_of_exps(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(
        kernel,
        """def soft_tags(targets):
    lifted = tf.exp(targets)
    return lifted / tf.reduce_sum(lifted, axis=1, keepdims=True)

def raw_log_loss(y_true, y_pred):
    return -tf.reduce_sum(soft_tags(y_true) * tf.math.log(y_pred), axis=1)
""",
    )
    notes = nan_notes(
        checked_report(run(kernel, FIT.replace("loss=share_loss", "loss=raw_log_loss")))
    )
    assert len(notes) == 1, notes
    assert "divides by a sum" not in notes[0] and "soft_tags" not in notes[0], notes[0]
