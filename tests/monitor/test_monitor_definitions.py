"""What a definition alone decides, told in the cell that defines it (issue #25,
``traces/definitions.py``): NumPy/Python randomness, ``print`` and counters in a
``tf.function`` or in the methods Keras traces for fit (``call``, ``train_step``); a random
tensor drawn once in ``__init__``/``build`` and reused by ``call``; a raw ``tf.Variable``
kept by a Keras 3 layer. The later cell that traces, fits or trains does not tell the cause again.
Each printed fix runs and makes the result right; correct look-alikes stay silent.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(500)]

SETUP = """import random
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops
keras.utils.set_random_seed(5)
rows = np.random.default_rng(1).normal(size=(64, 3)).astype("float32")
targets = (rows @ np.array([1.0, -2.0, 0.5], dtype="float32"))[:, None]
"""
KERNEL = KernelSetup(after_load=SETUP)


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, cell))
    return [note["text"] for note in report["notes"]]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def printed(kernel: KernelSession, cell: str) -> str:
    return run(kernel, cell).stdout.strip()


# ------------------------------------------------------------------ tf.function
JITTER = """@tf.function
def jitter_total(batch):
    shift = np.random.uniform(-1.0, 1.0, (3,))
    return tf.reduce_sum(batch + shift)
"""
GAUSS = """@tf.function
def wobble(level):
    return level * random.gauss(1.0, 0.5)
"""


def test_numpy_draw_in_tf_function_told_at_definition(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, JITTER)
    assert text.startswith("`np.random.uniform(...)` in `jitter_total` runs only while"), text
    fix = last_code(text)
    assert fix == "shift = tf.random.uniform((3,), -1.0, 1.0)", text
    assert "Draw inside the graph with TensorFlow's random ops instead: `tf.random.uniform(" in text
    # The later cell that traces and calls it does not tell it again.
    calls = "totals = [float(jitter_total(rows)) for _ in range(3)]\nprint(len(set(totals)))"
    report = checked_report(run(kernel, calls))
    assert not any("np.random.uniform" in n["text"] for n in report["notes"]), report
    assert printed(kernel, "print(len(set(totals)))") == "1"
    fixed = JITTER.replace("shift = np.random.uniform(-1.0, 1.0, (3,))", fix)
    assert notes_of(kernel, fixed) == []
    assert printed(kernel, calls) == "3"


def test_python_random_in_tf_function_told_at_definition(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, GAUSS)
    assert text.startswith("`random.gauss(...)` in `wobble` runs only while"), text
    fix = last_code(text)
    assert fix == "return level * tf.random.normal([], 1.0, 0.5)", text
    fixed = GAUSS.replace("return level * random.gauss(1.0, 0.5)", fix)
    assert notes_of(kernel, fixed) == []
    assert printed(kernel, "print(len({float(wobble(2.0)) for _ in range(4)}))") == "4"


LATENT = """weights = tf.Variable(tf.zeros((2, 1)))
tuner = keras.optimizers.SGD(0.05)

@tf.function
def latent_step(batch):
    codes = np.random.randn(16, 2).astype("float32")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.matmul(codes, weights) - batch) ** 2)
    tuner.apply_gradients([(tape.gradient(loss, weights), weights)])
    return codes
"""


def test_numpy_draw_cast_with_astype_rewrites_the_whole_line(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, LATENT)
    assert "`np.random.randn(...)` in `latent_step`" in text, text
    fix = last_code(text)
    assert fix == "codes = tf.random.normal([16, 2])", text
    fixed = LATENT.replace('codes = np.random.randn(16, 2).astype("float32")', fix)
    assert notes_of(kernel, fixed) == []
    check = """first = latent_step(tf.zeros((16, 1))).numpy()
print(bool((first != latent_step(tf.zeros((16, 1))).numpy()).any()))"""
    assert printed(kernel, check) == "True"


HELPER = """def scatter(count):
    return np.random.normal(0.0, 1.0, (count, 2))

def fresh_points(count):
    return tf.cast(scatter(count), tf.float32)

@tf.function
def spread_points():
    return fresh_points(5)
