"""How fast is ``analyze_source`` on a large TensorFlow file, compared with ruff?

Generates a ~5,000-line TensorFlow-style module (models, ``tf.function``
training steps, tapes, variables, data pipelines and a realistic share of
pitfalls), then prints, from one run:

- the median in-process time of ``analyze_source`` over ``--runs`` runs,
- the median wall time of ``ruff check --no-cache`` on the same file
  (a subprocess, so it includes ruff's start-up, as a user would see it),
- their ratio.

Targets (issue 3): analysis <= 150 ms and <= 3x ruff.

``--against REV`` also times the analysis package as it was at git revision ``REV`` (a
copy under another package name), alternating runs of the two in this process, and
prints the ratio: a busy or throttled machine slows both alike, where two separate
runs minutes apart can differ by 20%.

    python benchmarks/bench_check.py [--lines 5000] [--runs 10] [--keep FILE] [--against REV]
"""

from __future__ import annotations

import argparse
import importlib
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HEADER = '''"""Generated benchmark module: TensorFlow training code with a mix of pitfalls."""

import math
import os

import numpy as np
import tensorflow as tf
from tensorflow import keras

AUTOTUNE = tf.data.AUTOTUNE
LEARNING_RATE = 0.001
'''

# Each template is one plausible chunk of a training codebase; ``{i}`` makes the
# names unique per copy, so the analyser cannot share work between copies.
TEMPLATES: tuple[str, ...] = (
    # A Keras layer with guarded lazy variable creation (correct).
    '''

class ScaledDense{i}(keras.layers.Layer):
    """Dense layer with a learned output scale."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.scale = None

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    @tf.function
    def call(self, inputs):
        if self.scale is None:
            self.scale = tf.Variable(1.0, name="scale")
        return self.scale * (tf.matmul(inputs, self.kernel) + self.bias)
''',
    # A custom training step with a tape, written correctly.
    """

model_{i} = keras.Sequential([keras.Input((16,)), keras.layers.Dense(8), keras.layers.Dense(1)])
optimizer_{i} = keras.optimizers.Adam(LEARNING_RATE)
loss_fn_{i} = keras.losses.MeanSquaredError()


@tf.function(input_signature=[tf.TensorSpec([None, 16], tf.float32), tf.TensorSpec([None, 1])])
def train_step_{i}(features, labels):
    with tf.GradientTape() as tape:
        predictions = model_{i}(features, training=True)
        loss = loss_fn_{i}(labels, predictions)
    gradients = tape.gradient(loss, model_{i}.trainable_variables)
    optimizer_{i}.apply_gradients(zip(gradients, model_{i}.trainable_variables))
    tf.print("loss", loss)
    return loss
""",
    # Pitfalls: print and a Python side effect in a tf.function, an unrolled loop.
    """

trace_log_{i} = []


@tf.function
def noisy_step_{i}(x, steps):
    print("tracing noisy_step_{i}", x.shape)
    trace_log_{i}.append(x)
    total = tf.zeros_like(x)
    for k in range(8):
        total = total + x * k
    return total / steps
""",
    # Pitfall: a variable rebound to a tensor by manual SGD.
    """

w_{i} = tf.Variable(tf.random.normal([4, 4]), name="w_{i}")
b_{i} = tf.Variable(tf.zeros([4]), name="b_{i}")


def manual_sgd_{i}(x, y, epochs=3):
    global w_{i}
    for epoch in range(epochs):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, w_{i}) + b_{i}
            loss = tf.reduce_mean(tf.square(logits - y))
        grad_w, grad_b = tape.gradient(loss, [w_{i}, b_{i}])
        w_{i} = w_{i} - LEARNING_RATE * grad_w
        b_{i}.assign_sub(LEARNING_RATE * grad_b)
    return loss
""",
    # Pitfalls: tape reused; unwatched constant; mixed dtypes.
    """

def sensitivities_{i}(model, images):
    inputs = tf.constant(np.random.rand(4, 16).astype("float32"))
    with tf.GradientTape() as tape:
        outputs = model(inputs)
        penalty = tf.reduce_sum(tf.square(outputs))
    d_outputs = tape.gradient(outputs, inputs)
    d_penalty = tape.gradient(penalty, model.trainable_variables)
    counts = tf.constant([1, 2, 3])
    weights = tf.constant([0.5, 0.25, 0.25])
    weighted = counts * weights
    return d_outputs, d_penalty, weighted
""",
    # Correct: persistent tape released, tape.watch, tf.cast.
    """

def jacobians_{i}(x):
    x = tf.convert_to_tensor(x, dtype=tf.float32)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(x) * tf.cos(x)
        z = tf.reduce_sum(y * y)
    dy = tape.gradient(y, x)
    dz = tape.gradient(z, x)
    del tape
    indices = tf.range(tf.shape(x)[0])
    return dy + dz + tf.cast(indices, tf.float32)
""",
    # Pitfalls: retrace-prone calls with Python numbers, .numpy() in a graph,
    # a variable created in a tf.function, a fixed batch size in a signature.
    """

@tf.function
def power_{i}(x, exponent):
    return tf.pow(x, exponent)


def run_powers_{i}(x):
    results = [power_{i}(x, 2), power_{i}(x, 3)]
    for n in range(5):
        results.append(power_{i}(x, n))
    return results


@tf.function
def summarise_{i}(x):
    state = tf.Variable(0.0)
    state.assign_add(tf.reduce_sum(x))
    return x.numpy().mean() + state


@tf.function(input_signature=[tf.TensorSpec([32, 28, 28, 1], tf.float32)])
def classify_{i}(images):
    return tf.reduce_max(images, axis=[1, 2, 3])
""",
    # A tf.data pipeline and plain Python helpers (no TensorFlow pitfalls).
    """

def make_dataset_{i}(paths, labels, batch_size=64):
    def parse(path, label):
        image = tf.io.decode_png(tf.io.read_file(path), channels=1)
        image = tf.image.resize(image, [28, 28]) / 255.0
        return image, label

    return (
        tf.data.Dataset.from_tensor_slices((paths, labels))
        .shuffle(1024)
        .map(parse, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )


def cosine_schedule_{i}(step, total_steps, base=LEARNING_RATE):
    progress = min(step / max(total_steps, 1), 1.0)
    return base * 0.5 * (1.0 + math.cos(math.pi * progress))


def list_images_{i}(root):
    found = []
    for directory, _subdirs, names in os.walk(root):
        for name in sorted(names):
            if name.endswith((".png", ".jpg")):
                found.append(os.path.join(directory, name))
    return found
""",
    # A tf.Module with counters kept in variables and a graph loop (correct).
    """

class RunningMean{i}(tf.Module):
    def __init__(self):
        super().__init__()
        self.total = tf.Variable(0.0, trainable=False)
        self.count = tf.Variable(0, trainable=False)

    @tf.function
    def update(self, values):
        for value in tf.range(tf.size(values)):
            self.total.assign_add(tf.gather(values, value))
        self.count.assign_add(tf.size(values))
        return self.total / tf.cast(self.count, tf.float32)
""",
)


