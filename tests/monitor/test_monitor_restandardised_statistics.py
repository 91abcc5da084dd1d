"""Statistics for a normalisation read from data that were already standardised (issue
#25, ``symptoms/restandardised_statistics.py``).

A Keras ``Normalization`` built with ``mean=`` and ``variance=`` of standardised
features, and a hand-written ``(raw - z.mean(0)) / z.std(0)``, are told with the raw
data's statistics put back; each fix, applied, standardises raw inputs (column means near
0, spreads near 1) and gives no note. Statistics of the raw data, statistics of the
standardised data only printed, or used on other standardised data, stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """gen12 = np.random.default_rng(12)
sensors = (gen12.normal(size=(400, 3)) * [5.0, 300.0, 0.2] + [50.0, 1000.0, -3.0]).astype(
    "float32"
)
centre, spread = sensors.mean(axis=0), sensors.std(axis=0)
"""

WORDS = "already standardised"


def notes_about(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if WORDS in n["text"]]


def test_normalization_layer_given_standardised_statistics(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "sens_z = (sensors - centre) / spread")
    cell = (
        "norm = keras.layers.Normalization(mean=sens_z.mean(axis=0), variance=sens_z.var(axis=0))\n"
        "scaled = np.asarray(norm(sensors))"
    )
    [text] = notes_about(cell, kernel)
    assert text.startswith(
        "`sens_z.mean(axis=0)` and `sens_z.var(axis=0)` (line 1 of this cell) are statistics "
        "of `sens_z`, which is already standardised (`sens_z = (sensors - centre) / spread`, "
        "cell In["
    )
    fix = fix_in(text)
    assert fix == "norm = keras.layers.Normalization(mean=centre, variance=spread ** 2)"
    assert notes_about(fix + "\nscaled = np.asarray(norm(sensors))", kernel) == []
    assert value_of(kernel, "float(np.abs(scaled.mean(axis=0)).max()) < 0.01") is True
    assert value_of(kernel, "float(np.abs(scaled.std(axis=0) - 1).max()) < 0.01") is True


def test_hand_written_standardisation_with_standardised_statistics(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "sens_z = (sensors - centre) / spread\n"
        "fresh = sensors[:50]\n"
        "fresh_z = (fresh - np.mean(sens_z, axis=0)) / np.std(sens_z, axis=0)"
    )
    [text] = notes_about(cell, kernel)
    assert "line 1 of this cell" in text
    fix = fix_in(text)
    assert fix == "fresh_z = (fresh - centre) / spread"
    fixed = cell.replace(cell.splitlines()[-1], fix)
    assert notes_about(fixed, kernel) == []
    assert value_of(kernel, "float(np.abs(fresh_z).max()) < 6") is True


def test_right_statistics_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "sens_z = (sensors - centre) / spread")
    cell = (
        "norm = keras.layers.Normalization(mean=sensors.mean(axis=0), variance=sensors.var(axis=0))"
    )
    assert notes_about(cell, kernel) == []
    assert notes_about("print(sens_z.mean(axis=0), sens_z.std(axis=0))", kernel) == []
    # Other standardised data scaled by the standardised data's statistics: harmless.
    cell = (
        "val_z = (sensors[:40] - centre) / spread\n"
        "val_zz = (val_z - sens_z.mean(axis=0)) / sens_z.std(axis=0)"
    )
    assert notes_about(cell, kernel) == []
