"""A dtype clash whose cause is Keras's global mixed-precision policy (issue #25): a model
built after ``set_global_policy("mixed_float16")`` gives float16 outputs, and the
learner's float32 values meet them. The entry keeps the cast on the line and names the
policy as the cause, with the fix of the course (the last layer in float32); that fix
runs, and the same model under the float32 policy gets no entry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    after_load="import numpy as np\nimport tensorflow as tf\nimport keras\nfrom keras import layers"
)


@pytest.fixture
def mixed(kernel: KernelSession) -> Iterator[KernelSession]:
    runs_cleanly(kernel, 'keras.mixed_precision.set_global_policy("mixed_float16")')
    yield kernel
    runs_cleanly(kernel, 'keras.mixed_precision.set_global_policy("float32")')


def test_float16_outputs_of_a_mixed_policy_model(mixed: KernelSession) -> None:
    runs_cleanly(
        mixed,
        "sales = np.random.rand(16, 5).astype('float32')\n"
        "baseline = tf.ones((16, 2))\n"
        "forecaster = keras.Sequential([keras.Input(shape=(5,)), layers.Dense(8), "
        "layers.Dense(2)])",
    )
    error = failing(mixed, "adjusted = forecaster(sales) + baseline")
    text = error["explanation"]
    assert error["course"]["section"] == "mixed-precision"
    assert "the global policy `mixed_float16`" in text
    assert "`tf.cast(forecaster(sales), tf.float32) + baseline`" in text
    assert 'Keep the model\'s last layer in float32 (`dtype="float32"` on it)' in text
    runs_cleanly(
        mixed,
        "forecaster = keras.Sequential([keras.Input(shape=(5,)), layers.Dense(8), "
        "layers.Dense(2, dtype='float32')])\nadjusted = forecaster(sales) + baseline\n"
        "assert adjusted.dtype == tf.float32",
    )


def test_the_float32_policy_look_alike_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "plain = keras.Sequential([keras.Input(shape=(5,)), layers.Dense(2)])\n"
        "summed = plain(np.ones((3, 5), 'float32')) + tf.ones((3, 2))",
    )
