"""A trainable variable the loss reads inside the GradientTape but that is never among
tape.gradient's sources (issue #25, ``variables/left_out_sources.py``): it keeps its
starting value while the rest trains, and nothing warns. Told in an eager loop and in a
tf.function step, with a fix that, applied, makes it learn; a variable in the sources and
one the code sets itself (a schedule) stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, changes_of, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

EAGER = """keras.utils.set_random_seed(3)
gain = tf.Variable(0.2, name="gain")
reg = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
sgd = keras.optimizers.SGD(0.05)
px = np.random.rand(64, 2).astype("float32")
py = (3.0 * px.sum(axis=1, keepdims=True)).astype("float32")
for _ in range(60):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(gain * reg(px) - py))
    grads = tape.gradient(loss, reg.trainable_variables)
    sgd.apply_gradients(zip(grads, reg.trainable_variables))
"""

GRAPH = """keras.utils.set_random_seed(4)
decay = tf.Variable(1.5, name="decay")
w_lin = tf.Variable(tf.zeros((3, 1)))
adam = keras.optimizers.Adam(0.05)
qx = np.random.rand(32, 3).astype("float32")
qy = np.random.rand(32, 1).astype("float32")

@tf.function
def fit_step():
    with tf.GradientTape() as g:
        out = tf.matmul(qx, w_lin) * tf.exp(-decay)
        cost = tf.reduce_mean((out - qy) ** 2)
    dw = g.gradient(cost, [w_lin])
    adam.apply_gradients(zip(dw, [w_lin]))

for _ in range(30):
    fit_step()
"""


def left_out(kernel: KernelSession, code: str) -> list[dict]:
    report = checked_report(run(kernel, code))
    return [e for e in changes_of(report, "stopped_learning") if e["after"] == "not a source"]


def test_variable_read_in_an_eager_loop_but_not_a_source(kernel: KernelSession) -> None:
    [entry] = left_out(kernel, EAGER)
    assert entry["name"] == "gain"
    text = entry["text"]
    assert "not among the sources given to tape.gradient (`reg.trainable_variables`)" in text
    assert "sgd never updates it" in text
    assert value_of(kernel, "float(gain.numpy())") == pytest.approx(0.2)
    fix = "variables = list(reg.trainable_variables) + [gain]"
    assert f"`{fix}`" in text
    fixed = EAGER.replace(
        "    grads = tape.gradient(loss, reg.trainable_variables)\n"
        "    sgd.apply_gradients(zip(grads, reg.trainable_variables))\n",
        f"    {fix}\n    grads = tape.gradient(loss, variables)\n"
        "    sgd.apply_gradients(zip(grads, variables))\n",
    )
    assert left_out(kernel, fixed) == []
    assert value_of(kernel, "float(gain.numpy())") != pytest.approx(0.2)


def test_variable_read_in_a_tf_function_step_but_not_a_source(kernel: KernelSession) -> None:
    [entry] = left_out(kernel, GRAPH)
    assert entry["name"] == "decay"
    assert "`variables = [w_lin, decay]`" in entry["text"]
    assert "adam never updates it" in entry["text"]
    fixed = GRAPH.replace(
        "dw = g.gradient(cost, [w_lin])",
        "variables = [w_lin, decay]\n    dw = g.gradient(cost, variables)",
    ).replace("zip(dw, [w_lin])", "zip(dw, variables)")
    assert left_out(kernel, fixed) == []
    assert value_of(kernel, "float(decay.numpy())") != pytest.approx(1.5)


def test_a_variable_the_code_sets_itself_is_silent(kernel: KernelSession) -> None:
    # Look-alike: a warm-up weight read in the loss and assigned by the loop (not learnt).
    code = re.sub(
        r"for _ in range\(60\):\n",
        "for step in range(60):\n    gain.assign(min(1.0, step / 10))\n",
        EAGER,
    )
    assert left_out(kernel, code) == []
