"""One example given to a model or layer built on batches, failing inside the learner's
own ``call`` (issue #25, ``errors/families_lost_batch_axis.py``): the entry names the
argument in the running cell, not the op deep in the layer, and its fix (a batch of one)
runs in the kernel with the layer unchanged. A batch of one gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """class TimeMix(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 4), initializer="ones")

    def call(self, x):
        steps_first = tf.transpose(x, [1, 0, 2])
        return tf.transpose(tf.einsum("tbf,fu->tbu", steps_first, self.w), [1, 0, 2])


class Summed(keras.Model):
    def __init__(self):
        super().__init__()
        self.proj = keras.layers.Dense(3)

    def call(self, x):
        rows = tf.reshape(x, (tf.shape(x)[0], 9))
        return self.proj(rows)


mixer = TimeMix()
seqs = np.random.rand(10, 5, 2).astype("float32")
mixer(seqs)
summed = Summed()
grids = np.random.rand(12, 3, 3).astype("float32")
summed(grids)
"""


def test_one_sequence_given_to_a_layer_built_on_batches(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "out = mixer(seqs[3])")
    text = error["explanation"]
    assert "`mixer` was built on batches (None, 5, 2)" in text
    assert "`seqs[3]` is (5, 2)" in text
    fix = fix_of(text)
    assert fix == "out = mixer(seqs[3:4])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(out.shape)") == [1, 5, 4]
    runs_cleanly(kernel, "again = mixer(seqs[:1])")


def test_one_grid_named_before_the_call(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "single = grids[0]\nprint(summed(single).shape)")
    # The subclassed model is described as built, by the shape it was built for.
    assert "a Keras Summed model (built for input (None, 3, 3))" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "print(summed(single[None]).shape)"
    runs_cleanly(kernel, f"single = grids[0]\n{fix}")
