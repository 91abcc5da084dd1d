"""A tensor given where an op takes a Python number, an attribute of its op
(``errors/families_attribute_values.py``): the entry names the argument and what it
holds; the fix passes Python values outside a tf.function, or names the op of the same
module that takes them as tensors (which also works traced). Each printed fix runs and
gives the op's result; a Python number given is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """signal = tf.constant([[-2.0, 0.5], [4.0, -8.0]])
slope = tf.reduce_min(tf.abs(signal)) / 5.0
"""


def test_an_eager_tensor_is_passed_as_its_python_value(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = "leaked = tf.nn.leaky_relu(signal, alpha=slope)\n"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "frozen-python-values"
    assert "`leaky_relu` takes `alpha` as an attribute of its op: a Python float" in text
    assert "`alpha` is `slope` here, a tensor" in text
    fix = fix_of(text)
    assert fix == "leaked = tf.nn.leaky_relu(signal, alpha=float(slope))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "leaked.numpy().ravel().tolist()") == pytest.approx(
        [-0.2, 0.5, 4.0, -0.8], abs=1e-6
    )


ACTIVATIONS = """acts = tf.constant([[0.3, -1.7, 2.2], [0.05, 1.1, -0.4]])

@tf.function
def clamp_to_grid(values):
    top = tf.reduce_max(tf.abs(values))
    return tf.quantization.fake_quant_with_min_max_args(values, min=-top, max=top, num_bits=3)
"""


def test_an_op_that_takes_tensors_is_named_where_one_exists(kernel: KernelSession) -> None:
    run(kernel, ACTIVATIONS)
    error = failing(kernel, "gridded = clamp_to_grid(acts)\n")
    text = error["explanation"]
    assert "`min`, `max` as attributes" in text
    assert "`fake_quant_with_min_max_vars` does the same with `min`, `max` as tensor inputs" in text
    fix = fix_of(text)
    assert fix == (
        "return tf.quantization.fake_quant_with_min_max_vars(values, min=-top, max=top, num_bits=3)"
    )
    fixed = ACTIVATIONS.replace(
        "    return tf.quantization.fake_quant_with_min_max_args(values, min=-top, max=top, "
        "num_bits=3)",
        "    " + fix,
    )
    runs_cleanly(kernel, fixed + "gridded = clamp_to_grid(acts)\n")
    # Three bits over [-2.2, 2.2]: at most 8 levels, each value within one step of its own.
    levels = value_of(kernel, "len(set(np.round(gridded.numpy(), 4).ravel().tolist()))")
    assert 2 < levels <= 8
    assert value_of(kernel, "float(tf.reduce_max(tf.abs(gridded - acts)))") < 4.4 / 7


def test_traced_with_no_op_that_takes_tensors_the_rule_says_where(
    kernel: KernelSession,
) -> None:
    run(kernel, SETUP)
    error = failing(
        kernel,
        "@tf.function\n"
        "def soft_floor(batch):\n"
        "    lean = tf.reduce_mean(tf.abs(batch)) / 10.0\n"
        "    return tf.nn.leaky_relu(batch, alpha=lean)\n"
        "soft_floor(signal)\n",
    )
    text = error["explanation"]
    assert "`alpha` is `lean` here, a tensor" in text
    assert "Inside a tf.function a tensor has no Python value" in text
    assert "Fix:" not in text


def test_a_python_number_given_is_quiet(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    report = checked_report(
        run(kernel, "bent = tf.nn.leaky_relu(signal, alpha=float(slope))\nprint(bent.shape)")
    )
    assert report["error"] is None and not report["notes"]
