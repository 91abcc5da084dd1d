"""Traces TensorFlow makes while saving a model are not the learner's retraces."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, run_quiet, trace_for, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load=(
        "import tempfile, os\nimport numpy as np\nimport tensorflow as tf\n"
        # Saving logs where its assets went: not the monitor's output.
        'tf.get_logger().setLevel("ERROR")\n'
    ),
    after_load="",
)

MODULE = """
class Scaler(tf.Module):
    def __init__(self):
        self.factor = tf.Variable(3.0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def scale(self, values):
        return values * self.factor

scaler = Scaler()
scaler.scale(tf.constant([1.0, 2.0]))
export_dir = os.path.join(tempfile.mkdtemp(), "scaler")
"""


def test_saving_a_module_reports_no_retrace(kernel: KernelSession) -> None:
    run_quiet(kernel, MODULE)
    report = run_quiet(kernel, "tf.saved_model.save(scaler, export_dir)")
    texts = [reason["text"] for trace in report["traces"] for reason in trace["reasons"]]
    assert not any("call context" in text for text in texts), texts
    assert report["traces"] == []
    # The saved function is the learner's and works after loading.
    run_quiet(kernel, "restored = tf.saved_model.load(export_dir)")
    assert value_of(kernel, "restored.scale(tf.constant([2.0])).numpy().tolist()") == [6.0]


def test_a_real_retrace_in_the_saving_cell_is_still_told(kernel: KernelSession) -> None:
    run_quiet(
        kernel,
        "@tf.function\ndef shift(x):\n    return x + 1.0\n\nshift(tf.ones([2]))\n"
        "holder = tf.Module()\nholder.shift = shift\n"
        "holder_dir = os.path.join(tempfile.mkdtemp(), 'holder')",
    )
    report = run_quiet(kernel, "shift(tf.ones([5]))\ntf.saved_model.save(holder, holder_dir)")
    trace = trace_for(report, "shift")
    assert [reason["kind"] for reason in trace["reasons"]] == ["shape"]
