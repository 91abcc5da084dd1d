"""Weights that silently stopped learning while the rest trained: fit() with a weight the
loss never uses (Keras's "Gradients do not exist" warning), a custom loop that applies only
part of the gradients. Each next to its corrected twin, which trains every weight."""

from __future__ import annotations

import pytest

from tests.harness import (
    IMPORTS,
    KernelSession,
    KernelSetup,
    changes_of,
    note_texts,
    run,
    run_quiet,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "x = np.random.rand(64, 3).astype('float32')\n"
    "y = np.random.rand(64, 1).astype('float32')"
)


SCALED = """class ScaledDense(keras.layers.Layer):
    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 1), name="kernel")
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")

    def call(self, x):
        return x @ self.kernel

model = keras.Sequential([keras.Input((3,)), ScaledDense(name="scaled_dense")])
model.compile(optimizer="adam", loss="mse")
scale_before = float(model.get_layer("scaled_dense").scale)
model.fit(x, y, epochs=2, verbose=0)
"""


def test_fit_with_a_weight_the_loss_never_uses(kernel: KernelSession) -> None:
    execution = run(kernel, SCALED)
    # Keras only warns (stderr) and trains the rest.
    assert "Gradients do not exist for variables" in execution.stderr
    report = execution.report
    [entry] = changes_of(report, "stopped_learning")
    assert entry["name"] == "model.get_layer('scaled_dense').scale"
    assert "'sequential/scaled_dense/scale'" in entry["text"]
    assert "not used in the forward pass" in entry["text"]
    assert entry["course"]["section"] == "stopped-learning"
    # Keras's own tape.gradient call inside fit() is not told a second time as a note.
    assert not any("returned None" in text for text in note_texts(report))
    assert value_of(kernel, "float(model.get_layer('scaled_dense').scale) == scale_before")

    fixed = SCALED.replace("return x @ self.kernel", "return (x @ self.kernel) * self.scale")
    execution = run(kernel, fixed)
    assert "Gradients do not exist" not in execution.stderr
    assert changes_of(execution.report, "stopped_learning") == []
    assert value_of(kernel, "float(model.get_layer('scaled_dense').scale) != scale_before")


PARTIAL = """mlp = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)]
)
opt = keras.optimizers.Adam(0.01)
before = [v.numpy().copy() for v in mlp.trainable_variables]
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((mlp(x) - y) ** 2)
    grads = tape.gradient(loss, mlp.trainable_variables[:2])
    opt.apply_gradients(zip(grads, mlp.trainable_variables[:2]))
"""

CHANGED = "[bool(np.any(v.numpy() != b)) for v, b in zip(mlp.trainable_variables, before)]"


def test_custom_loop_that_applies_part_of_the_gradients(kernel: KernelSession) -> None:
    report = run_quiet(kernel, PARTIAL)
    entries = changes_of(report, "stopped_learning")
    assert [e["name"] for e in entries] == [
        "mlp.get_layer('dense_1').kernel",
        "mlp.get_layer('dense_1').bias",
    ]
    assert value_of(kernel, CHANGED) == [True, True, False, False]
    # The advice, run as printed: all variables, one list.
    text = entries[0]["text"]
    for snippet in (
        "variables = mlp.trainable_variables",
        "grads = tape.gradient(loss, variables)",
        "opt.apply_gradients(zip(grads, variables))",
    ):
        assert f"`{snippet}`" in text
    fixed = PARTIAL.replace(
        "    grads = tape.gradient(loss, mlp.trainable_variables[:2])\n"
        "    opt.apply_gradients(zip(grads, mlp.trainable_variables[:2]))\n",
        "    variables = mlp.trainable_variables\n"
        "    grads = tape.gradient(loss, variables)\n"
        "    opt.apply_gradients(zip(grads, variables))\n",
    )
    report = run_quiet(kernel, fixed)
    assert changes_of(report, "stopped_learning") == []
    assert value_of(kernel, CHANGED) == [True, True, True, True]


TWO_WEIGHTS = """w1 = tf.Variable(1.0)
w2 = tf.Variable(2.0)
sgd = keras.optimizers.SGD(0.01)
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = (w1 * 3.0 + w2 - 1.0) ** 2
    grads = tape.gradient(loss, [w1, w2])
    sgd.apply_gradients(zip(grads, [w1]))
"""


def test_gradient_taken_but_never_applied(kernel: KernelSession) -> None:
    report = run_quiet(kernel, TWO_WEIGHTS)
    [entry] = changes_of(report, "stopped_learning")
    assert entry["name"] == "w2" and "never reached sgd" in entry["text"]
    assert value_of(kernel, "float(w2)") == 2.0
    report = run_quiet(kernel, TWO_WEIGHTS.replace("zip(grads, [w1])", "zip(grads, [w1, w2])"))
    assert report["variables"] == []
    assert value_of(kernel, "float(w2) != 2.0")


