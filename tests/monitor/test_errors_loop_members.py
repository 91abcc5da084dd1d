"""An attribute read on a loop variable that only some members of the collection have
(issue #25, ``errors/loop_members.py``): the entry says the loop reaches members of other
classes, names them, and the printed filter makes the loop run; a misspelt name that no
member has keeps the API entry, and a loop that filters runs cleanly."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(1)
clf = keras.Sequential(
    [keras.Input((6,)), keras.layers.Dense(5), keras.layers.Dropout(0.3), keras.layers.Dense(2)]
)
"""
LOOP = """sizes = []
for lyr in clf.layers:
    sizes.append(tuple(lyr.kernel.shape))
print(sizes)
"""


def test_keras_layers_loop_reaching_a_layer_without_the_weight(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, LOOP)
    text = error["explanation"]
    assert "the loop over `clf.layers` reaches members of other classes" in text
    assert "`Dense` has `kernel`, `Dropout` does not" in text
    assert "not in this version's API" not in text
    assert error["course"]["section"] == "keras-model-api"
    fix = fix_of(text)
    # Dense is not imported by name: the filter names it through the learner's `keras`.
    assert fix == "for lyr in [lyr for lyr in clf.layers if isinstance(lyr, keras.layers.Dense)]:"
    runs_cleanly(kernel, LOOP.replace(LOOP.splitlines()[1], fix))
    assert value_of(kernel, "sizes") == [[6, 5], [5, 2]]
    runs_cleanly(kernel, LOOP.replace("    sizes", "    if hasattr(lyr, 'kernel'):\n        sizes"))


OWN_CLASSES = """class Affine(tf.Module):
    def __init__(self, n):
        super().__init__()
        self.w = tf.Variable(tf.ones((n, n)))
        self.bias = tf.Variable(tf.zeros(n))


class Doubler(tf.Module):
    def __call__(self, x):
        return 2 * x


blocks = [Affine(3), Doubler(), Affine(3)]
"""
OWN_LOOP = """total = 0.0
for blk in blocks:
    total += float(tf.reduce_sum(blk.bias))
"""


def test_list_of_own_modules(kernel: KernelSession) -> None:
    runs_cleanly(kernel, OWN_CLASSES)
    error = failing(kernel, OWN_LOOP)
    text = error["explanation"]
    assert "`Affine` has `bias`, `Doubler` does not" in text
    fix = fix_of(text)
    assert fix == "for blk in [blk for blk in blocks if isinstance(blk, Affine)]:"
    runs_cleanly(kernel, OWN_LOOP.replace("for blk in blocks:", fix))
    assert value_of(kernel, "total") == 0.0


def test_name_no_member_has_is_not_the_loop(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "for lyr in clf.layers:\n    print(lyr.kernal)")
    assert "reaches members of other classes" not in error["explanation"]
    runs_cleanly(kernel, "for lyr in clf.layers[::2]:\n    print(lyr.kernel.shape)")
