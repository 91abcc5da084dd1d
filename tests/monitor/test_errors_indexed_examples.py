"""One example taken out of a batch by indexing (``images[3]``, ``images[0][..., None]``)
and given to an image model (issue #25): Keras reports it as an incompatible Input or,
with a Sequential model, as a negative size deep in a Conv2D (it took the example's rows
as a batch). The entry reads the indexed value's shape from the array's shape and the
index alone (the indexing is never run), names the missing batch axis, and gives the
argument with the batch axis kept; each fix is run in the kernel, and the look-alike
with a slice (``images[3:4]``) gets no entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport keras\nfrom keras import layers")


def fix_of(explanation: str) -> str:
    """The code after "Give it a batch of one example:", the call rewritten."""
    told = explanation.split("Give it a batch of one example: ", 1)
    assert len(told) == 2, explanation
    return re.findall(r"`([^`]+)`", told[1])[0]


MODELS = """photos = np.random.rand(10, 12, 12, 3).astype("float32")
scans = np.random.rand(10, 20, 20).astype("float32")
pic_in = keras.Input(shape=(12, 12, 3))
pic_model = keras.Model(pic_in, layers.Dense(2)(layers.Flatten()(layers.Conv2D(4, 3)(pic_in))))
scan_model = keras.Sequential(
    [keras.Input(shape=(20, 20, 1)), layers.Conv2D(4, 3), layers.Flatten(), layers.Dense(3)]
)
"""


def test_one_image_indexed_out_of_the_batch(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    error = failing(kernel, "guess = pic_model.predict(photos[3], verbose=0)")
    explanation = error["explanation"]
    assert error["course"]["section"] == "batch-dimension"
    assert "the leading batch axis is missing" in explanation
    assert "`pic_model.predict(photos[3], verbose=0)`" in explanation
    fix = fix_of(explanation)
    assert fix == "pic_model.predict(photos[3:4], verbose=0)"
    runs_cleanly(kernel, f"guess = {fix}\nassert guess.shape == (1, 2)")
    runs_cleanly(kernel, "guess = pic_model.predict(photos[5:6], verbose=0)")


def test_one_scan_given_its_channel_but_not_its_batch_axis(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    error = failing(kernel, "scan_scores = scan_model.predict(scans[0][..., None], verbose=0)")
    explanation = error["explanation"]
    assert "got shape (20, 20, 1): the leading batch axis is missing" in explanation
    fix = fix_of(explanation)
    runs_cleanly(kernel, f"scan_scores = {fix}\nassert scan_scores.shape == (1, 3)")
    runs_cleanly(kernel, "scan_scores = scan_model.predict(scans[:2, ..., None], verbose=0)")


def test_the_axis_adding_call_is_named_beside_the_fix(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS + "single = photos[7]")
    for given, shape in (("photos[2]", (1, 2)), ("single", (1, 2))):
        explanation = failing(kernel, f"out = pic_model.predict({given}, verbose=0)")["explanation"]
        expanded = f"np.expand_dims({given}, 0)"
        assert f"`{expanded}` adds the same axis in front." in explanation
        runs_cleanly(
            kernel,
            f"out = pic_model.predict({expanded}, verbose=0)\nassert out.shape == {shape}",
        )
        runs_cleanly(kernel, f"out = {fix_of(explanation)}\nassert out.shape == {shape}")