def test_no_training_no_entry_and_correct_fit_is_silent(kernel: KernelSession) -> None:
    code = """clf = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)]
)
clf.compile(optimizer="sgd", loss="mse")
clf.fit(x, y, epochs=1, verbose=0)
"""
    assert changes_of(run_quiet(kernel, code), "stopped_learning") == []
    # Freezing before the first fit() works: no entry, and no advice to recompile.
    code = """frozen = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)]
)
frozen.compile(optimizer="sgd", loss="mse")
"""
    run_quiet(kernel, code)
    report = run_quiet(
        kernel, "frozen.layers[0].trainable = False\nfrozen.fit(x, y, epochs=1, verbose=0)"
    )
    assert changes_of(report, "stopped_learning") == []
    assert not any("compile" in entry["text"] for entry in report["variables"])


def test_freezing_and_recompiling_in_one_cell_is_silent(kernel: KernelSession) -> None:
    code = """tuned = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(2, name="base"), keras.layers.Dense(1)]
)
tuned.compile(optimizer="sgd", loss="mse")
tuned.fit(x, y, epochs=1, verbose=0)
"""
    # TF may print its own retracing warning here (many models fitted in one kernel).
    run(kernel, code)
    report = run_quiet(
        kernel,
        'tuned.get_layer("base").trainable = False\ntuned.compile(optimizer="sgd", loss="mse")',
    )
    assert report["variables"] == []
    # Without compile() the train step fit() built keeps training the layer: said, with the fix.
    run(kernel, 'tuned.get_layer("base").trainable = True\ntuned.fit(x, y, verbose=0)')
    report = run_quiet(kernel, 'tuned.get_layer("base").trainable = False')
    [flag] = changes_of(report, "trainable_flag")
    assert "`tuned.compile(...)` again" in flag["text"]


def test_many_variables_are_capped(kernel: KernelSession) -> None:
    code = """class Params(tf.Module):
    def __init__(self, n):
        self.ws = [tf.Variable(float(i)) for i in range(n)]

small = Params(100)
sgd2 = keras.optimizers.SGD(0.01)
half = small.ws[:50]
with tf.GradientTape() as tape:
    loss = tf.add_n([w * 1.0 for w in half])
step = sgd2.apply_gradients(zip(tape.gradient(loss, half), half))
"""
    entries = changes_of(run_quiet(kernel, code), "stopped_learning")
    assert [e["name"] for e in entries[:2]] == ["small.ws[50]", "small.ws[51]"]
    assert len(entries) == 8 and entries[-1]["text"].endswith("(and 42 more variables like it).")
    # A module too big to list every cell (over 2,000 items) is not walked at all.
    big = code.replace("small = Params(100)", "small = Params(3000)").replace(":50]", ":1500]")
    assert changes_of(run_quiet(kernel, big), "stopped_learning") == []


SHARED_BASE = """trunk = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)], name="trunk")
first = keras.Sequential([trunk, keras.layers.Dense(1)])
first.compile(optimizer="sgd", loss="mse")
first.fit(x, y, epochs=1, verbose=0)
"""


def test_a_new_model_on_a_frozen_shared_base_is_silent(kernel: KernelSession) -> None:
    # Transfer learning: the base is frozen for a NEW model compiled in the same cell; the
    # earlier model that shares it is not being trained any more: nothing to say about it.
    run_quiet(kernel, SHARED_BASE)
    report = run_quiet(
        kernel,
        "trunk.trainable = False\n"
        "second = keras.Sequential([trunk, keras.layers.Dense(1)])\n"
        'second.compile(optimizer="sgd", loss="mse")',
    )
    assert changes_of(report, "trainable_flag") == []
    # Frozen with no new model compiled: the earlier model's stale train step is told.
    run_quiet(kernel, SHARED_BASE)
    [flag] = changes_of(run_quiet(kernel, "trunk.trainable = False"), "trainable_flag")
    assert "`first.compile(...)` again" in flag["text"]


def test_an_earlier_model_compiled_again_on_a_frozen_shared_base_is_silent(
    kernel: KernelSession,
) -> None:
    # Both models fit before; the base is frozen and ``second`` compiled again and fit in
    # the same cell: the learner trains ``second`` now, the right way. ``first``, which
    # shares the base and was not compiled again, is not what this cell trains.
    run_quiet(
        kernel,
        SHARED_BASE + "second = keras.Sequential([trunk, keras.layers.Dense(1)])\n"
        'second.compile(optimizer="sgd", loss="mse")\n'
        "second.fit(x, y, epochs=1, verbose=0)",
    )
    report = run_quiet(
        kernel,
        "trunk.trainable = False\n"
        'second.compile(optimizer="sgd", loss="mse")\n'
        "second.fit(x, y, epochs=1, verbose=0)",
    )
    assert changes_of(report, "trainable_flag") == []


