"""More printed fixes the fix auditor (benchmarks/audit_printed_fixes.py) found wrong,
repaired by mechanism (issue #25). Each fix is applied as a learner would apply it, the cell
runs again in the kernel and gives the right result; the correct look-alike stays silent.

- a static size that is None while tracing: the whole failing statement is printed with
  each unknown size read from ``tf.shape`` (a known size on the same line stays as it is);
- a loop variable that grows in a graph loop: the shape declaration is placed by line;
- an uncompiled model given another object's compile: only a compile that gives a loss
  (and the metrics the result is unpacked into) is copied, written on one line;
- a model of a class without ``get_config`` saved and loaded in the same cell: the
  weights-only save is told as a route, not printed as a one-line fix that cannot work.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_an_unknown_size_is_read_where_the_line_needs_it(kernel: KernelSession) -> None:
    cell = """class Dropper(keras.layers.Layer):
    def call(self, feats):
        keep = tf.ones((feats.shape[0], feats.shape[1])) * 0.5
        return feats * keep

shrinker = keras.Sequential([keras.Input(shape=(5,)), Dropper(), keras.layers.Dense(2)])
shrinker.compile(optimizer="sgd", loss="mse")
shrinker.fit(np.ones((12, 5), "float32"), np.ones((12, 2), "float32"), epochs=1, verbose=0)
"""
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    # The known size (5) stays a static read; only the batch size becomes dynamic.
    assert fix == "keep = tf.ones((tf.shape(feats)[0], feats.shape[1])) * 0.5"
    runs_cleanly(kernel, cell.replace(cell.splitlines()[2].strip(), fix))
    # A whole static shape in a traced function: the statement with tf.shape.
    cell = """@tf.function(input_signature=[tf.TensorSpec((None, 3), tf.float32)])
def centred(rows):
    base = tf.zeros(rows.shape)
    return rows - base

print(centred(tf.ones((4, 3))).shape)
"""
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == "base = tf.zeros(tf.shape(rows))"
    runs_cleanly(kernel, cell.replace("base = tf.zeros(rows.shape)", fix))
    # Look-alike: the dynamic size already, no entry.
    runs_cleanly(
        kernel,
        "@tf.function(input_signature=[tf.TensorSpec((None, 3), tf.float32)])\n"
        "def centred_ok(rows):\n    return rows - tf.zeros(tf.shape(rows))\n"
        "print(centred_ok(tf.ones((4, 3))).shape)",
    )


def test_a_growing_loop_variable_is_declared_by_line(kernel: KernelSession) -> None:
    cell = """@tf.function
def running_squares(limit):
    found = tf.zeros((0,), tf.int32)
    for k in tf.range(limit):
        found = tf.concat([found, [k * k]], 0)
    return found

print(running_squares(tf.constant(5)).numpy().tolist())
"""
    text = failing(kernel, cell)["explanation"]
    assert "before line 5, as the first line of the loop's body" in text
    fix = fix_of(text)
    lines = cell.splitlines()
    lines.insert(4, "        " + fix)
    runs_cleanly(kernel, "\n".join(lines))
    assert value_of(kernel, "running_squares(tf.constant(5)).numpy().tolist()") == [
        0,
        1,
        4,
        9,
        16,
    ]
    # A while loop growing a 2-D value: the same, at its body's first line.
    cell = """@tf.function
def stacked_rows(count):
    rows = tf.zeros((0, 2))
    i = tf.constant(0)
    while i < count:
        rows = tf.concat([rows, tf.ones((1, 2))], axis=0)
        i += 1
    return rows

print(stacked_rows(tf.constant(3)).shape)
"""
    text = failing(kernel, cell)["explanation"]
    assert "before line 6" in text
    fix = fix_of(text)
    lines = cell.splitlines()
    lines.insert(5, "        " + fix)
    runs_cleanly(kernel, "\n".join(lines))
    assert value_of(kernel, "list(stacked_rows(tf.constant(3)).shape)") == [3, 2]


def test_a_compile_is_copied_only_with_its_loss_and_metrics(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """class SelfTrained(keras.Model):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def train_step(self, data):
        return {}

def make_head():
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(3)])

grader = make_head()
grader.compile(
    optimizer=keras.optimizers.SGD(0.01),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
pupil = make_head()
wrapper = SelfTrained(pupil)
wrapper.compile(optimizer="adam")
feats6 = np.random.default_rng(0).normal(size=(40, 6)).astype("float32")
kinds = np.random.default_rng(1).integers(0, 3, size=40)""",
    )
    cell = "err, hit = pupil.evaluate(feats6, kinds, verbose=0)\nprint(round(hit, 3) >= 0)"
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    # Not the wrapper's compile (no loss): the one with a loss and one metric, on one line.
    assert fix == (
        "pupil.compile(optimizer=keras.optimizers.SGD(0.01), "
        "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), "
        'metrics=["accuracy"])'
    )
    runs_cleanly(kernel, f"{fix}\n{cell}")
    # Trained, not unpacked: the newest compile (the shell's, no loss) is passed over for
    # the one that gives a loss.
    runs_cleanly(
        kernel,
        "trainee = make_head()\nshell = SelfTrained(trainee)\nshell.compile(optimizer='sgd')",
    )
    cell = "trainee.fit(feats6, kinds, epochs=1, verbose=0)"
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix.startswith("trainee.compile(optimizer=keras.optimizers.SGD(0.01), loss=")
    runs_cleanly(kernel, f"{fix}\n{cell}")
    # Look-alike: a compiled model evaluates with no entry.
    runs_cleanly(kernel, "a, b = grader.evaluate(feats6, kinds, verbose=0)")


def test_no_one_line_weights_fix_when_the_cell_loads_the_file(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(
        kernel,
        f"""import os
folder = {str(tmp_path)!r}
class Scaler(keras.Model):
    def __init__(self, table):
        super().__init__()
        self.table = table
        self.out = keras.layers.Dense(1)
    def call(self, x):
        return self.out(x * self.table)

scaler = Scaler(tf.constant([1.0, 2.0]))
scaler(np.ones((2, 2), "float32"))""",
    )
    cell = """os.chdir(folder)
scaler.save("scaler.keras")
again = keras.models.load_model("scaler.keras")"""
    text = failing(kernel, cell)["explanation"]
    assert "get_config" in text
    assert "Fix: " not in text
    # Saved alone (no load in the cell): the weights-only save is the fix, and it runs.
    text = failing(kernel, 'scaler.save("scaler_only.keras")')["explanation"]
    fix = fix_of(text)
    assert fix == 'scaler.save_weights("scaler_only.weights.h5")'
    runs_cleanly(kernel, fix)
    assert (tmp_path / "scaler_only.weights.h5").exists()
