"""Error explanations in a real kernel, outside and inside tf.function."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import (
    IMPORTS,
    KernelSession,
    KernelSetup,
    checked_report,
    run,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


# TensorFlow imported before the monitor loads (the usual notebook order).
KERNEL = KernelSetup(before_load=IMPORTS, after_load="")


def failing(kernel: KernelSession, code: str) -> dict[str, Any]:
    execution = run(kernel, code, ok=False)
    assert execution.reply["status"] == "error"
    # The cell's own traceback is the only output.
    outputs = [
        m["header"]["msg_type"]
        for m in execution.iopub
        if m["header"]["msg_type"] in ("stream", "display_data", "execute_result")
    ]
    assert outputs == [], outputs
    # The monitor's hooks on Function.__call__ / GradientTape.gradient stay out of it.
    assert "jupyterlab_tfcoach" not in "\n".join(execution.reply["traceback"])
    return checked_report(execution)


def test_eager_dtype_mismatch(kernel: KernelSession) -> None:
    error = failing(kernel, "tf.constant([1, 2]) + tf.constant([0.5, 1.0])")["error"]
    assert error["type"] == "InvalidArgumentError"
    assert error["message"].startswith("cannot compute AddV2")
    assert "float32" in error["explanation"] and "int32" in error["explanation"]
    # The int side is cast up to float, never the float side down to int.
    assert (
        "tf.cast(tf.constant([1, 2]), tf.float32) + tf.constant([0.5, 1.0])"
        in (error["explanation"])
    )
    assert "tf.int32)" not in error["explanation"]
    assert error["course"]["section"] == "dtype-casting"

    error = failing(kernel, "tf.matmul(tf.ones([1, 1], tf.float64), tf.ones([1, 1]))")["error"]
    assert "float64" in error["explanation"]
    assert (
        "tf.matmul(tf.cast(tf.ones([1, 1], tf.float64), tf.float32), tf.ones([1, 1]))"
        in (error["explanation"])
    )


def test_dtype_mismatch_inside_tf_function_is_unwrapped(kernel: KernelSession) -> None:
    code = """@tf.function
def add(a, b):
    return a + b

add(tf.constant([1, 2]), tf.constant([0.5, 1.0]))
"""
    error = failing(kernel, code)["error"]
    assert error["type"] == "TypeError"
    assert error["message"].startswith("Input 'y' of 'AddV2' Op has type float32")
    assert "`a` (the left side of `+`) is int32 while `b` is float32" in error["explanation"]
    assert "`tf.cast(a, tf.float32) + b`" in error["explanation"]


def test_tape_used_twice(kernel: KernelSession) -> None:
    code = """v = tf.Variable(1.0)
with tf.GradientTape() as tape:
    y = v * v
tape.gradient(y, v)
tape.gradient(y, v)
"""
    error = failing(kernel, code)["error"]
    assert error["type"] == "RuntimeError"
    assert "persistent=True" in error["explanation"]
    assert error["course"]["section"] == "gradient-tape"


def test_variable_created_inside_tf_function(kernel: KernelSession) -> None:
    code = """@tf.function
def make(x):
    v = tf.Variable(1.0)
    return x * v

make(tf.constant(1.0))
"""
    error = failing(kernel, code)["error"]
    assert error["type"] == "ValueError"
    assert error["message"].startswith("tf.function only supports singleton tf.Variables")
    assert error["course"]["section"] == "variables-in-functions"


def test_numpy_inside_tf_function(kernel: KernelSession) -> None:
    code = "@tf.function\ndef to_numpy(x):\n    return x.numpy()\n\nto_numpy(tf.constant(1.0))"
    error = failing(kernel, code)["error"]
    assert (error["type"], error["message"]) == (
        "AttributeError",
        "'SymbolicTensor' object has no attribute 'numpy'",
    )
    assert "tf.print" in error["explanation"]
    assert error["course"]["section"] == "numpy-in-graphs"


def test_symbolic_tensor_as_python_bool(kernel: KernelSession) -> None:
    code = """@tf.function(autograph=False)
def absolute(x):
    if x > 0:
        return x
    return -x