def generate_source(target_lines: int, seed: int = 0) -> str:
    """A deterministic module of about ``target_lines`` lines."""
    chooser = random.Random(seed)
    parts = [HEADER]
    line_count = HEADER.count("\n")
    index = 0
    while line_count < target_lines:
        # Cycle through every template, shuffled per round, so the mix is
        # stable whatever the size while the order still varies.
        round_templates = list(TEMPLATES)
        chooser.shuffle(round_templates)
        for template in round_templates:
            chunk = template.format(i=index)
            parts.append(chunk)
            line_count += chunk.count("\n")
            index += 1
            if line_count >= target_lines:
                break
    return "".join(parts)


def timings(action: Callable[[], object], runs: int) -> list[float]:
    durations = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        durations.append(time.perf_counter() - start)
    return durations


def describe(durations: list[float]) -> str:
    # The median is the figure; the best run shows how much a busy machine added.
    return (
        f"{statistics.median(durations) * 1000:.1f} ms "
        f"(median of {len(durations)}, best {min(durations) * 1000:.1f} ms)"
    )


def load_revision(revision: str, directory: Path) -> Callable[[str], object]:
    """``analyze_source`` of ``jupyterlab_tfcoach`` at git ``revision``, imported from a
    copy in ``directory`` renamed ``tfcoach_at_revision`` (so both versions coexist)."""
    repository = Path(__file__).resolve().parent.parent
    package = directory / "tfcoach_at_revision"
    listing = subprocess.run(
        [
            "git",
            "-C",
            str(repository),
            "ls-tree",
            "-r",
            "--name-only",
            revision,
            "jupyterlab_tfcoach",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in listing:
        if not name.endswith(".py"):
            continue  # only the Python modules are imported
        text = subprocess.run(
            ["git", "-C", str(repository), "show", f"{revision}:{name}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        target = package / Path(name).relative_to("jupyterlab_tfcoach")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(re.sub(r"\bjupyterlab_tfcoach\b", "tfcoach_at_revision", text))
    sys.path.insert(0, str(directory))
    module = importlib.import_module("tfcoach_at_revision.analysis")
    return module.analyze_source  # type: ignore[no-any-return]


def compare(source: str, current: Callable[[str], object], revision: str, runs: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        baseline = load_revision(revision, Path(directory))
        baseline(source)  # warm-up
        baseline_times, current_times = [], []
        for _ in range(runs):
            baseline_times += timings(lambda: baseline(source), 1)
            current_times += timings(lambda: current(source), 1)
    print(f"analyze_source at {revision}: {describe(baseline_times)}")
    print(f"analyze_source now (same runs, alternating): {describe(current_times)}")
    ratio = statistics.median(current_times) / statistics.median(baseline_times)
    print(f"ratio now / {revision}: {ratio:.3f} (medians)")


def find_ruff() -> str | None:
    """ruff installed next to this interpreter (the project venv), else on PATH."""
    beside_python = Path(sys.executable).with_name("ruff")
    if beside_python.is_file():
        return str(beside_python)
    return shutil.which("ruff")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=5000, help="size of the generated file")
    parser.add_argument("--runs", type=int, default=10, help="timed analysis runs")
    parser.add_argument("--ruff-runs", type=int, default=5, help="timed ruff runs")
    parser.add_argument("--keep", type=Path, help="also write the generated file here")
    parser.add_argument("--against", metavar="REV", help="also compare with a git revision")
    args = parser.parse_args(argv)

    # Imported here so `--help` works without the package on the path.
    from jupyterlab_tfcoach.analysis import analyze_source

    source = generate_source(args.lines)
    if args.keep:
        args.keep.write_text(source, encoding="utf-8")
    line_count = source.count("\n")

    findings = analyze_source(source)  # warm-up: imports, caches, course parsing
    analysis_times = timings(lambda: analyze_source(source), args.runs)
    codes = sorted({finding.code for finding in findings})
    print(f"generated file: {line_count} lines, {len(source):,} characters")
    print(f"findings: {len(findings)} ({', '.join(codes) or 'none'})")
    print(f"tfcoach analyze_source: {describe(analysis_times)}")
    if args.against:
        compare(source, analyze_source, args.against, args.runs)

    ruff = find_ruff()
    if ruff is None:
        print("ruff check --no-cache: ruff not found, no comparison")
        return 0
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "generated_training.py"
        path.write_text(source, encoding="utf-8")
        command = [ruff, "check", "--no-cache", "--isolated", "--quiet", str(path)]

        def run_ruff() -> None:
            # ruff exits 1 when it reports something; only a crash matters here.
            completed = subprocess.run(command, capture_output=True, check=False)
            if completed.returncode not in (0, 1):
                raise RuntimeError(completed.stderr.decode(errors="replace"))

        run_ruff()  # warm-up: the first start pays for loading the binary
        ruff_times = timings(run_ruff, args.ruff_runs)
    print(f"ruff check --no-cache:  {describe(ruff_times)}")
    ratio = statistics.median(analysis_times) / statistics.median(ruff_times)
    print(f"ratio tfcoach / ruff:   {ratio:.2f}x (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
