"""Fixes that cover every line of the cell written the same way (issue #25; repairs listed
by ``benchmarks/audit_printed_fixes.py``): a fix of the failing line alone re-raises on
the next line written the same way. The fix now carries those lines fixed too (tf.keras 2
``add_weight`` order, ``reset_states``, summaries without a step), and a loss whose
``super().__init__`` names itself takes ``name`` as a parameter so ``from_config`` does
not pass it twice. Each printed fix, applied as printed, runs."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def spans_after_fix(text: str) -> list[str]:
    assert "Fix: " in text, text
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


TALLY = """class Tally(keras.metrics.Metric):
    def __init__(self, name="tally", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_weight("total", initializer="zeros")
        self.hits = self.add_weight("hits", initializer="zeros")

    def update_state(self, x):
        self.total.assign_add(tf.cast(tf.size(x), "float32"))
        self.hits.assign_add(tf.reduce_sum(tf.cast(x > 0, "float32")))

    def result(self):
        return self.hits / self.total

tally = Tally()
tally.update_state(tf.constant([1.0, -2.0, 3.0]))
"""


def test_every_add_weight_in_keras2_order_is_fixed(kernel: KernelSession) -> None:
    text = failing(kernel, TALLY)["explanation"]
    spans = spans_after_fix(text)
    hits = 'self.hits = self.add_weight(name="hits", initializer="zeros")'
    total = 'self.total = self.add_weight(name="total", initializer="zeros")'
    assert spans == [hits, total]
    fixed = TALLY.replace('self.total = self.add_weight("total", initializer="zeros")', total)
    fixed = fixed.replace('self.hits = self.add_weight("hits", initializer="zeros")', hits)
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "float(tally.hits.numpy())") == 2.0


def test_every_reset_states_is_renamed(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "avg_loss = keras.metrics.Mean()\nauc = keras.metrics.AUC()")
    cell = "avg_loss.reset_states()\nauc.reset_states()\navg_loss.update_state(2.0)"
    text = failing(kernel, cell)["explanation"]
    assert spans_after_fix(text) == ["auc.reset_state()", "avg_loss.reset_state()"]
    runs_cleanly(kernel, "avg_loss.reset_state()\nauc.reset_state()\navg_loss.update_state(2.0)")
    assert value_of(kernel, "float(avg_loss.result())") == 2.0


def test_every_summary_of_the_block_gets_the_step(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "import tempfile\n"
        "board = tf.summary.create_file_writer(tempfile.mkdtemp())\n"
        "opt = keras.optimizers.SGD(0.1)",
    )
    cell = (
        "with board.as_default():\n"
        "    tf.summary.write('loss', 0.5)\n"
        "    tf.summary.write('acc', 0.9)\n"
    )
    text = failing(kernel, cell)["explanation"]
    spans = spans_after_fix(text)
    assert spans == [
        "tf.summary.write('acc', 0.9, step=opt.iterations)",
        "tf.summary.write('loss', 0.5, step=opt.iterations)",
    ]
    runs_cleanly(kernel, "with board.as_default():\n    " + "\n    ".join(reversed(spans)))


LOSS = """class ClippedHinge(keras.losses.Loss):
    def __init__(self, margin=1.0):
        super().__init__(name="clipped_hinge")
        self.margin = margin

    def call(self, y_true, y_pred):
        return tf.reduce_mean(tf.maximum(0.0, self.margin - y_true * y_pred), axis=-1)

    def get_config(self):
        return {**super().get_config(), "margin": self.margin}

hinge = ClippedHinge(margin=0.5)
copy = ClippedHinge.from_config(hinge.get_config())
"""


def test_a_loss_naming_itself_takes_name_as_a_parameter(kernel: KernelSession) -> None:
    text = failing(kernel, LOSS)["explanation"]
    spans = spans_after_fix(text)
    assert spans == [
        'def __init__(self, margin=1.0, name="clipped_hinge", **kwargs):',
        "super().__init__(name=name, **kwargs)",
    ]
    fixed = LOSS.replace("def __init__(self, margin=1.0):", spans[0]).replace(
        'super().__init__(name="clipped_hinge")', spans[1]
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "[copy.name, copy.margin]") == ["clipped_hinge", 0.5]
