"""Float label rows of class shares (mixed or smoothed labels) given to a model compiled
with a sparse loss (``errors/families_keras.py``, ``_class_share_rows``): the sparse loss's
rank error is explained as rows that go with the categorical loss, never as labels to turn
back into class numbers; the fix is the compile call with the categorical loss, its
arguments kept, and the fixed cells train on the shares. Exact one-hot arrays keep their
own entry (class numbers in the call), and the categorical loss runs silently."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

PROBES = """keras.utils.set_random_seed(11)
probe_x = np.random.rand(60, 7).astype("float32")
probe_hard = np.random.randint(0, 3, size=60)
probe_soft = (np.eye(3)[probe_hard] * 0.85 + 0.05).astype("float32")
probe_ds = tf.data.Dataset.from_tensor_slices((probe_x, probe_soft)).batch(12)
prober = keras.Sequential([keras.Input((7,)), keras.layers.Dense(3)])
"""

DATASET_FIT = """prober.compile(optimizer="sgd",
               loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
prober.fit(probe_ds, epochs=1, verbose=0)
"""

MATCHES_SHARES = (
    "abs(float(prober.evaluate(probe_ds, verbose=0)) - float(tf.reduce_mean("
    "keras.losses.categorical_crossentropy(probe_soft, prober(probe_x), from_logits=True))))"
)


def test_dataset_of_float_rows_goes_to_the_categorical_loss(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PROBES)
    error = failing(kernel, DATASET_FIT)
    text = error["explanation"]
    assert "the labels of `probe_ds` are float rows with one column per class" in text
    assert "`loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)`" in text
    assert "argmax" not in text
    assert error["course"]["section"] == "labels-and-loss"
    fix = fix_of(text)
    assert fix == (
        'prober.compile(optimizer="sgd", '
        "loss=keras.losses.CategoricalCrossentropy(from_logits=True))"
    )
    fixed = fix + "\n" + DATASET_FIT.splitlines()[-1]
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, MATCHES_SHARES) < 1e-4


def test_array_of_shares_with_a_loss_string(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PROBES)
    cell = (
        'prober.compile(optimizer="adam", loss="sparse_categorical_crossentropy")\n'
        "prober.fit(probe_x, probe_soft, epochs=1, verbose=0)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`probe_soft` are float rows with one column per class (some values lie" in text
    fix = fix_of(text)
    assert fix == 'prober.compile(optimizer="adam", loss="categorical_crossentropy")'
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))


def test_exact_one_hot_arrays_keep_class_numbers_and_categorical_runs(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, PROBES + "probe_1h = np.eye(3, dtype='float32')[probe_hard]\n")
    cell = (
        'prober.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy())\n'
        "prober.fit(probe_x, probe_1h, epochs=1, verbose=0)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "float rows with one column per class" not in text
    assert "look one-hot" in text
    runs_cleanly(
        kernel,
        "prober.compile(optimizer='sgd', loss=keras.losses.CategoricalCrossentropy())\n"
        "prober.fit(probe_ds, epochs=1, verbose=0)",
    )
