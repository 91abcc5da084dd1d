"""One layer given a whole model's weights (issue #25, ``errors/families_keras_lifecycle.py``,
OTHER_WEIGHTS): ``layer.set_weights(model.get_weights())`` hands the layer every layer's
arrays; the entry says so with the counts and shapes, and its fix takes the weights of the
model's matching layer, which runs and copies them. Copying the matching layer's weights is
quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

NETS = """keras.utils.set_random_seed(9)
def small_net():
    return keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)]
    )
members = [small_net() for _ in range(2)]
student = small_net()
"""


def test_a_layer_given_a_whole_models_weights_takes_the_matching_layers(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, NETS)
    cell = "student.layers[1].set_weights(members[1].get_weights())"
    text = failing(kernel, cell)["explanation"]
    assert "`student.layers[1]` is one layer, with 2 weights ((8, 3), (3,))" in text
    assert "`members[1].get_weights()` is the whole model's list, 4 arrays" in text
    fix = fix_of(text)
    assert fix == "student.layers[1].set_weights(members[1].layers[1].get_weights())"
    runs_cleanly(kernel, fix)
    assert value_of(
        kernel,
        "bool(np.allclose(student.layers[1].get_weights()[0], "
        "members[1].layers[1].get_weights()[0]))",
    )


def test_the_matching_layers_weights_are_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, NETS)
    runs_cleanly(kernel, "student.layers[0].set_weights(members[0].layers[0].get_weights())")
