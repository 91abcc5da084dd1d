"""Worst-case shapes of input (issue #13): does the analysis stay linear?

For each shape, ``--rebinds`` (default 2,000) rebinds of one name (or as many
names, tapes, readers) are generated and ``analyze_source`` is timed (best of
``--runs``); the ratio to the same number of straight-line rebinds is printed.
A linear analysis keeps every ratio near the ratio of the sources' sizes (1-3);
a quadratic part shows as a ratio that doubles when ``--rebinds`` doubles.

Then a deep expression (``1+1+...``, 400 KB) goes through ``analyze_source``: it
must be refused as input (``AnalysisSyntaxError``), quickly.

    python benchmarks/bench_worst_cases.py [--rebinds 2000] [--runs 3] [--shape NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jupyterlab_tfcoach.analysis import AnalysisSyntaxError, analyze_source
from jupyterlab_tfcoach.analysis.testing import WORST_CASE_SHAPES as SHAPES
from jupyterlab_tfcoach.analysis.testing import deep_sum


def best_time(source: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        analyze_source(source)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebinds", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES))
    args = parser.parse_args()
    baseline_source = SHAPES["straight"](args.rebinds)
    baseline = best_time(baseline_source, args.runs)
    print(f"{'shape':<16} {'KiB':>7} {'ms':>9} {'x straight':>10}")
    for name in args.shape or SHAPES:
        source = SHAPES[name](args.rebinds)
        try:
            seconds = baseline if name == "straight" else best_time(source, args.runs)
        except AnalysisSyntaxError as error:
            print(f"{name:<16} {len(source.encode()) / 1024:7.1f} input error: {error}")
            continue
        print(
            f"{name:<16} {len(source.encode()) / 1024:7.1f} {seconds * 1000:9.1f} "
            f"{seconds / baseline:10.2f}"
        )
    deep = deep_sum(200_000)
    started = time.perf_counter()
    try:
        analyze_source(deep)
        outcome = "analysed (unexpected)"
    except AnalysisSyntaxError as error:
        outcome = f"input error: {error}"
    elapsed = (time.perf_counter() - started) * 1000
    print(f"deep 1+1+... ({len(deep) // 1024} KiB): {elapsed:.1f} ms, {outcome}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
