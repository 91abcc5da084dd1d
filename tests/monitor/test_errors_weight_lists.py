"""Several weight lists averaged as one array (issue #25, ``errors/families_weight_lists.py``):
NumPy refuses to stack lists of weights of different shapes; the entry names the lists and
the weights' shapes, and its fix, the average taken weight by weight, runs and gives a list
``set_weights`` takes. Averaging arrays of one shape stays quiet, and a ragged list of
numbers is not this family's."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SOUP = """keras.utils.set_random_seed(4)
def make_net():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(6), keras.layers.Dense(2)])
ingredients = [make_net() for _ in range(3)]
kept = [net.get_weights() for net in ingredients]
"""


def test_weight_lists_averaged_as_one_array_are_averaged_weight_by_weight(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SOUP)
    line = "soup = np.average(kept, axis=0)"
    cell = f"{line}\nsouped = make_net()\nsouped.set_weights(soup)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "keras-model-api"
    assert "`kept` holds 3 lists of 4 weights each (shapes (3, 6), (6,), (6, 2), (2,))" in text
    assert "Average weight by weight: `zip(*kept)`" in text
    fix = fix_of(text)
    assert fix == "soup = [np.average(same_weight, axis=0) for same_weight in zip(*kept)]"
    runs_cleanly(kernel, cell.replace(line, fix))
    expected = "float(np.mean([w[1][0] for w in kept]))"
    assert value_of(kernel, "float(souped.get_weights()[1][0])") == pytest.approx(
        value_of(kernel, expected), abs=1e-6
    )


def test_look_alikes_stay_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SOUP)
    # Arrays of one shape average as one array.
    runs_cleanly(kernel, "kernels = np.mean([w[0] for w in kept], axis=0)")
    # A ragged list of numbers: not weight lists.
    execution = run(kernel, "np.mean([[1.0, 2.0], [3.0]], axis=0)", ok=False)
    assert execution.reply["status"] == "error"
    error = checked_report(execution)["error"]
    assert error is None or "weight by weight" not in error["explanation"]
