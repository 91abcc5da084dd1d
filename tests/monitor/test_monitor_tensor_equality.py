"""``==`` between tensors whose shapes cannot broadcast (issue #25,
``symptoms/tensor_equality.py``): TensorFlow's operator returns one False, so the accuracy
is 0 and nothing raises. The note names both sides and their shapes; with the shapes
made to agree the cell is quiet and the accuracy is right."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(0)
scores = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
feats = np.random.rand(50, 4).astype("float32")
classes = tf.constant(np.random.randint(0, 3, 50))
"""
CELL = (
    "outputs = tf.cast(scores(feats) > 0, tf.int64)\n"
    "acc = float(tf.reduce_mean(tf.cast(outputs == classes, tf.float32)))\n"
)


def broadcast_notes(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [
        n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "broadcasting"
    ]


def test_comparing_scores_with_class_ids_gives_one_false(kernel: KernelSession) -> None:
    [text] = broadcast_notes(kernel, SETUP + CELL)
    assert text.startswith(
        "`outputs == classes` (line 6 of this cell) compares `outputs`, a (50, 3) int64 "
        "tensor, with `classes`, a (50,) int64 tensor: their shapes cannot broadcast"
    ), text
    assert value_of(kernel, "acc") == 0.0
    fixed = CELL.replace("outputs == classes", "tf.argmax(scores(feats), axis=-1) == classes")
    assert broadcast_notes(kernel, SETUP + fixed) == []
    assert value_of(kernel, "acc") > 0.0
