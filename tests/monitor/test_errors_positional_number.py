"""A number given by position to a Keras model whose call takes a tensor there (issue #25,
``errors/families_positional_inputs.py``, ``POSITIONAL_NUMBER``): when ``call`` indexes
that parameter (one value per example) the keyword the message advises still fails, and
the entry gives one value per example; when ``call`` uses it as one number, the keyword
is the fix. Each printed fix runs."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

MODELS = """def level_code(lv):
    return tf.cast(lv, tf.float32)[:, None] / 3.0


class Scorer(keras.Model):
    def __init__(self):
        super().__init__()
        self.out = keras.layers.Dense(1)

    def call(self, feats, level):
        return self.out(tf.concat([feats, level_code(level)], axis=-1))


class Scaled(keras.Model):
    def __init__(self):
        super().__init__()
        self.out = keras.layers.Dense(2)

    def call(self, feats, scale):
        return self.out(feats) * scale


rows = np.random.rand(12, 3).astype("float32")
scorer = Scorer()
_ = scorer(rows[:2], tf.constant([1, 2]))
scaled = Scaled()
"""


def test_number_where_call_takes_one_value_per_example(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    cell = "scores = scorer(rows[:6], 2)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`2` is a Python int, which `Scorer.call` receives as `level`" in text
    assert "`Scorer.call` indexes `level` along an axis" in text
    assert "passing `level=2` as the message advises still fails" in text
    fix = fix_of(text)
    assert fix == "scorer(rows[:6], tf.fill([6], 2))"
    runs_cleanly(kernel, f"scores = {fix}")
    assert value_of(kernel, "list(scores.shape)") == [6, 1]
    # The message's own advice fails: the entry said so.
    assert kernel.execute("scorer(rows[:6], level=2)").reply["status"] == "error"


def test_number_used_as_one_value_takes_the_keyword(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    error = failing(kernel, "halved = scaled(rows, 0.5)")
    text = error["explanation"]
    assert "which `Scaled.call` receives as `scale`" in text
    assert "indexes" not in text
    fix = fix_of(text)
    assert fix == "scaled(rows, scale=0.5)"
    runs_cleanly(kernel, f"halved = {fix}")
    assert value_of(kernel, "list(halved.shape)") == [12, 2]
