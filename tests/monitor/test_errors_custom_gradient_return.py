"""A ``@tf.custom_gradient`` function that does not return (result, gradient function)
(``errors/families_custom_gradient.py``): whatever message TensorFlow gives (it depends on
the result's shape, and on tracing), the entry names the function, its ``return`` and the
gradient function defined in it; the printed ``return`` fixes the function, whose gradient
is then the one it defines. A function that returns its pair stays quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

HALVED = """@tf.custom_gradient
def halved_backward(v):
    def backward(upstream):
        return upstream * 0.5
    return tf.floor(v) + v
"""


def _check_and_fix(kernel: KernelSession, definition: str, call: str, written: str) -> str:
    error = failing(kernel, definition + call)
    text = error["explanation"]
    assert error["course"]["section"] == "gradient-tape", text
    assert "`halved_backward` is decorated with `@tf.custom_gradient`" in text
    assert f"`{written}`" in text
    fix = fix_of(text)
    assert fix == "return tf.floor(v) + v, backward", text
    assert "in `halved_backward`, `return tf.floor(v) + v, backward`" in text
    return definition.replace(written, fix)


@pytest.mark.parametrize(
    "sample",
    [
        "tf.constant([0.25, 1.5, 2.75, -0.5])",  # too many values to unpack
        "tf.constant([0.25, 1.5])",  # two values: the second taken for the function
        "tf.constant(0.75)",  # a scalar cannot be unpacked
    ],
)
def test_a_result_returned_alone_is_named_whatever_the_message(
    kernel: KernelSession, sample: str
) -> None:
    call = f"halved_out = halved_backward({sample})\n"
    fixed = _check_and_fix(kernel, HALVED, call, "return tf.floor(v) + v")
    runs_cleanly(
        kernel,
        fixed
        + f"probe = tf.Variable({sample})\n"
        + "with tf.GradientTape() as tape:\n"
        + "    total = tf.reduce_sum(halved_backward(probe))\n"
        + "halved_grad = tape.gradient(total, probe)\n"
        + "assert np.allclose(halved_grad.numpy(), 0.5), halved_grad\n",
    )


def test_inside_a_tf_function_the_same_function_is_named(kernel: KernelSession) -> None:
    call = (
        "@tf.function\n"
        "def smooth_step(batch):\n"
        "    return tf.reduce_mean(halved_backward(batch))\n"
        "smooth_step(tf.constant([[0.2, 3.1], [1.4, 0.6]]))\n"
    )
    fixed = _check_and_fix(kernel, HALVED, call, "return tf.floor(v) + v")
    runs_cleanly(kernel, fixed + call)


def test_the_gradient_function_returned_first_is_swapped(kernel: KernelSession) -> None:
    swapped = HALVED.replace("return tf.floor(v) + v", "return backward, tf.floor(v) + v")
    call = "halved_out = halved_backward(tf.constant([0.5, 2.5, 4.5]))\n"
    error = failing(kernel, swapped + call)
    text = error["explanation"]
    assert "returns the gradient function first" in text
    fix = fix_of(text)
    assert fix == "return tf.floor(v) + v, backward"
    runs_cleanly(kernel, swapped.replace("return backward, tf.floor(v) + v", fix) + call)


def test_a_custom_gradient_that_returns_its_pair_is_quiet(kernel: KernelSession) -> None:
    report = checked_report(
        run(
            kernel,
            "@tf.custom_gradient\n"
            "def capped_square(u):\n"
            "    def capped(dy):\n"
            "        return dy * tf.clip_by_value(2.0 * u, -1.0, 1.0)\n"
            "    return u * u, capped\n"
            "knob = tf.Variable([0.1, 3.0])\n"
            "with tf.GradientTape() as tape:\n"
            "    sq = tf.reduce_sum(capped_square(knob))\n"
            "print(tape.gradient(sq, knob).numpy())\n",
        )
    )
    assert report["error"] is None
    assert not report["notes"], report["notes"]
