"""A Keras model run in training mode inside a GradientTape whose variables are left out
of tape.gradient's sources, beside a model whose are not (issue #25,
``variables/left_out_sources.py``): the left-out model keeps its initial weights while the
other trains on top of it, and nothing raises. Told in an eager loop and in a tf.function
step, naming the model and the fix (both models' trainable_variables); the fix, applied,
trains both. Look-alikes stay silent: a feature extractor called with training=False, a
frozen model, and two models each trained by its own tape."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, changes_of, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(8)
rng = np.random.default_rng(8)
songs = rng.normal(size=(256, 10)).astype("float32")
moods = (songs[:, :3].sum(axis=1, keepdims=True) > 0).astype("float32")
listener = keras.Sequential([keras.Input((10,)), keras.layers.Dense(12, activation="relu"),
                             keras.layers.Dropout(0.1)])
verdict = keras.Sequential([keras.Input((12,)), keras.layers.Dense(1)])
bce = keras.losses.BinaryCrossentropy(from_logits=True)
rms = keras.optimizers.RMSprop(0.01)
start = [w.numpy().copy() for w in listener.weights]
def moved():
    return any(not np.allclose(a, w.numpy()) for a, w in zip(start, listener.weights))
"""

EAGER = """for first in range(0, 256, 32):
    with tf.GradientTape() as tape:
        hidden = listener(songs[first:first + 32], training=True)
        miss = bce(moods[first:first + 32], verdict(hidden, training=True))
    grads = tape.gradient(miss, verdict.trainable_variables)
    rms.apply_gradients(zip(grads, verdict.trainable_variables))
"""

GRAPH = """squeeze_net = keras.Sequential([keras.Input((6,)),
                                   keras.layers.Dense(3, activation="tanh")])
expand_net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(6)])
sgd = keras.optimizers.SGD(0.1)
frames = np.random.default_rng(2).normal(size=(128, 6)).astype("float32")
squeeze_start = squeeze_net.layers[0].kernel.numpy().copy()

@tf.function
def rebuild_step(batch):
    with tf.GradientTape() as g:
        back = expand_net(squeeze_net(batch, training=True), training=True)
        err = tf.reduce_mean(tf.square(back - batch))
    params = expand_net.trainable_variables
    g_params = g.gradient(err, params)
    sgd.apply_gradients(zip(g_params, params))
    return err

for chunk in range(0, 128, 16):
    rebuild_step(frames[chunk:chunk + 16])
"""


def left_out(kernel: KernelSession, code: str) -> list[dict]:
    report = checked_report(run(kernel, code))
    return [e for e in changes_of(report, "stopped_learning") if e["after"] == "not a source"]


def test_a_model_left_out_of_an_eager_loop_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [entry] = left_out(kernel, EAGER)
    text = entry["text"]
    assert entry["name"] == "listener", entry
    assert text.startswith(
        "`listener` runs inside the GradientTape in training mode and the loss depends on its "
        "output, but none of its trainable variables is among the sources given to "
        "`tape.gradient` (`verdict.trainable_variables`): those hold only `verdict`'s."
    ), text
    assert "rms never updates it" in text
    assert value_of(kernel, "moved()") is False
    fix = "variables = listener.trainable_variables + verdict.trainable_variables"
    assert f"`{fix}`" in text, text
    assert "`grads = tape.gradient(miss, variables)`" in text, text
    assert "`rms.apply_gradients(zip(grads, variables))`" in text, text
    # rms was built for verdict's variables only: the fix makes it again.
    remake = "rms = keras.optimizers.RMSprop(learning_rate=0.01)"
    assert f"`{remake}`" in text, text
    fixed = (
        remake
        + "\n"
        + EAGER.replace(
            "    grads = tape.gradient(miss, verdict.trainable_variables)\n"
            "    rms.apply_gradients(zip(grads, verdict.trainable_variables))\n",
            f"    {fix}\n    grads = tape.gradient(miss, variables)\n"
            "    rms.apply_gradients(zip(grads, variables))\n",
        )
    )
    assert left_out(kernel, fixed) == []
    assert value_of(kernel, "moved()") is True


def test_a_model_left_out_of_a_tf_function_step(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [entry] = left_out(kernel, GRAPH)
    text = entry["text"]
    assert entry["name"] == "squeeze_net", entry
    assert "sources given to `g.gradient` (`params`): those hold only `expand_net`'s" in text
    assert "sgd never updates it" in text
    fix = "params = squeeze_net.trainable_variables + expand_net.trainable_variables"
    assert f"`variables = {fix.split(' = ')[1]}`" in text, text
    assert value_of(kernel, "bool(np.allclose(squeeze_start, squeeze_net.layers[0].kernel))")
    fixed = GRAPH.replace("    params = expand_net.trainable_variables\n", f"    {fix}\n")
    assert left_out(kernel, fixed) == []
    moved = "bool(np.allclose(squeeze_start, squeeze_net.layers[0].kernel.numpy()))"
    assert value_of(kernel, moved) is False


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    quiet = [
        # A feature extractor kept fixed on purpose: called with training=False.
        EAGER.replace(
            "listener(songs[first:first + 32], training=True)",
            "listener(songs[first:first + 32], training=False)",
        ),
        # A frozen extractor (no trainable variables).
        "listener.trainable = False\n" + EAGER + "listener.trainable = True\n",
        # Two models, each trained by its own tape in the same step (a GAN's two halves).
        """adam_a, adam_b = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)
for first in range(0, 256, 64):
    with tf.GradientTape() as t_head, tf.GradientTape() as t_body:
        hidden = listener(songs[first:first + 64], training=True)
        miss = bce(moods[first:first + 64], verdict(hidden, training=True))
    gh = t_head.gradient(miss, verdict.trainable_variables)
    gb = t_body.gradient(miss, listener.trainable_variables)
    adam_a.apply_gradients(zip(gh, verdict.trainable_variables))
    adam_b.apply_gradients(zip(gb, listener.trainable_variables))
""",
    ]
    for cell in quiet:
        assert left_out(kernel, cell) == [], cell