"""


def test_draw_in_a_helper_the_tf_function_calls(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, HELPER)
    assert text.startswith(
        "`spread_points` calls `fresh_points`, which calls `scatter` while TensorFlow traces"
    ), text
    assert "`np.random.normal(...)` in `scatter`" in text, text
    fix = last_code(text)
    assert fix == "return tf.random.normal((count, 2), 0.0, 1.0)", text
    fixed = HELPER.replace("return np.random.normal(0.0, 1.0, (count, 2))", fix)
    assert notes_of(kernel, fixed) == []
    check = "print(bool((spread_points().numpy() != spread_points().numpy()).any()))"
    assert printed(kernel, check) == "True"


WRAPPED = """class Stepper(tf.Module):
    def __init__(self):
        self.steps = 0
        self.weight = tf.Variable(1.0)

    @tf.function
    def step(self, x):
        self.steps += 1
        self.weight.assign_sub(0.1 * tf.reduce_mean(x))
        return self.weight

def plain_update(x):
    print("update", x)
    return x * 2.0

update = tf.function(plain_update)
"""


def test_tf_function_methods_and_wrapped_functions(kernel: KernelSession) -> None:
    texts = notes_of(kernel, WRAPPED)
    assert any(t.startswith("`print(...)` in `plain_update` runs only while") for t in texts)
    assert not any("self.steps" in t for t in texts), texts  # no instance to read yet
    calls = "for _ in range(3):\n    update(tf.constant(1.0))"
    report = checked_report(run(kernel, calls))
    assert not any("print(...)" in n["text"] for n in report["notes"]), report


LOOKALIKES = [
    # Drawn by TensorFlow inside the graph.
    """@tf.function
def spread(batch):
    return batch + tf.random.normal(tf.shape(batch), stddev=0.1)
""",
    # A seeded tf.random.Generator draws inside the graph.
    """picker = tf.random.Generator.from_seed(4)

@tf.function
def pick(batch):
    return batch * picker.uniform(tf.shape(batch))
""",
    # Seeding draws nothing.
    """@tf.function
def seeded_sum(batch):
    np.random.seed(0)
    return tf.reduce_sum(batch)
""",
    # NumPy on Python constants only.
    """@tf.function
def circle(radius):
    return np.pi * radius * np.float32(2.0)
""",
    # A helper run by tf.numpy_function draws at every call.
    """def shake_rows(batch):
    return (batch + np.random.normal(0.0, 0.1, batch.shape)).astype("float32")

@tf.function
def shaken(batch):
    return tf.numpy_function(shake_rows, [batch], tf.float32)
""",
    # A plain Python function draws every call.
    """def plain_noise(batch):
    return batch + np.random.normal(0.0, 0.1, batch.shape)
