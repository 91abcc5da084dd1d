"""Keras 2's backend math on Keras 3 (``errors/keras_backend_ops.py``): ``K.square``,
``K.maximum``, ``K.pow`` raise AttributeError one after another. The entry says the
functions moved to ``keras.ops`` (``pow`` is ``power``), and the fix rewrites every line of
the cell that reads them, the failing one last; Keras 2's default axis is written where
``keras.ops`` has another. Applied, the cell runs and computes what NumPy computes. A loss
already written with ``keras.ops`` (and ``K.epsilon()``, which Keras 3 keeps) is silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

MARGIN = """import keras.backend as KB

def margin_loss(same, dist, margin=1.0):
    near = same * KB.square(dist)
    far = (1 - same) * KB.pow(KB.maximum(margin - dist, 0.0), 2)
    return KB.mean(near + far) + KB.epsilon()

pairs_same = tf.constant([1.0, 0.0, 1.0, 0.0])
pairs_dist = tf.constant([0.2, 0.5, 1.5, 2.0])
value = float(margin_loss(pairs_same, pairs_dist))"""


def _fixed_lines(text: str) -> dict[int, str]:
    """``on line N `code``` of the fix -> {N: code}."""
    fix = text.split("Fix: ", 1)[1]
    return {int(n): written for n, written in re.findall(r"on line (\d+) `([^`]+)`", fix)}


def _apply(cell: str, fixed: dict[int, str]) -> str:
    lines = cell.splitlines()
    for number, written in fixed.items():
        indent = lines[number - 1][: len(lines[number - 1]) - len(lines[number - 1].lstrip())]
        lines[number - 1] = indent + written
    return "\n".join(lines)


def test_backend_math_moved_to_ops(kernel: KernelSession) -> None:
    error = failing(kernel, MARGIN)
    assert error["type"] == "AttributeError"
    assert error["course"]["section"] == "custom-layers"
    text = error["explanation"]
    assert text.startswith("Line 4 of this cell (in `margin_loss`)")
    assert "moved to `keras.ops`" in text
    assert "`KB.pow` is `keras.ops.power`" in text and "`KB.square` is `keras.ops.square`" in text
    fixed = _fixed_lines(text)
    assert fixed == {
        5: "far = (1 - same) * keras.ops.power(keras.ops.maximum(margin - dist, 0.0), 2)",
        6: "return keras.ops.mean(near + far) + KB.epsilon()",
        4: "near = same * keras.ops.square(dist)",
    }
    assert list(fixed)[-1] == 4  # the failing line's fix comes last
    runs_cleanly(kernel, _apply(MARGIN, fixed))
    expected = (0.2**2 + 0.5**2 + 1.5**2) / 4 + 1e-7  # near pairs squared, far ones inside
    assert abs(value_of(kernel, "value") - expected) < 1e-5


def test_keras2_default_axes_are_written(kernel: KernelSession) -> None:
    cell = """from keras import ops
from keras import backend as B

def best_slot(left, right):
    joined = B.concatenate([left, right])
    return B.argmax(joined)

slot = best_slot(tf.constant([[0.1, 0.9], [0.8, 0.0]]), tf.constant([[0.5], [0.9]]))"""
    text = failing(kernel, cell)["explanation"]
    assert "took another default axis than keras.ops" in text
    fixed = _fixed_lines(text)
    # keras.ops spelled as the namespace holds it.
    assert fixed == {
        6: "return ops.argmax(joined, axis=-1)",
        5: "joined = ops.concatenate([left, right], axis=-1)",
    }
    runs_cleanly(kernel, _apply(cell, fixed))
    assert value_of(kernel, "[int(i) for i in slot]") == [1, 2]


def test_ops_written_loss_is_silent(kernel: KernelSession) -> None:
    report = checked_report(
        run(
            kernel,
            """import keras.backend as KB

def margin_ok(same, dist, margin=1.0):
    near = same * keras.ops.square(dist)
    far = (1 - same) * keras.ops.power(keras.ops.maximum(margin - dist, 0.0), 2)
    return keras.ops.mean(near + far) + KB.epsilon()

print(float(margin_ok(tf.constant([1.0, 0.0]), tf.constant([0.3, 0.4]))))""",
        )
    )
    assert report["error"] is None and report["notes"] == []
