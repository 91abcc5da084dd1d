"""The loss alone unpacked into several names (issue #25, ``errors/families_unpacking.py``,
``SINGLE_LOSS``): a model compiled without metrics returns one float from ``evaluate`` (and
``train_on_batch``); the entry says so, and both printed fixes run. A model compiled with
a metric unpacks cleanly, and a plain number unpacked is not Keras's to explain."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(3)
feats = np.random.rand(40, 5).astype("float32")
target = (feats.sum(axis=1) > 2.5).astype("float32")
reg = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
reg.compile(optimizer="sgd", loss="binary_crossentropy")
"""


def test_evaluate_without_metrics_unpacked_into_two(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = "bce, hit_rate = reg.evaluate(feats, target, batch_size=8, verbose=0)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`reg.evaluate(...)` returned one float, the loss" in text
    assert "`reg` was compiled without metrics" in text
    assert "`metrics=[...]`" in text  # the second name does not say which metric
    assert error["course"]["section"] == "keras-model-api"
    fix = fix_of(text)
    assert fix == "bce = reg.evaluate(feats, target, batch_size=8, verbose=0)"
    runs_cleanly(kernel, fix)
    assert isinstance(value_of(kernel, "bce"), float)
    # The other fix: compile with a metric, then the two names unpack.
    runs_cleanly(
        kernel,
        'reg.compile(optimizer="sgd", loss="binary_crossentropy", metrics=["accuracy"])\n' + cell,
    )
    assert 0.0 <= value_of(kernel, "hit_rate") <= 1.0


def test_train_on_batch_without_metrics(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "step_loss, step_acc = reg.train_on_batch(feats[:8], target[:8])")
    text = error["explanation"]
    assert "`reg.train_on_batch(...)` returned one float, the loss" in text
    assert '`metrics=["accuracy"]`' in text
    runs_cleanly(kernel, fix_of(text))


def test_plain_number_unpacked_is_not_this_family(kernel: KernelSession) -> None:
    execution = kernel.execute("lo, hi = 3.5")
    assert execution.reply["status"] == "error"
    assert checked_report(execution)["error"] is None
    runs_cleanly(kernel, SETUP + "only_loss = reg.evaluate(feats, target, verbose=0)")
