"""A Keras object's life (issue #25): a model asked for its weights before it was built,
a saved model whose own layer class Keras does not know by name when loading it, and the
entry for an error no family knows, which must not blame shapes when the message is not
about them. Our own cells (``errors/families_keras_lifecycle.py``, ``errors/families.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_parameters_counted_before_the_model_is_built(kernel: KernelSession) -> None:
    cell = (
        "scorer = keras.Sequential([keras.layers.Dense(6), keras.layers.Dense(1)])\n"
        "print(scorer.count_params())\n"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    assert "`count_params()`" in text and "`scorer` has none yet" in text
    assert "keras.Input(shape=(features,))" in text
    # What the entry says to do: the input shape where the model is made.
    runs_cleanly(
        kernel,
        cell.replace("Sequential([", "Sequential([keras.Input(shape=(3,)), "),
    )
    assert value_of(kernel, "scorer.count_params()") == 3 * 6 + 6 + 6 + 1


def test_a_layer_weight_read_before_the_layer_is_built(kernel: KernelSession) -> None:
    error = failing(kernel, "head = keras.layers.Dense(2)\nprint(head.kernel.shape)\n")
    assert error["course"]["section"] == "keras-model-api"
    assert "`kernel`" in error["explanation"] and "`head` has none yet" in error["explanation"]


def test_loading_a_model_with_an_unregistered_layer(kernel: KernelSession, tmp_path: Path) -> None:
    saved = tmp_path / "tripled.keras"
    setup = f"""class Tripler(keras.layers.Layer):
    def call(self, x):
        return 3.0 * x

tripled = keras.Sequential([keras.Input((2,)), Tripler(), keras.layers.Dense(1)])
tripled.save({str(saved)!r})
saved_at = {str(saved)!r}
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, "restored = keras.models.load_model(saved_at)\n")
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "`Tripler`" in text and "register_keras_serializable" in text
    fix = fix_of(text)
    assert (
        fix == 'restored = keras.models.load_model(saved_at, custom_objects={"Tripler": Tripler})'
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "type(restored.layers[0]).__name__") == "Tripler"


def test_a_registered_layer_loads_without_an_entry(kernel: KernelSession, tmp_path: Path) -> None:
    saved = tmp_path / "halved.keras"
    cell = f"""@keras.saving.register_keras_serializable(package="lifecycle_test")
class Halver(keras.layers.Layer):
    def call(self, x):
        return 0.5 * x

halved = keras.Sequential([keras.Input((2,)), Halver(), keras.layers.Dense(1)])
halved.save({str(saved)!r})
again = keras.models.load_model({str(saved)!r})
"""
    runs_cleanly(kernel, cell)
    assert value_of(kernel, "type(again.layers[0]).__name__") == "Halver"


def test_an_error_no_family_knows_is_not_blamed_on_shapes(
    kernel: KernelSession, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-labels.txt"
    error = failing(kernel, f"raw_labels = tf.io.read_file({str(missing)!r})\n")
    text = error["explanation"]
    assert "Compare these shapes and dtypes" not in text
    assert "says what TensorFlow refused" in text and "`tf.io.read_file" in text
