"""Per-cell cost of the kernel monitor.

A namespace with 1,000 plain objects, 200 variables, 50 traced tf.functions and
a 50-layer Keras model (fitted once, so its train step exists). Runs 200 cells
that change nothing, 200 cells that each retrace one function and 200 cells that
each train the 50-layer model one step in a custom loop (tape.gradient +
apply_gradients: the optimizer hook, the gradient hook and the namespace diff
all have work), first with the monitor loaded and then without it, in an
in-process IPython shell. Also prints the one-time cost of loading the monitor
after ``import tensorflow`` (hooks and the one heap walk).

Prints, per scenario, the median and p95 of the monitor's own ``monitor_ms``
and of the whole cell's wall time with and without the monitor.
Targets: monitor median <= 1 ms, p95 <= 5 ms; a cell that trained: p95 <= 10 ms.

    .venv/bin/python benchmarks/bench_monitor.py [--cells 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

SETUP = """
import numpy as np
import tensorflow as tf
import keras

tf.get_logger().setLevel("ERROR")  # TF's own retracing warnings would flood the output

plain_objects = [object() for _ in range(1000)]
for _index in range(1000):
    globals()[f"plain_{_index}"] = plain_objects[_index] if _index % 2 else _index
for _index in range(200):
    globals()[f"var_{_index}"] = tf.Variable(float(_index))

def _make(index):
    @tf.function
    def traced(x):
        return x * float(index)
    return traced

for _index in range(50):
    globals()[f"fn_{_index}"] = _make(_index)
    globals()[f"fn_{_index}"](tf.ones([2]))

model = keras.Sequential(
    [keras.Input((8,))] + [keras.layers.Dense(8, name=f"dense_{i}") for i in range(50)]
)
model.compile(optimizer="sgd", loss="mse")
history = model.fit(np.ones((16, 8)), np.ones((16, 8)), epochs=1, verbose=0)
optimizer = keras.optimizers.SGD(0.01)
x_batch = tf.ones((16, 8))
y_batch = tf.ones((16, 8))
"""

TRAIN_CELL = """with tf.GradientTape() as tape:
    loss = tf.reduce_mean((model(x_batch) - y_batch) ** 2)
grads = tape.gradient(loss, model.trainable_variables)
step = optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


KINDS = ("unchanged", "one retrace", "trained")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


Timings = tuple[list[float], list[float], list[float]]


def run_cells(shell: Any, cells: list[str], monitored: bool) -> Timings:
    """Wall time per cell, the report's monitor_ms, and the monitor's CPU time.

    CPU time (``thread_time``) shows the monitor's own work without the waits a
    busy machine adds to wall-clock figures.
    """
    from jupyterlab_tfcoach.monitor import last_report
    from jupyterlab_tfcoach.monitor.extension import current_monitor

    wall_ms: list[float] = []
    monitor_ms: list[float] = []
    cpu_ms: list[float] = []
    monitor = current_monitor()
    if monitored and monitor is not None:
        build_report = monitor.build_report

        def timed_build_report(result: Any) -> dict[str, Any]:
            started = time.thread_time()
            try:
                return build_report(result)
            finally:
                cpu_ms.append((time.thread_time() - started) * 1000.0)

        monitor.build_report = timed_build_report  # type: ignore[method-assign]
    for cell in cells:
        started = time.perf_counter()
        shell.run_cell(cell, store_history=True)
        wall_ms.append((time.perf_counter() - started) * 1000.0)
        if monitored:
            report = last_report()
            assert report is not None
            monitor_ms.append(report["monitor_ms"])
    if monitored and monitor is not None:
        del monitor.build_report
    return wall_ms, monitor_ms, cpu_ms


def scenario_cells(kind: str, count: int, shape_offset: int) -> list[str]:
    if kind == "unchanged":
        return ["pass"] * count
    if kind == "trained":
        return [TRAIN_CELL] * count
    # Each cell calls one function with a shape it has never seen: exactly one retrace.
    return [f"_ = fn_{i % 50}(tf.ones([{shape_offset + i}]))" for i in range(count)]


def line(label: str, values: list[float]) -> str:
    return (
        f"  {label:<34} median {statistics.median(values):7.3f} ms   "
        f"p95 {percentile(values, 0.95):7.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=200)
    args = parser.parse_args()

    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    # IPython's SQLite history thread contends for a lock in every cell; keep its
    # noise out of the wall-time columns (the monitor does not touch history).
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    setup = shell.run_cell(SETUP, store_history=True)
    setup.raise_error()
    started = time.perf_counter()
    shell.run_line_magic("load_ext", "jupyterlab_tfcoach")
    load_ms = (time.perf_counter() - started) * 1000.0
    shell.run_cell("pass", store_history=True)  # first cell after loading: baseline
    from jupyterlab_tfcoach.monitor import last_report

    first = last_report()
    first_ms = first["monitor_ms"] if first else float("nan")
    shell.run_cell(TRAIN_CELL, store_history=True)  # the optimizer builds its slots once

    results: dict[tuple[str, bool], Timings] = {}
    for monitored, offset in ((True, 10), (False, 10 + 2 * args.cells)):
        if not monitored:
            shell.run_line_magic("unload_ext", "jupyterlab_tfcoach")
        for kind in KINDS:
            cells = scenario_cells(kind, args.cells, offset)
            results[(kind, monitored)] = run_cells(shell, cells, monitored)

    print(
        f"namespace: 1,000 plain objects, 200 variables, 50 traced functions, "
        f"50-layer Keras model; {args.cells} cells per scenario"
    )
    print(
        f"one-time cost with TensorFlow imported: %load_ext {load_ms:.1f} ms, "
        f"first report {first_ms:.1f} ms"
    )
    for kind in KINDS:
        print(f"{kind}:")
        wall_with, monitor, cpu = results[(kind, True)]
        wall_without = results[(kind, False)][0]
        print(line("monitor_ms (the monitor's own cost)", monitor))
        print(line("monitor CPU time", cpu))
        print(line("cell wall time, monitor loaded", wall_with))
        print(line("cell wall time, no monitor", wall_without))
    for kind in ("unchanged", "one retrace"):
        monitor = results[(kind, True)][1]
        met = statistics.median(monitor) <= 1.0 and percentile(monitor, 0.95) <= 5.0
        print(f"targets (median <= 1 ms, p95 <= 5 ms), {kind}: {'met' if met else 'NOT met'}")
    trained = results[("trained", True)][1]
    met = percentile(trained, 0.95) <= 10.0
    print(f"target (p95 <= 10 ms), trained: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