absolute(tf.constant(1.0))
"""
    error = failing(kernel, code)["error"]
    assert error["type"] == "OperatorNotAllowedInGraphError"
    assert "`return tf.where(x > 0, x, -x)`" in error["explanation"]
    assert "autograph" not in error["explanation"].lower()
    assert error["course"]["section"] == "autograph-conditions"


def test_no_gradients_provided(kernel: KernelSession) -> None:
    code = """optimizer = keras.optimizers.SGD()
weight = keras.Variable(1.0)
optimizer.apply_gradients([(None, weight)])
"""
    error = failing(kernel, code)["error"]
    assert error["type"] == "ValueError"
    assert error["message"].startswith("No gradients provided for any variable")
    assert error["course"]["section"] == "stopped-learning"


def test_augmented_assignment_on_variable(kernel: KernelSession) -> None:
    error = failing(kernel, "counter = tf.Variable(1.0)\ncounter -= 0.5")["error"]
    assert "assign_sub" in error["explanation"]
    assert error["course"]["section"] == "rebinding-variables"


def test_unknown_errors_have_no_explanation(kernel: KernelSession) -> None:
    assert failing(kernel, "1 / 0")["error"] is None
    # Issue #25: every TensorFlow error raised through a cell gets an entry.
    explanation = failing(kernel, "tf.reshape(tf.ones([6]), [4])")["error"]["explanation"]
    assert explanation.startswith("Line 1 of this cell: `tf.reshape(tf.ones([6]), [4])` raised")
    assert "6 values cannot fill a shape of 4" in explanation
    code = """class Sneaky(Exception):
    def __str__(self):
        raise RuntimeError("no")

raise Sneaky()
"""
    report = checked_report(run(kernel, code, ok=False))
    assert report["error"] is None


def test_numpy_fix_only_where_the_tensor_itself_works(kernel: KernelSession) -> None:
    # ``peak.numpy() > 2.0``: the tensor itself compares (AutoGraph makes it a tf.cond), so
    # the fix drops .numpy(); ``.max()`` on the array would fail on the tensor too: no such
    # fix is printed there, only the advice to keep TensorFlow ops. ``np.mean`` of it gets
    # the fix that drops .numpy() and writes NumPy's function as its graph op.
    compared = (
        "@tf.function\ndef clipped(v):\n    peak = tf.reduce_max(v)\n"
        "    if peak.numpy() > 2.0:\n        v = v / peak\n    return v\n\n"
        "clipped(tf.constant([1.0, 4.0]))"
    )
    text = failing(kernel, compared)["error"]["explanation"]
    assert "replace `if peak.numpy() > 2.0:` by `if peak > 2.0:`" in text
    run(kernel, compared.replace("peak.numpy() > 2.0", "peak > 2.0"))
    code = (
        "@tf.function\ndef summary(v):\n    return v.numpy().max()\n\n"
        "summary(tf.constant([1.0, 4.0]))"
    )
    text = failing(kernel, code)["error"]["explanation"]
    assert "Fix:" not in text and "Keep the computation in TensorFlow ops" in text, text
    code = code.replace("v.numpy().max()", "np.mean(v.numpy())")
    text = failing(kernel, code)["error"]["explanation"]
    assert "replace `return np.mean(v.numpy())` by `return keras.ops.mean(v)`" in text, text
    run(kernel, code.replace("np.mean(v.numpy())", "keras.ops.mean(v)"))


def test_every_operand_of_the_cast_dtype_is_named(kernel: KernelSession) -> None:
    # ``W`` and ``b`` are both float64: casting ``W`` alone moves the error to ``+ b``.
    cell = (
        "W = tf.Variable(tf.ones((3, 2), tf.float64))\n"
        "b = tf.Variable(tf.zeros((2,), tf.float64))\n"
        "x = tf.ones((4, 3))\n"
        "y = x @ W + b"
    )
    text = failing(kernel, cell)["error"]["explanation"]
    assert "`x @ tf.cast(W, tf.float32)`" in text
    assert "`b` is float64 too" in text and "`dtype=float32`" in text
    run(kernel, cell.replace("x @ W + b", "x @ tf.cast(W, tf.float32) + tf.cast(b, tf.float32)"))
    # One float64 operand only: nothing more to name.
    single = cell.replace("tf.zeros((2,), tf.float64)", "tf.zeros((2,))")
    assert "too" not in failing(kernel, single)["error"]["explanation"]