""",
    # A seeded generator drawn in call.
    """class Shake(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seeds = keras.random.SeedGenerator(3)

    def call(self, x):
        return x + keras.random.normal(ops.shape(x), stddev=0.1, seed=self.seeds)
""",
    # Weights made with add_weight; a fixed random projection used in a matmul.
    """class Project(layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")
        self.basis = tf.random.normal((input_shape[-1], 4))

    def call(self, x):
        return tf.matmul(x * self.scale, self.basis)
""",
]


@pytest.mark.parametrize("cell", LOOKALIKES)
def test_correct_definitions_stay_silent(kernel: KernelSession, cell: str) -> None:
    assert notes_of(kernel, cell) == []


# ------------------------------------------------------------------ Keras classes
CALLED = """class Jolt(layers.Layer):
    def call(self, x):
        print("tracing Jolt")
        return x + np.random.normal(0.0, 0.2)
"""


def test_layer_call_print_and_draw_told_at_definition(kernel: KernelSession) -> None:
    texts = notes_of(kernel, CALLED)
    assert len(texts) == 2, texts
    assert all(t.startswith("fit, evaluate and predict run `Jolt.call` as a graph") for t in texts)
    draw = next(t for t in texts if "np.random.normal" in t)
    fix = last_code(draw)
    assert fix == "return x + tf.random.normal([], 0.0, 0.2)", draw
    assert any("Use `tf.print(...)`" in t for t in texts), texts
    fixed = CALLED.replace("return x + np.random.normal(0.0, 0.2)", fix).replace(
        'print("tracing Jolt")', 'tf.print("tracing Jolt")'
    )
    assert notes_of(kernel, fixed) == []
    predicted = """jolted = keras.Sequential([keras.Input((3,)), Jolt()])
first = jolted.predict(rows, batch_size=16, verbose=0)
second = jolted.predict(rows, batch_size=16, verbose=0)
print(bool((first != second).any()))"""
    execution = run(kernel, predicted)
    assert execution.stdout.strip().splitlines()[-1] == "True"


STEP = """class Tracked(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        print("step loss", loss)
        return {"loss": loss}
"""


def test_train_step_print_told_once(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, STEP)
    assert "`print(...)` in `Tracked.train_step`" in text, text
    fit = """inputs = keras.Input((3,))
tracked = Tracked(inputs, layers.Dense(1)(inputs))
tracked.compile(optimizer="sgd", loss="mse")
tracked.fit(rows, targets, batch_size=32, epochs=1, verbose=0)"""
    report = checked_report(run(kernel, fit))
    assert not any("print(...)" in n["text"] for n in report["notes"]), report


NOISY = """class Reparam(layers.Layer):
    def __init__(self, width, **kwargs):
        super().__init__(**kwargs)
        self.jolt = keras.random.normal((1, width), stddev=0.5, seed=7)

    def call(self, inputs):
        centre, log_var = inputs
        return centre + ops.exp(0.5 * log_var) * self.jolt
"""
MASKED = """class FixedDrop(layers.Layer):
    def build(self, input_shape):
        self.keep = tf.random.uniform((input_shape[-1],), 0.0, 2.0)

    def call(self, x):
        return x * self.keep
"""


def test_noise_drawn_once_in_init_keras(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, NOISY)
    assert text.startswith("`Reparam.__init__` draws `self.jolt` once"), text
    first = re.findall(r"`([^`]+)`", text.split("replace that line with", 1)[1])[0]
    second = re.findall(r"`([^`]+)`", text.split("in `call` write", 1)[1])[0]
    assert first == "self.seed_generator = keras.random.SeedGenerator(1)", text
    assert second == (
        "jolt = keras.random.normal(ops.shape(log_var), stddev=0.5, seed=self.seed_generator)"
    ), text
    fixed = (
        NOISY.replace("self.jolt = keras.random.normal((1, width), stddev=0.5, seed=7)", first)
        .replace("        return centre", f"        {second}\n        return centre")
        .replace("* self.jolt", "* jolt")
    )
    assert notes_of(kernel, fixed) == []
    check = """layer = Reparam(2)
centre = tf.zeros((4, 2)); log_var = tf.zeros((4, 2))
a = layer([centre, log_var]).numpy(); b = layer([centre, log_var]).numpy()
print(bool((a != b).any()), bool((a[0] != a[1]).any()))"""
    assert printed(kernel, check) == "True True"


def test_mask_drawn_once_in_build_tf(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, MASKED)
    assert text.startswith("`FixedDrop.build` draws `self.keep` once"), text
    statement = re.findall(r"`([^`]+)`", text.split("in `call` write", 1)[1])[0]
    assert statement == "keep = tf.random.uniform(tf.shape(x), 0.0, 2.0)", text
    fixed = MASKED.replace(
        "        self.keep = tf.random.uniform((input_shape[-1],), 0.0, 2.0)\n", "        pass\n"
    ).replace("        return x * self.keep", f"        {statement}\n        return x * keep")
    assert notes_of(kernel, fixed) == []
    check = """drop = FixedDrop()
ones = tf.ones((2, 3))
print(bool((drop(ones).numpy() != drop(ones).numpy()).any()))"""
    assert printed(kernel, check) == "True"


RAW = """class Gain(layers.Layer):
    def build(self, input_shape):
        self.gain = tf.Variable(tf.random.normal((input_shape[-1],), stddev=0.1), name="gain")

    def call(self, x):
        return x * self.gain
"""


def test_raw_variable_told_at_definition_not_again_at_fit(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, RAW)
    assert text.startswith("`Gain.build` keeps `self.gain` as a raw `tf.Variable`"), text
    fix = last_code(text)
    assert fix == (
        "self.gain = self.add_weight(shape=(input_shape[-1],), "
        'initializer=keras.initializers.RandomNormal(stddev=0.1), name="gain")'
    ), text
    fit = """gained = keras.Sequential([keras.Input((3,)), Gain(), layers.Dense(1)])
gained.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
before = gained.layers[0].gain.numpy().copy()
gained.fit(rows, targets, batch_size=16, epochs=2, verbose=0)
print(bool((before != gained.layers[0].gain.numpy()).any()))"""
    execution = run(kernel, fit)
    fit_notes = [n["text"] for n in checked_report(execution)["notes"]]
    assert execution.stdout.strip() == "False"
    # Told once, where the class is defined: the fit does not repeat it.
    assert not any("gain" in t for t in fit_notes), fit_notes
    fixed = RAW.replace(
        'self.gain = tf.Variable(tf.random.normal((input_shape[-1],), stddev=0.1), name="gain")',
        fix,
    )
    assert notes_of(kernel, fixed) == []
    assert printed(kernel, fit).splitlines()[-1] == "True"


def test_raw_constant_variable_in_init(kernel: KernelSession) -> None:
    cell = """class Temper(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.heat = tf.Variable(2.0)

    def call(self, x):
        return x / self.heat
"""
    [text] = notes_of(kernel, cell)
    fix = last_code(text)
    assert fix == (
        "self.heat = self.add_weight(shape=(), initializer=keras.initializers.Constant(2.0))"
    ), text
    assert notes_of(kernel, cell.replace("self.heat = tf.Variable(2.0)", fix)) == []
    assert printed(kernel, "print(len(Temper().trainable_weights))") == "1"


# ------------------------------------------------------------------ Dataset.map helpers
GRAIN = """def add_grain(image):
    return image + np.random.normal(0.0, 0.05, (3,))

def lift(features, label):
    return add_grain(features), label
"""
MAPPED = "grainy = tf.data.Dataset.from_tensor_slices((rows, targets)).map(lift)"


def test_draw_in_a_helper_of_a_dataset_map_function(kernel: KernelSession) -> None:
    # A plain function may run eagerly, drawing every call: nothing is certain yet.
    assert notes_of(kernel, GRAIN) == []
    texts = notes_of(kernel, MAPPED)
    [text] = [t for t in texts if "add_grain" in t]
    assert text.startswith("`lift` calls `add_grain`, so its Python runs while"), text
    fix = last_code(text)
    assert fix == "return image + tf.random.normal((3,), 0.0, 0.05)", text
    fixed = GRAIN.replace("return image + np.random.normal(0.0, 0.05, (3,))", fix)
    assert notes_of(kernel, fixed) == []
    assert [t for t in notes_of(kernel, MAPPED) if "add_grain" in t] == []
    # Each element now gets its own noise (before, every element got the same).
    check = """noise = [x.numpy() - r for (x, _), r in zip(grainy.take(2), rows[:2])]
print(bool(np.abs(noise[0] - noise[1]).max() > 1e-4))"""
    assert printed(kernel, check) == "True"


# ------------------------------------------------------------------ variables made per call
RIDGE = """class Ridge(tf.Module):
    def __call__(self, x):
        self.coef = tf.Variable(tf.zeros((x.shape[-1], 1)))
        self.shift = tf.Variable(0.0)
        return x @ self.coef + self.shift
"""
LOOP = """ridge = Ridge()
for step in range(40):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((ridge(rows) - targets) ** 2)
    grads = tape.gradient(loss, ridge.trainable_variables)
    for v, g in zip(ridge.trainable_variables, grads):
        v.assign_sub(0.1 * g)
print(float(loss) < 1.0)"""


def test_variables_created_on_every_call_told_at_definition(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, RIDGE)
    assert text.startswith(
        "`Ridge.__call__` creates `self.coef`, `self.shift` with `tf.Variable` on every call"
    ), text
    guard = re.findall(r"put `([^`]+)`", text)[0]
    assert guard == "if not hasattr(self, 'coef'):", text
    execution = run(kernel, LOOP)
    assert execution.stdout.strip() == "False"
    told = [n["text"] for n in checked_report(execution)["notes"] if "Ridge" in n["text"]]
    assert told == [], told  # told once, where the class is defined
    lines = RIDGE.split("\n")
    fixed = "\n".join(
        [*lines[:2], f"        {guard}", *("    " + line for line in lines[2:4]), *lines[4:]]
    )
    assert notes_of(kernel, fixed) == []
    assert printed(kernel, LOOP) == "True"
