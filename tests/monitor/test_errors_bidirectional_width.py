"""A width a Bidirectional layer doubled, met where a layer of the original width meets it
(issue #25, ``errors/doubled_widths.py``): the error is raised far from its cause (an
attention's ``tf.matmul(..., transpose_b=True)``, a sum); the entry reads matmul's
transposes, names the Bidirectional layer and its wrapped layer's units, and its fix
widens the narrow layer's statement, which then runs. A clash of n against 2n that no
Bidirectional layer made is not blamed on one."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """from keras import layers
HIDDEN = 16
frames = keras.Input(shape=(None, 5), name="frames")
queries = keras.Input(shape=(None, 5), name="queries")
"""


def test_attention_scores_over_a_bidirectional_memory(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    narrow = "asked = layers.LSTM(HIDDEN, return_sequences=True)(queries)"
    cell = f"""class Affinity(layers.Layer):
    def call(self, probe, bank):
        return tf.linalg.matmul(probe, bank, transpose_b=True)

memory = layers.Bidirectional(layers.LSTM(HIDDEN, return_sequences=True))(frames)
{narrow}
weights = Affinity()(asked, memory)
scorer = keras.Model([frames, queries], weights)"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "functional-api"
    assert "(with `transpose_b=True`): 16 vs 32" in text, text
    assert (
        "`memory` is the output of the `Bidirectional` layer around "
        "`layers.LSTM(HIDDEN, return_sequences=True)` (line 5 of this cell)"
    ) in text, text
    assert "so `memory` has 2 * HIDDEN = 32 features, where `asked` has 16" in text
    fix = fix_of(text)
    assert fix == "asked = layers.LSTM(2 * HIDDEN, return_sequences=True)(queries)"
    runs_cleanly(kernel, cell.replace(narrow, fix))
    shape = "scorer([np.ones((2, 4, 5), 'float32'), np.ones((2, 3, 5), 'float32')]).shape"
    assert value_of(kernel, f"tuple({shape})") == [2, 3, 4]


def test_an_eager_sum_with_a_named_bidirectional_layer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP + "clips = tf.random.normal((3, 7, 5))\n")
    narrow = "plain = layers.GRU(8, return_sequences=True)(clips)"
    cell = f"""both_ways = layers.Bidirectional(layers.GRU(8, return_sequences=True))
read = both_ways(clips)
{narrow}
merged = read + plain"""
    text = failing(kernel, cell)["explanation"]
    assert (
        "`read` is the output of the `Bidirectional` layer around "
        "`layers.GRU(8, return_sequences=True)` (line 2 of this cell)"
    ) in text, text
    assert "so `read` has 2 * 8 = 16 features, where `plain` has 8" in text, text
    fix = fix_of(text)
    assert fix == "plain = layers.GRU(16, return_sequences=True)(clips)"
    runs_cleanly(kernel, cell.replace(narrow, fix))
    assert value_of(kernel, "tuple(merged.shape)") == [3, 7, 16]


def test_matmul_transposes_are_read_and_other_doublings_are_not_blamed(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SETUP)
    # transpose_a: the contracted axis of the left operand is its second-to-last one.
    text = failing(
        kernel,
        "left = tf.ones((4, 3))\nright = tf.ones((5, 2))\n"
        "product = tf.matmul(left, right, transpose_a=True)",
    )["explanation"]
    assert (
        "matmul needs the second-to-last axis of `left` to equal the second-to-last axis of "
        "`right` (with `transpose_a=True`): 4 vs 5"
    ) in text, text
    # 8 against 16 where a Dense layer made the 16: no Bidirectional named.
    text = failing(
        kernel,
        "wide = layers.Dense(16)(tf.ones((2, 6, 5)))\n"
        "thin = layers.Dense(8)(tf.ones((2, 6, 5)))\n"
        "scores = tf.matmul(thin, wide, transpose_b=True)",
    )["explanation"]
    assert "(with `transpose_b=True`): 8 vs 16" in text, text
    assert "Bidirectional" not in text
    # A Bidirectional layer that sums its directions keeps the width: the cell runs.
    runs_cleanly(
        kernel,
        "kept = layers.Bidirectional(layers.GRU(8, return_sequences=True), merge_mode='sum')"
        "(tf.ones((2, 6, 5)))\nalone = layers.GRU(8, return_sequences=True)(tf.ones((2, 6, 5)))\n"
        "scores = tf.matmul(alone, kept, transpose_b=True)",
    )
