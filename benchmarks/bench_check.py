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

The other ``--mode`` values time the command line as a user runs it (the ``tfcoach``
script next to this interpreter, else ``python -m jupyterlab_tfcoach.cli``), median wall times of
``--cli-runs`` runs after a warm-up, each with its ratio and target (issue 13):

- ``startup``: ``tfcoach check`` on one small ``.py`` file and on one notebook, with and
  without the cache, against a bare ``python -c "import ast, json"``: <= 5x.
- ``cli``: a cold ``tfcoach check --no-cache`` on the large generated file against
  ``ruff check --no-cache`` on it: <= 6x.
- ``tree``: a generated tree of ``--py-files`` modules (300) and ``--notebooks`` notebooks
  (100): tfcoach and ruff each with their default cache, warm (filled) and cold (deleted
  before each run), and tfcoach cold with ``--jobs 1`` (no process pool): warm <= 10x ruff.
- ``all``: every mode, ``analysis`` first.

    python benchmarks/bench_check.py --mode tree [--py-files 300] [--notebooks 100] [--cli-runs 5]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
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


# ---------------------------------------------------------------------------
# The command line, as a user runs it: start-up, one large file, a whole tree.


def tfcoach_command() -> list[str]:
    """The ``tfcoach`` console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("tfcoach")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "jupyterlab_tfcoach.cli"]


# Commands run with bytecode caching on, as after a ``pip install`` (which compiles every
# module), but with the .pyc files kept in a temporary folder, not in the checkout: an
# environment with PYTHONDONTWRITEBYTECODE=1 would otherwise compile each module on every
# start and time the compiler.
COMMAND_ENV: dict[str, str] = {
    name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"
}


def run_quietly(command: list[str], cwd: Path) -> None:
    """Run a linter; exit 1 means findings, anything else above that a crash."""
    completed = subprocess.run(command, cwd=cwd, env=COMMAND_ENV, capture_output=True, check=False)
    if completed.returncode not in (0, 1):
        raise RuntimeError(f"{command}: {completed.stderr.decode(errors='replace')}")


def command_timings(
    command: list[str], cwd: Path, runs: int, before: Callable[[], None]
) -> list[float]:
    """Wall times of ``runs`` runs of ``command``, after one warm-up; ``before`` runs
    (untimed) ahead of each, e.g. to delete a cache for cold runs."""
    before()
    run_quietly(command, cwd)  # warm-up: the OS file cache, .pyc files
    durations = []
    for _ in range(runs):
        before()
        start = time.perf_counter()
        run_quietly(command, cwd)
        durations.append(time.perf_counter() - start)
    return durations


def report_ratio(
    label: str, ours: list[float], theirs: list[float], target: float | None = None
) -> None:
    ratio = statistics.median(ours) / statistics.median(theirs)
    if target is None:
        print(f"{label}: {ratio:.2f}x (medians)")
        return
    verdict = "within" if ratio <= target else "ABOVE"
    print(f"{label}: {ratio:.2f}x (medians; target <= {target:g}x: {verdict})")


def notebook_json(cells: list[str]) -> str:
    """A minimal nbformat 4.5 notebook of code cells, each after a markdown cell."""
    body = []
    for index, source in enumerate(cells):
        body.append(
            {
                "cell_type": "markdown",
                "id": f"m{index}",
                "metadata": {},
                "source": f"## Part {index}",
            }
        )
        body.append(
            {
                "cell_type": "code",
                "id": f"c{index}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source.strip("\n").splitlines(keepends=True),
            }
        )
    metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": body}
    return json.dumps(notebook, indent=1) + "\n"


def generate_notebook(seed: int, chunks: int = 6) -> str:
    chooser = random.Random(seed)
    cells = [HEADER]
    for offset in range(chunks):
        template = chooser.choice(TEMPLATES)
        cells.append(template.format(i=seed * 100 + offset))
    return notebook_json(cells)


def generate_tree(root: Path, python_files: int, notebooks: int) -> int:
    """``python_files`` modules of 60-250 lines and ``notebooks`` notebooks in nested
    folders, all different; returns the number of Python lines (notebook cells included)."""
    chooser = random.Random(1)
    lines = 0
    for index in range(python_files):
        folder = root / f"package_{index % 10}" / f"sub_{index % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        source = generate_source(chooser.randint(60, 250), seed=index)
        (folder / f"module_{index}.py").write_text(source, encoding="utf-8")
        lines += source.count("\n")
    for index in range(notebooks):
        folder = root / "notebooks" / f"topic_{index % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        text = generate_notebook(index)
        (folder / f"lesson_{index}.ipynb").write_text(text, encoding="utf-8")
        lines += sum("".join(cell["source"]).count("\n") + 1 for cell in json.loads(text)["cells"])
    return lines


def remover(path: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(path, ignore_errors=True)


def nothing() -> None:
    return None


def bench_startup(runs: int) -> None:
    """``tfcoach check`` on one small file and one notebook against bare Python."""
    tfcoach = tfcoach_command()
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "one.py").write_text(HEADER + TEMPLATES[2].format(i=0), encoding="utf-8")
        (folder / "one.ipynb").write_text(generate_notebook(0, chunks=3), encoding="utf-8")
        bare = command_timings([sys.executable, "-c", "import ast, json"], folder, runs, nothing)
        print(f"python -c 'import ast, json':          {describe(bare)}")
        for name in ("one.py", "one.ipynb"):
            for flags in ([], ["--no-cache"]):
                command = [*tfcoach, "check", *flags, name]
                durations = command_timings(command, folder, runs, nothing)
                label = " ".join(["tfcoach check", *flags, name])
                print(f"{label + ':':<39} {describe(durations)}")
                report_ratio("  ratio to bare Python", durations, bare, 5)


# Python's own parse of the file: no tool written in Python can start below this.
PARSE_ONLY = (
    "import ast, gc, sys; gc.disable(); ast.parse(open(sys.argv[1], encoding='utf-8').read())"
)


def bench_cli_large_file(source: str, runs: int, ruff: str | None) -> None:
    """A cold ``tfcoach check --no-cache`` on the large file against ruff's."""
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "generated_training.py").write_text(source, encoding="utf-8")
        command = [*tfcoach_command(), "check", "--no-cache", "generated_training.py"]
        ours = command_timings(command, folder, runs, nothing)
        print(f"tfcoach check --no-cache (large file): {describe(ours)}")
        if ruff is None:
            print("ruff not found: no comparison")
            return
        ruff_command = [
            ruff,
            "check",
            "--no-cache",
            "--isolated",
            "--quiet",
            "generated_training.py",
        ]
        theirs = command_timings(ruff_command, folder, runs, nothing)
        print(f"ruff check --no-cache (large file):    {describe(theirs)}")
        report_ratio("ratio tfcoach / ruff, cold, one large file", ours, theirs, 6)
        # Where the time goes: what any Python tool pays before its first rule runs.
        print("the floor under any Python checker, as multiples of ruff's run:")
        for label, code in (
            ("python -c 'import ast, json'", "import ast, json"),
            ("  + ast.parse of the file (GC off)", PARSE_ONLY),
            ("  + importing the CLI and its rules", "import jupyterlab_tfcoach.cli; " + PARSE_ONLY),
        ):
            floor = command_timings(
                [sys.executable, "-c", code, "generated_training.py"], folder, runs, nothing
            )
            report_ratio(f"  {label}: {statistics.median(floor) * 1000:.1f} ms", floor, theirs)


