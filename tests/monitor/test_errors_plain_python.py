"""A notebook without TensorFlow or Keras: NumPy's refusal of lists of different lengths
is not the monitor's to explain there (issue #25, the look-alike of the padded-sequences
entry)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np")


def test_ragged_lists_in_a_notebook_without_tensorflow_get_no_entry(
    kernel: KernelSession,
) -> None:
    execution = kernel.execute("rows = [[1, 2, 3], [4, 5]]\ngrid = np.array(rows)")
    assert execution.reply["status"] == "error"
    assert checked_report(execution)["error"] is None
