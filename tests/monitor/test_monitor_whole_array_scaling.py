"""Features scaled by one number for the whole array (issue #25, silent bugs): ``X = (X -
X.mean()) / X.std()`` on an (N, F) table whose columns are on very different scales keeps
those scales (the small columns come out nearly constant). Told from the result's
column spreads after the cell, for every spelling of the statistics (NumPy methods and
functions, ``tf.reduce_*``/``tf.math.reduce_std``, ``keras.ops``, a min-max range), for
statistics computed in an earlier cell (a training set's applied to a test set) and for
a notebook helper ``standardize``. Each fix is run in the kernel: every column then has
mean 0 and spread 1 (or a range of 1), and no note. Look-alikes stay silent: per-feature
statistics, a 1-D target, images flattened into hundreds of columns scaled as a whole,
a plain number, columns on one scale."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "class-axis"

DATA = """rng = np.random.default_rng(3)
homes = np.column_stack([
    rng.normal(250000, 60000, 400), rng.normal(3, 1, 400), rng.normal(0.05, 0.01, 400)
]).astype("float32")
homes_train, homes_test = homes[:300], homes[300:]
prices = rng.normal(size=400).astype("float32")
"""


def scaling_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "very different scales" in note["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


STANDARDISED = "np.allclose(np.asarray({0}).mean(axis=0), 0, atol=1e-3) and np.allclose(np.asarray({0}).std(axis=0), 1, atol=1e-3)"  # noqa: E501


@pytest.mark.parametrize(
    "statement",
    [
        "feats = (homes - homes.mean()) / homes.std()",
        "feats = (homes - np.mean(homes)) / np.std(homes)",
        "feats = (homes - tf.reduce_mean(homes)) / tf.math.reduce_std(homes)",
        "feats = (homes - keras.ops.mean(homes)) / keras.ops.std(homes)",
    ],
)
def test_standardised_with_one_mean_and_std(kernel: KernelSession, statement: str) -> None:
    run(kernel, DATA)
    notes = scaling_notes(checked_report(run(kernel, statement + "\n")))
    assert len(notes) == 1, notes
    expression = statement.split(" = ", 1)[1]
    assert notes[0].startswith(
        f"`{expression}` (line 1 of this cell) scales `homes` with one statistic for all "
        "the columns of a (400, 3) table"
    ), notes[0]
    assert "after it, `feats`'s columns spread from" in notes[0]
    fix = codes(notes[0])[-1]
    assert fix.startswith("feats = ") and fix.count("axis=0") == 2, fix
    assert scaling_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert shown(kernel, STANDARDISED.format("feats")) == "True"


def test_min_max_range_of_the_whole_table(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "unit = (homes - homes.min()) / (homes.max() - homes.min())\n"
    notes = scaling_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = codes(notes[0])[-1]
    assert fix == ("unit = (homes - homes.min(axis=0)) / (homes.max(axis=0) - homes.min(axis=0))")
    assert scaling_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert (
        shown(kernel, "np.allclose(unit.min(axis=0), 0) and np.allclose(unit.max(axis=0), 1)")
        == "True"
    )


def test_training_statistics_from_an_earlier_cell_applied_to_test_data(
    kernel: KernelSession,
) -> None:
    run(kernel, DATA)
    assert (
        scaling_notes(
            checked_report(run(kernel, "mu = homes_train.mean()\nsd = homes_train.std()\n"))
        )
        == []
    )
    cell = "test_feats = (homes_test - mu) / sd\n"
    notes = scaling_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`(homes_test - mu) / sd` (line 1 of this cell) scales `homes_test`")
    found = codes(notes[0])
    assert found[-3:] == [
        "mu = homes_train.mean(axis=0)",
        "sd = homes_train.std(axis=0)",
        "test_feats = (homes_test - mu) / sd",
    ], found
    run(kernel, found[-3] + "\n" + found[-2] + "\n")
    assert scaling_notes(checked_report(run(kernel, cell))) == []
    # Scaled by the training set's per-feature statistics: every column near mean 0,
    # spread 1 (the test rows come from the same distribution).
    assert (
        shown(
            kernel,
            "np.all(np.abs(test_feats.mean(axis=0)) < 0.5)"
            " and np.all(np.abs(test_feats.std(axis=0) - 1) < 0.2)",
        )
        == "True"
    )


def test_a_helper_that_standardises_its_argument(kernel: KernelSession) -> None:
    run(kernel, DATA)
    helper = (
        "def standardize(a):\n    centre = a.mean()\n    return (a - centre) / (a.std() + 1e-8)\n"
    )
    assert scaling_notes(checked_report(run(kernel, helper))) == []
    cell = "scaled = standardize(homes)\n"
    notes = scaling_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`scaled = standardize(homes)` (line 1 of this cell) scales a (400, 3) table with "
        "`standardize`, which uses one statistic for all its columns (`return (a - centre) "
        "/ (a.std() + 1e-8)`)"
    )
    found = codes(notes[0])
    assert found[-2:] == [
        "centre = a.mean(axis=0)",
        "return (a - centre) / (a.std(axis=0) + 1e-8)",
    ], found
    fixed = helper.replace("centre = a.mean()", found[-2]).replace(
        "return (a - centre) / (a.std() + 1e-8)", found[-1]
    )
    run(kernel, fixed)
    assert scaling_notes(checked_report(run(kernel, cell))) == []
    assert shown(kernel, STANDARDISED.format("scaled")) == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "ok = (homes - homes.mean(axis=0)) / homes.std(axis=0)\n",  # per feature
        "ok = (homes - np.mean(homes, 0)) / np.std(homes, 0)\n",
        "target = (prices - prices.mean()) / prices.std()\n",  # a 1-D target
        "pix = rng.uniform(0, 255, size=(50, 784)).astype('float32')\n"
        "pix_z = (pix - pix.mean()) / pix.std()\n",  # images: one scale on purpose
        "fixed = homes / 255.0\n",  # the learner's own number
        "alike = rng.normal(5, 2, size=(100, 4)).astype('float32')\n"
        "alike_z = (alike - alike.mean()) / alike.std()\n",  # columns on one scale
    ):
        assert scaling_notes(checked_report(run(kernel, cell))) == [], cell


def test_standardised_in_place(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "table = homes.copy()\ntable -= table.mean()\ntable /= table.std()\n"
    notes = scaling_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`table /= table.std()` (line 3 of this cell) scales `table`")
    found = codes(notes[0])
    assert found[-2:] == ["table -= table.mean(axis=0)", "table /= table.std(axis=0)"], found
    fixed = f"table = homes.copy()\n{found[-2]}\n{found[-1]}\n"
    assert scaling_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, STANDARDISED.format("table")) == "True"


TRACK = """rng = np.random.default_rng(8)
track = (rng.normal(0, 0.3, size=(150, 2)) + [40.0, -3.5]).astype("float32")
"""
UNIT_BOX = """def to_unit_box(coords):
    coords = coords - np.mean(coords)
    return coords / np.abs(coords).max()
