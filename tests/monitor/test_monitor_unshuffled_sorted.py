"""fit on a batched tf.data dataset over rows stored sorted by label, never shuffled
(issue #25, ``symptoms/dataset_order.py``, ``UNSHUFFLED_SORTED``).

Keras's fit does not shuffle a dataset: every epoch walks through the labels in order.
The note names the dataset and gives its statement with ``.shuffle(rows)`` before the
batch; the fix, applied, is silent. Look-alikes stay silent: evaluating the same sorted
dataset, fitting on unshuffled rows whose labels are mixed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(6)
gen6 = np.random.default_rng(6)
kinds = gen6.integers(0, 3, size=90).astype("int64")
coords = (gen6.normal(size=(90, 2)) + kinds[:, None]).astype("float32")
by_kind = np.argsort(kinds, kind="stable")
coords_sorted, kinds_sorted = coords[by_kind], kinds[by_kind]
sorter = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3, activation="softmax")])
sorter.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
"""

WORDS = "never shuffles them"


def order_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if WORDS in n["text"]]


def test_fit_on_sorted_rows_never_shuffled(kernel: KernelSession) -> None:
    run(kernel, DATA)
    build = (
        "by_kind_ds = tf.data.Dataset.from_tensor_slices((coords_sorted, kinds_sorted)).batch(10)"
    )
    cell = f"{build}\nsorter.fit(by_kind_ds, epochs=1, verbose=0)"
    [text] = order_notes(cell, kernel)
    assert text.startswith(
        "fit trains on `by_kind_ds`, which batches 90 rows whose labels are stored sorted "
        "(3 labels, each in one run of rows) and never shuffles them"
    ), text
    fixed = (
        "by_kind_ds = tf.data.Dataset.from_tensor_slices((coords_sorted, kinds_sorted))"
        ".shuffle(90).batch(10)"
    )
    assert text.endswith(f": `{fixed}`."), text
    assert order_notes(f"{fixed}\nsorter.fit(by_kind_ds, epochs=1, verbose=0)", kernel) == []
    # The same sorted rows fitted again in a later cell are not told twice.
    assert order_notes(cell, kernel) == []


def test_evaluation_and_mixed_rows_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "eval_ds = tf.data.Dataset.from_tensor_slices((coords_sorted, kinds_sorted)).batch(10)\n"
        "sorter.evaluate(eval_ds, verbose=0)",
        "mixed_ds = tf.data.Dataset.from_tensor_slices((coords, kinds)).batch(10)\n"
        "sorter.fit(mixed_ds, epochs=1, verbose=0)",
    ):
        assert order_notes(cell, kernel) == [], cell
