"""Pixels scaled with ``//`` where ``/`` was meant (issue #25, our own probe cell):
``imgs // 255`` keeps only the whole part, so the images come out as 0 and 1, nearly all
0. Told from the result after the cell; the fix (``/``) is run in the kernel: the values
span [0, 1] with fractions, and no note. Look-alikes stay silent: a true division, a
count of batches, group numbers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """rng = np.random.default_rng(1)
shots = rng.integers(0, 256, size=(100, 8, 8)).astype("uint8")
"""


def floor_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "floor-divides" in n["text"]]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_pixels_floor_divided(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = floor_notes(checked_report(run(kernel, "pics = shots // 255\n")))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`pics = shots // 255` (line 1 of this cell) floor-divides: `//` keeps only the "
        "whole part of each quotient, so every value under 255 became 0 ("
    ), notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "pics = shots / 255"
    assert floor_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert shown(kernel, "np.allclose(pics * 255, shots) and 0 < pics.mean() < 1") == "True"


def test_pixels_floor_divided_in_place(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "pics = shots.copy()\npics //= 255\n"
    notes = floor_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "load them again first" in notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-2]
    assert fix == "pics = pics / 255"
    assert floor_notes(checked_report(run(kernel, f"pics = shots.copy()\n{fix}\n"))) == []
    assert shown(kernel, "np.allclose(pics * 255, shots)") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "pics = shots / 255\n",
        "steps = 1000 // 32\n",
        "groups = np.arange(100) // 10\n",
    ):
        assert floor_notes(checked_report(run(kernel, cell))) == [], cell


# A step over a total made with ``//`` where a fraction is meant (issue #25, from a pruning
# schedule): a learning-rate warm-up in a function, a temperature annealed in a loop.
WARMUP = """peak_lr, warm_iters = 0.01, 40

def warmup_lr(it):
    share = min(it, warm_iters) // warm_iters
    return peak_lr * share

lrs = [warmup_lr(i) for i in (0, 10, 20, 40, 80)]
print(lrs)
"""


def fraction_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "floor-divides a count by its total" in n["text"]]


def test_warmup_share_floor_divided_in_a_function(kernel: KernelSession) -> None:
    [text] = fraction_notes(checked_report(run(kernel, WARMUP)))
    assert text.startswith(
        "`share = min(it, warm_iters) // warm_iters` (line 4 of this cell, in `warmup_lr`) "
        "floor-divides a count by its total: `min(it, warm_iters)` is at most the divisor "
        "(40), so `//`"
    ), text
    assert shown(kernel, "lrs") == "[0.0, 0.0, 0.0, 0.01, 0.01]"
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "share = min(it, warm_iters) / warm_iters"
    fixed = WARMUP.replace("share = min(it, warm_iters) // warm_iters", fix)
    assert fraction_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "lrs") == "[0.0, 0.0025, 0.005, 0.01, 0.01]"


ANNEAL = """n_rounds = 25
temps = []
for rnd in range(n_rounds):
    frac_done = rnd // n_rounds
    temps.append(2.0 - 1.5 * frac_done)
"""


def test_annealing_fraction_floor_divided_in_a_loop(kernel: KernelSession) -> None:
    [text] = fraction_notes(checked_report(run(kernel, ANNEAL)))
    assert "makes `frac_done` 0 (it holds 0 now)" in text, text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "frac_done = rnd / n_rounds"
    assert (
        fraction_notes(
            checked_report(run(kernel, ANNEAL.replace("rnd // n_rounds", "rnd / n_rounds")))
        )
        == []
    )
    assert shown(kernel, "temps[0], round(temps[-1], 2)") == "2.0 0.56"


def test_counts_and_indices_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        WARMUP.replace("//", "/"),
        "batch_size = 32\nn_batches = len(shots) // batch_size\nprint(n_batches * 1.5)\n",
        "accum = 4\nfor step in range(12):\n"
        "    group = step // accum\n    lr_scale = 0.5 ** group\n",
    ):
        assert fraction_notes(checked_report(run(kernel, cell))) == [], cell


# Whole counts that hold 0 after the cell: a quotient that is meant to be an integer
# (epochs completed, whole minutes, the index of a cycle) is no fraction, whatever its
# name says, unless it is used as one.
WHOLE_COUNTS = (
    "batches_per_pass = 800\nfor update in range(90):\n"
    "    passes_completed = update // batches_per_pass\nprint(passes_completed)\n",
    "wait_seconds = 37\nt = wait_seconds // 60\nprint(t, 'min', wait_seconds % 60, 's')\n",
    "ramp_len = 300\nstep_idx = 120\nphase = step_idx // ramp_len\n"
    "base_rate = 0.02 * (1 + phase)\nprint(base_rate)\n",
)


def test_whole_counts_holding_zero_stay_silent(kernel: KernelSession) -> None:
    printed = []
    for cell in WHOLE_COUNTS:
        execution = run(kernel, cell)
        assert fraction_notes(checked_report(execution)) == [], cell
        printed.append(execution.stdout.strip())
    assert printed == ["0", "0 min 37 s", "0.02"]
