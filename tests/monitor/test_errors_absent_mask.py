"""A layer's ``call`` reading a mask its plain input does not carry (issue #25,
``errors/families_absent_mask.py``): the entry says a plain array carries no Keras mask and
where masks come from; both remedies are applied and run. The same layer fed by an
Embedding that makes a mask runs cleanly."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

LAYER = """class MaskedSum(keras.layers.Layer):
    def call(self, seq, mask=None):
        weights = tf.cast(mask, seq.dtype)
        return tf.reduce_sum(seq * weights[..., None], axis=1)
"""


def test_plain_array_gives_no_mask(kernel: KernelSession) -> None:
    runs_cleanly(kernel, LAYER)
    cell = "frames = np.ones((3, 7, 2), dtype='float32')\nsummed = MaskedSum()(frames)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`mask` is None: `MaskedSum.call` reads a mask" in text
    assert "`frames` is a plain NumPy array, which carries no Keras mask" in text
    assert "`if mask is None:`" in text
    assert error["course"]["section"] == "functional-api"
    fix = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[-1]
    assert fix == "summed = MaskedSum()(frames, mask=np.ones(frames.shape[:-1], dtype=bool))"
    runs_cleanly(kernel, cell.replace("summed = MaskedSum()(frames)", fix))
    assert value_of(kernel, "summed.numpy().tolist()") == [[7.0, 7.0]] * 3
    # The other remedy: call handles None.
    handled = LAYER.replace(
        "        weights = tf.cast",
        "        if mask is None:\n            return tf.reduce_sum(seq, axis=1)\n"
        "        weights = tf.cast",
    )
    runs_cleanly(kernel, handled + cell)
    assert value_of(kernel, "summed.numpy().tolist()") == [[7.0, 7.0]] * 3


def test_mask_from_an_embedding_runs(kernel: KernelSession) -> None:
    runs_cleanly(kernel, LAYER)
    runs_cleanly(
        kernel,
        "ids = keras.Input((5,), dtype='int32')\n"
        "emb = keras.layers.Embedding(10, 4, mask_zero=True)(ids)\n"
        "pooled_model = keras.Model(ids, MaskedSum()(emb))\n"
        "pooled = pooled_model(np.array([[1, 2, 0, 0, 0]]))",
    )
    assert value_of(kernel, "list(pooled.shape)") == [1, 4]