def test_training_a_model_that_shares_layers_is_not_told_for_the_other(
    kernel: KernelSession,
) -> None:
    # ``second`` is trained whole in a custom loop; ``first`` shares its trunk, and its own
    # head simply is not trained here.
    code = (
        SHARED_BASE.replace("first.fit(x, y, epochs=1, verbose=0)\n", "")
        + "second = keras.Sequential([trunk, keras.layers.Dense(1)])\n"
        "adam = keras.optimizers.Adam(0.01)\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = tf.reduce_mean((second(x) - y) ** 2)\n"
        "grads = tape.gradient(loss, second.trainable_variables)\n"
        "adam.apply_gradients(zip(grads, second.trainable_variables))\n"
    )
    report = run_quiet(kernel, code)
    assert changes_of(report, "stopped_learning") == []
    # Only the trunk's gradients applied: second's head is told (the bug this entry is for).
    partial = code.replace(
        "adam.apply_gradients(zip(grads, second.trainable_variables))",
        "adam.apply_gradients(zip(grads[:2], second.trainable_variables[:2]))",
    )
    names = [entry["name"] for entry in changes_of(run_quiet(kernel, partial), "stopped_learning")]
    assert any(name.startswith("second") for name in names), names


WRAPPER = """class Pair(keras.Model):
    def __init__(self, guide, learner):
        super().__init__()
        self.guide = guide
        self.learner = learner

    def call(self, inputs):
        return self.learner(inputs)

guide = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
learner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
pair = Pair(guide, learner)
sgd = keras.optimizers.SGD(0.1)
guide_before = guide.layers[0].kernel.numpy().copy()
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((pair.learner(x) - pair.guide(x)) ** 2)
    grads = tape.gradient(loss, pair.learner.trainable_variables)
    sgd.apply_gradients(zip(grads, pair.learner.trainable_variables))
guide_kept = bool(np.array_equal(guide_before, guide.layers[0].kernel.numpy()))
"""


def test_training_one_whole_sub_model_of_a_wrapper_is_silent(kernel: KernelSession) -> None:
    # A model holding two models, one trained on purpose and the other only read (a
    # teacher guiding a student, a fixed target network): the learner chose the variables.
    report = run_quiet(kernel, WRAPPER)
    assert value_of(kernel, "guide_kept") is True
    assert changes_of(report, "stopped_learning") == []
    # A tf.Module holding two modules, the same way.
    module_code = (
        "class Scale(tf.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w = tf.Variable(tf.ones([3, 1]))\n"
        "class Both(tf.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.critic = Scale()\n"
        "        self.actor = Scale()\n"
        "both = Both()\n"
        "plain = keras.optimizers.SGD(0.1)\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = tf.reduce_mean((x @ both.actor.w - x @ both.critic.w - y) ** 2)\n"
        "grads = tape.gradient(loss, both.actor.trainable_variables)\n"
        "plain.apply_gradients(zip(grads, both.actor.trainable_variables))\n"
    )
    assert changes_of(run_quiet(kernel, module_code), "stopped_learning") == []


def test_part_of_a_sub_model_left_out_is_still_told(kernel: KernelSession) -> None:
    # Only the learner's first layer trained: a layer of the trained sub-model left out is
    # the bug this entry is for, wrapper or not.
    code = WRAPPER.replace(
        "learner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])",
        "learner = keras.Sequential(\n"
        "    [keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)]\n"
        ")",
    ).replace(
        "sgd.apply_gradients(zip(grads, pair.learner.trainable_variables))",
        "sgd.apply_gradients(zip(grads[:2], pair.learner.trainable_variables[:2]))",
    )
    names = [entry["name"] for entry in changes_of(run_quiet(kernel, code), "stopped_learning")]
    assert names, "the learner's untrained layer is told"


def test_an_optimizer_with_no_name_is_not_written_as_code_prose(kernel: KernelSession) -> None:
    """An optimizer the namespace holds under no name (here inside a dict) is "the
    optimizer" in the prose, and the code it is told to run reads ``optimizer.…``, never
    "`the optimizer.apply_gradients(...)`"."""
    cell = TWO_WEIGHTS.replace(
        "sgd = keras.optimizers.SGD(0.01)", 'opts = {"main": keras.optimizers.SGD(0.01)}'
    ).replace("sgd.apply_gradients", 'opts["main"].apply_gradients')
    report = run_quiet(kernel, cell)
    [entry] = changes_of(report, "stopped_learning")
    assert "never reached the optimizer" in entry["text"], entry["text"]
    assert "`the optimizer" not in entry["text"]
    assert "`optimizer.apply_gradients(zip(grads, variables))`" in entry["text"]
