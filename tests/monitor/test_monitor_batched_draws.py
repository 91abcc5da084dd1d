"""A NumPy draw in a function mapped over a batched dataset (issue #25): the draw is frozen
by the trace (``symptoms/datasets.py``), and its printed TensorFlow draw must not keep the
written size of one example, or every example of a batch would share one row of noise.
The fix draws with ``tf.shape`` of the operand it is added to; the fixed cell runs, its
rows differ; an unbatched map keeps the written size."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="",
)

BATCHED = """SPECTRUM_BINS = 5
def perturb(spectra, grades):
    ripple = np.random.uniform(-0.1, 0.1, size=SPECTRUM_BINS).astype("float32")
    return spectra * (1.0 + ripple), grades

readings = tf.data.Dataset.from_tensor_slices(
    (np.ones((24, SPECTRUM_BINS), "float32"), np.arange(24) % 3)
).batch(6)
perturbed = readings.map(perturb)
first = next(iter(perturbed))[0].numpy()
rows_alike = bool(np.allclose(first[0], first[1]))
"""


def tf_data_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "tf-data"
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_draw_over_batched_elements_uses_the_operands_shape(kernel: KernelSession) -> None:
    report = checked_report(run(kernel, BATCHED))
    assert value_of(kernel, "rows_alike") is True  # the symptom: one ripple for the batch
    notes = tf_data_notes(report)
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith("`np.random.uniform(...)` in `perturb`"), text
    assert "`spectra` holds a whole batch here" in text
    fix = last_code(text)
    assert fix == "ripple = tf.random.uniform(tf.shape(spectra), -0.1, 0.1)"
    fixed = BATCHED.replace(
        'ripple = np.random.uniform(-0.1, 0.1, size=SPECTRUM_BINS).astype("float32")', fix
    )
    report = checked_report(run(kernel, fixed))
    assert tf_data_notes(report) == []
    # Each example of a batch now gets its own ripple, within the written bounds.
    assert value_of(kernel, "rows_alike") is False
    spread = value_of(kernel, "[float(first.min()), float(first.max())]")
    assert 0.9 <= spread[0] < spread[1] <= 1.1


def test_unbatched_map_keeps_the_written_size(kernel: KernelSession) -> None:
    # Mapped before ``batch``: each call gets one example, the written size is its shape.
    cell = BATCHED.replace(").batch(6)\nperturbed = readings.map(perturb)", ")\n").replace(
        "first = next(iter(perturbed))[0].numpy()",
        "perturbed = readings.map(perturb).batch(6)\nfirst = next(iter(perturbed))[0].numpy()",
    )
    text = tf_data_notes(checked_report(run(kernel, cell)))[0]
    assert "holds a whole batch" not in text
    assert last_code(text) == "ripple = tf.random.uniform([SPECTRUM_BINS], -0.1, 0.1)"


def test_tensorflow_draw_with_the_batch_shape_stays_silent(kernel: KernelSession) -> None:
    cell = BATCHED.replace(
        'ripple = np.random.uniform(-0.1, 0.1, size=SPECTRUM_BINS).astype("float32")',
        "ripple = tf.random.uniform(tf.shape(spectra), -0.1, 0.1)",
    )
    assert tf_data_notes(checked_report(run(kernel, cell))) == []
