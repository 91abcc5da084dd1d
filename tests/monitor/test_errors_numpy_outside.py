"""``.numpy()`` on a tf.function's argument fed to the learner's NumPy helpers (issue #25,
``errors/numpy_outside.py``): the value reads only the function's arguments, so the fix
computes it before the call and passes it in. The printed ``def`` line, the line to
delete and the two statements at the call are applied to the cell: it runs and gives
the value NumPy computes eagerly. A value that needs something the function computed
keeps the general advice."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

HELPERS = (
    "def rank_weights(scores):\n"
    "    order = np.argsort(np.argsort(-scores))\n"
    "    return (1.0 / (1.0 + order)).astype('float32')\n"
    "def robust_scale(values):\n"
    "    q75, q25 = np.percentile(values, [75, 25])\n"
    "    return np.float32(q75 - q25)\n"
    "vals = tf.constant([1.0, 2.0, 3.0])\n"
    "sc = np.array([0.2, 0.9, 0.5], dtype='float32')"
)


def applied(cell: str, text: str) -> str:
    """The cell with the fix's three parts applied: the ``def`` line, the deleted line,
    the call's statement replaced by the two statements."""
    spans = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    header, computed, call = spans[0], spans[-2], spans[-1]
    deleted = int(re.search(r"delete line (\d+)", text).group(1))  # type: ignore[union-attr]
    replaced = spans[-3]
    lines = cell.split("\n")
    out = []
    for number, line in enumerate(lines, start=1):
        if number == deleted:
            continue
        if line.lstrip().startswith("def "):
            line = line[: len(line) - len(line.lstrip())] + header
        if line == replaced:
            out += [computed, call]
            continue
        out.append(line)
    return "\n".join(out)


def test_a_parameter_only_read_there_is_replaced_by_the_value(kernel: KernelSession) -> None:
    runs_cleanly(kernel, HELPERS)
    cell = (
        "@tf.function\n"
        "def weighted_total(values, scores):\n"
        "    weights = rank_weights(scores.numpy())\n"
        "    return tf.reduce_sum(values * weights)\n"
        "print(float(weighted_total(vals, sc)))"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`weights = rank_weights(scores.numpy())` (line 3) reads only the function's" in text
    assert (
        "Fix: define `def weighted_total(values, weights):` and delete line 3; then replace "
        "`print(float(weighted_total(vals, sc)))` by `weights = rank_weights(sc)` followed "
        "by `print(float(weighted_total(vals, weights)))`."
    ) in text, text
    fixed = applied(cell, text)
    runs_cleanly(kernel, fixed + "\nresult = float(weighted_total(vals, weights))")
    assert value_of(kernel, "result") == pytest.approx(1 / 3 + 2.0 + 1.5)


def test_a_parameter_read_elsewhere_is_kept_and_the_value_added(kernel: KernelSession) -> None:
    runs_cleanly(kernel, HELPERS + "\npred_y = tf.constant([1.0, 4.0, 2.0, 9.0])")
    cell = (
        "@tf.function\n"
        "def scaled_error(guess, truth):\n"
        "    spread = robust_scale(truth.numpy())\n"
        "    return tf.reduce_mean(tf.abs(guess - truth)) / spread\n"
        "err = scaled_error(pred_y, pred_y[::-1])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`def scaled_error(guess, truth, spread):`" in text, text
    assert "`spread = robust_scale(pred_y[::-1])`" in text
    assert "`err = scaled_error(pred_y, pred_y[::-1], spread)`" in text
    runs_cleanly(kernel, applied(cell, text))
    # |[1,4,2,9] - [9,2,4,1]| = [8,2,2,8], mean 5; the IQR of [9,2,4,1] is 5.25 - 1.75 = 3.5.
    assert value_of(kernel, "float(err)") == pytest.approx(5.0 / 3.5)


def test_a_value_that_needs_the_graph_keeps_the_general_advice(kernel: KernelSession) -> None:
    runs_cleanly(kernel, HELPERS)
    cell = (
        "@tf.function\n"
        "def doubled_weights(values, scores):\n"
        "    shifted = scores * 2.0\n"
        "    weights = rank_weights(shifted.numpy())\n"
        "    return tf.reduce_sum(values * weights)\n"
        "out = doubled_weights(vals, sc)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "before the call" not in text
    assert "Keep the computation in TensorFlow ops" in text
