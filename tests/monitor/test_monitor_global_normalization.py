"""A ``Normalization(axis=None)`` layer on features of very different scales (issue #25:
the layer spelling of standardising over the whole array): one mean and variance for
every column leaves the small-scale features nearly constant. Told at fit from the
layer's stored axis and the inputs' column spreads; the fix (the layer built without
``axis=None``, adapted, the model built again) is run in the kernel: every feature
reaches the Dense layer with mean 0 and spread 1, and no note. Look-alikes stay silent:
the per-feature default, ``axis=None`` on columns of one scale."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "preprocessing-adapt"

DATA = """rng = np.random.default_rng(4)
plots = np.column_stack([rng.normal(5e4, 1e4, 300), rng.normal(3, 1, 300)]).astype("float32")
worth = rng.normal(size=300).astype("float32")
"""
BUILD = """scale = keras.layers.Normalization(axis=None)
scale.adapt(plots)
valuer = keras.Sequential([keras.Input((2,)), scale, keras.layers.Dense(1)])
valuer.compile(optimizer="adam", loss="mse")
"""
FIT = "log = valuer.fit(plots, worth, epochs=1, verbose=0)\n"


def scale_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "axis=None" in note["text"]
    ]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_one_mean_and_variance_for_all_features(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, BUILD)
    notes = scale_notes(checked_report(run(kernel, FIT)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`scale` in `valuer` was built with `axis=None`: it learned one mean and one "
        "variance over all the values it was adapted on, but `plots`, given to "
        "`valuer.fit`, has features on very different scales (column 1 spreads"
    ), notes[0]
    found = re.findall(r"`([^`]+)`", notes[0])
    assert found[-4:-1] == [
        "scale = keras.layers.Normalization()",
        "scale = keras.layers.Normalization(axis=None)",
        "scale.adapt(plots)",
    ], found
    run(kernel, BUILD.replace(found[-3], found[-4]))
    assert scale_notes(checked_report(run(kernel, FIT))) == []
    scaled = "scale(plots).numpy()"
    centred = f"np.allclose({scaled}.mean(axis=0), 0, atol=1e-3)"
    spread = f"np.allclose({scaled}.std(axis=0), 1, atol=1e-3)"
    assert shown(kernel, f"{centred} and {spread}") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, BUILD.replace("(axis=None)", "()"))
    assert scale_notes(checked_report(run(kernel, FIT))) == []
    run(kernel, "plots = rng.normal(3, 1, size=(300, 2)).astype('float32')\n" + BUILD)
    assert scale_notes(checked_report(run(kernel, FIT))) == []