def bench_tree(python_files: int, notebooks: int, runs: int, ruff: str | None) -> None:
    """A tree of modules and notebooks: cold (cache deleted before each run) and warm
    (default cache, filled), tfcoach against ruff with its own default cache."""
    with tempfile.TemporaryDirectory() as directory:
        tree = Path(directory)
        lines = generate_tree(tree, python_files, notebooks)
        print(f"tree: {python_files} .py files and {notebooks} notebooks, {lines:,} lines")
        tfcoach = [*tfcoach_command(), "check", "."]
        ours_cold = command_timings(tfcoach, tree, runs, remover(tree / ".tfcoach_cache"))
        ours_warm = command_timings(tfcoach, tree, runs, nothing)
        serial = [*tfcoach_command(), "check", "--jobs", "1", "."]
        ours_serial = command_timings(serial, tree, runs, remover(tree / ".tfcoach_cache"))
        print(f"tfcoach check, cold:                   {describe(ours_cold)}")
        print(f"tfcoach check, cold, --jobs 1:         {describe(ours_serial)}")
        print(f"tfcoach check, warm cache:             {describe(ours_warm)}")
        if ruff is None:
            print("ruff not found: no comparison")
            return
        ruff_command = [ruff, "check", "--isolated", "--quiet", "."]
        theirs_cold = command_timings(ruff_command, tree, runs, remover(tree / ".ruff_cache"))
        theirs_warm = command_timings(ruff_command, tree, runs, nothing)
        print(f"ruff check, cold:                      {describe(theirs_cold)}")
        print(f"ruff check, warm cache:                {describe(theirs_warm)}")
        report_ratio("ratio tfcoach / ruff, warm caches", ours_warm, theirs_warm, 10)
        report_ratio("ratio tfcoach / ruff, cold", ours_cold, theirs_cold)
        report_ratio("speed-up of the process pool, cold", ours_serial, ours_cold)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mode",
        choices=("analysis", "cli", "startup", "tree", "all"),
        default="analysis",
        help="analysis: analyze_source in-process (default); cli: a cold `tfcoach check "
        "--no-cache` on the large file; startup: one small file and one notebook against bare "
        "Python; tree: a whole tree, cold and warm cache; all: every one",
    )
    parser.add_argument("--lines", type=int, default=5000, help="size of the generated file")
    parser.add_argument("--runs", type=int, default=10, help="timed analysis runs")
    parser.add_argument("--ruff-runs", type=int, default=5, help="timed ruff runs")
    parser.add_argument("--cli-runs", type=int, default=5, help="timed runs of each command")
    parser.add_argument("--py-files", type=int, default=300, help="tree mode: .py files")
    parser.add_argument("--notebooks", type=int, default=100, help="tree mode: notebooks")
    parser.add_argument("--keep", type=Path, help="also write the generated file here")
    parser.add_argument("--against", metavar="REV", help="also compare with a git revision")
    args = parser.parse_args(argv)

    bytecode = tempfile.TemporaryDirectory()
    COMMAND_ENV["PYTHONPYCACHEPREFIX"] = bytecode.name
    source = generate_source(args.lines)
    if args.keep:
        args.keep.write_text(source, encoding="utf-8")
    ruff = find_ruff()
    modes = ("analysis", "cli", "startup", "tree") if args.mode == "all" else (args.mode,)
    for mode in modes:
        if len(modes) > 1:
            print(f"\n== {mode}")
        if mode == "analysis":
            bench_analysis(source, args.runs, args.ruff_runs, args.against, ruff)
        elif mode == "cli":
            bench_cli_large_file(source, args.cli_runs, ruff)
        elif mode == "startup":
            bench_startup(args.cli_runs)
        else:
            bench_tree(args.py_files, args.notebooks, args.cli_runs, ruff)
    bytecode.cleanup()
    return 0


def bench_analysis(
    source: str, runs: int, ruff_runs: int, against: str | None, ruff: str | None
) -> None:
    """``analyze_source`` in this process against ``ruff check --no-cache`` (issue 3)."""
    # Imported here so `--help` works without the package on the path.
    from jupyterlab_tfcoach.analysis import analyze_source

    line_count = source.count("\n")
    findings = analyze_source(source)  # warm-up: imports, caches, course parsing
    analysis_times = timings(lambda: analyze_source(source), runs)
    codes = sorted({finding.code for finding in findings})
    print(f"generated file: {line_count} lines, {len(source):,} characters")
    print(f"findings: {len(findings)} ({', '.join(codes) or 'none'})")
    print(f"tfcoach analyze_source: {describe(analysis_times)}")
    if against:
        compare(source, analyze_source, against, runs)

    if ruff is None:
        print("ruff check --no-cache: ruff not found, no comparison")
        return
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
        ruff_times = timings(run_ruff, ruff_runs)
    print(f"ruff check --no-cache:  {describe(ruff_times)}")
    ratio = statistics.median(analysis_times) / statistics.median(ruff_times)
    print(f"ratio tfcoach / ruff:   {ratio:.2f}x (medians)")


if __name__ == "__main__":
    sys.exit(main())