"""


def offset_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "offset differently" in note["text"]
    ]


def test_a_helper_centring_on_one_mean_in_a_statement_of_its_own(kernel: KernelSession) -> None:
    """``coords = coords - np.mean(coords)`` then ``return coords / <one scale>``: the
    scale for the whole example is meant, the centring per column; only the mean gets
    ``axis=0``."""
    run(kernel, TRACK)
    assert offset_notes(checked_report(run(kernel, UNIT_BOX))) == []
    cell = "unit_track = to_unit_box(track)\n"
    notes = offset_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`unit_track = to_unit_box(track)` (line 1 of this cell) scales a (150, 2) table with "
        "`to_unit_box`, which uses one statistic for all its columns (`coords = coords - "
        "np.mean(coords)`)"
    ), notes[0]
    found = codes(notes[0])
    assert found[-1] == "coords = coords - np.mean(coords, axis=0)", found
    run(kernel, UNIT_BOX.replace("coords = coords - np.mean(coords)", found[-1]))
    assert offset_notes(checked_report(run(kernel, cell))) == []
    # Centred per column, and still inside the unit box.
    assert shown(kernel, "np.allclose(unit_track.mean(axis=0), 0, atol=1e-5)") == "True"
    assert shown(kernel, "float(np.abs(unit_track).max())") == "1.0"


def test_a_centring_apart_on_data_around_one_point_stays_silent(kernel: KernelSession) -> None:
    run(kernel, TRACK)
    run(kernel, UNIT_BOX.replace("np.mean(coords)", "tf.reduce_mean(coords, axis=0)"))
    assert offset_notes(checked_report(run(kernel, "unit_track = to_unit_box(track)\n"))) == []
    # Every column around the same value: one mean centres each of them.
    run(kernel, UNIT_BOX)
    same = (
        "blob = rng.normal(7, 1, size=(150, 2)).astype('float32')\nunit_blob = to_unit_box(blob)\n"
    )
    assert offset_notes(checked_report(run(kernel, same))) == []
