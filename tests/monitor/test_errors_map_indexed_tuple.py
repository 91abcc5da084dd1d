"""A Dataset.map lambda written for the whole tuple element, ``lambda ex: (ex[0] ...,
ex[1] ...)`` (issue #25, ``errors/calls.py``): map hands it the components as separate
arguments, so the fix takes them by name, ``lambda x, y: ...``, never indexing inside the
features; the printed fix runs and gives the intended elements. A lambda taking the
components gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """pixels = np.random.randint(0, 255, (12, 4, 4)).astype("uint8")
digits = np.arange(12) % 10
weights = np.ones(12, dtype="float32")
pairs = tf.data.Dataset.from_tensor_slices((pixels, digits))
triples = tf.data.Dataset.from_tensor_slices((pixels, digits, weights))
"""


def test_a_pair_read_by_index(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = "scaled = pairs.map(lambda item: (tf.cast(item[0], tf.float32) / 255.0, item[1]))"
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == "pairs.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))"
    runs_cleanly(kernel, f"scaled = {fix}")
    assert value_of(kernel, "[list(s.shape) for s in scaled.element_spec]") == [[4, 4], []]
    runs_cleanly(kernel, "again = pairs.map(lambda img, lab: (img, lab + 1))")


def test_a_triple_read_by_index(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = "kept = triples.map(lambda rec: (rec[0], rec[1], rec[2] * 2.0))"
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == "triples.map(lambda rec0, rec1, rec2: (rec0, rec1, rec2 * 2.0))"
    runs_cleanly(kernel, f"kept = {fix}")
    assert value_of(kernel, "float(next(iter(kept))[2])") == 2.0
