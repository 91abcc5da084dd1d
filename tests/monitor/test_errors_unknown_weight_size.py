"""A layer whose weights would be sized by an input axis of unknown size
(``errors/families_unknown_weight_size.py``): Keras 3 only names the variable it could not
make (``shape=(None, 16) for variable path='dense/kernel'``). The entry names the layer
call and its input, and follows that input to what made it: a ``Flatten`` of an input
with an open axis (fix: a global pooling over it, which runs for inputs of any length and
gives one value per feature), or an ``Input`` whose last axis itself is open (the rule,
no fix). The same model with a pooling, or with a fixed size, builds without an entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport keras")

READINGS_MODEL = """def make_reader(channels=6):
    readings = keras.Input(shape=(None, channels))
    h = keras.layers.Flatten()(readings)
    h = keras.layers.Dense(16, activation="tanh")(h)
    return keras.Model(readings, keras.layers.Dense(2)(h))

reader = make_reader()
"""


def test_flatten_after_an_open_axis_is_pooled_instead(kernel: KernelSession) -> None:
    error = failing(kernel, READINGS_MODEL)
    text = error["explanation"]
    assert error["course"]["section"] == "labels-and-loss"
    assert '`keras.layers.Dense(16, activation="tanh")` makes its weights' in text, text
    assert "`h` is a (None, None) float32" in text
    assert "`h` comes from `keras.layers.Flatten()(readings)`" in text
    assert (
        "`readings` is (None, None, 6), declared by `keras.Input(shape=(None, channels))`" in text
    )
    fix = fix_of(text)
    assert fix == "h = keras.layers.GlobalAveragePooling1D()(readings)"
    runs_cleanly(kernel, READINGS_MODEL.replace("h = keras.layers.Flatten()(readings)", fix))
    # The model now reads series of any length: one output row per series.
    assert value_of(kernel, "reader(np.ones((3, 40, 6), 'float32')).shape[1]") == 2
    assert value_of(kernel, "reader(np.ones((2, 7, 6), 'float32')).shape[0]") == 2


def test_an_open_last_axis_is_named_without_a_fix(kernel: KernelSession) -> None:
    cell = "cols = keras.Input((None,))\nscore = keras.layers.Dense(1)(cols)\n"
    text = failing(kernel, cell)["explanation"]
    assert "`keras.layers.Dense(1)` makes its weights" in text, text
    assert "`keras.Input((None,))` declares that axis open" in text
    assert "Fix:" not in text


def test_pooled_and_sized_models_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        READINGS_MODEL.replace(
            "keras.layers.Flatten()(readings)", "keras.layers.GlobalMaxPooling1D()(readings)"
        ),
    )
    runs_cleanly(kernel, READINGS_MODEL.replace("shape=(None, channels)", "shape=(30, channels)"))
    assert value_of(kernel, "reader.output_shape") == [None, 2]


TILE_CLASSIFIER = """tiles = keras.Sequential([
    keras.Input((None, None, 3)),
    keras.layers.Flatten(),
    keras.layers.Dropout(0.2),
    keras.layers.Dense(5, activation="softmax"),
])
"""


def test_a_sequential_list_flattening_an_open_axis_is_pooled(kernel: KernelSession) -> None:
    # Written over several lines: the fix is the whole statement on one line.
    error = failing(kernel, TILE_CLASSIFIER)
    text = error["explanation"]
    assert error["course"]["section"] == "labels-and-loss"
    assert "`keras.layers.Dropout(0.2)` makes its weights" not in text
    assert "comes from `keras.layers.Flatten()`" in text, text
    assert "`keras.Input((None, None, 3))` declares an axis of size None" in text
    fix = fix_of(text)
    assert fix == (
        "tiles = keras.Sequential([keras.Input((None, None, 3)), "
        "keras.layers.GlobalAveragePooling2D(), keras.layers.Dropout(0.2), "
        'keras.layers.Dense(5, activation="softmax")])'
    )
    runs_cleanly(kernel, fix)
    # Images of any size now give one row of 5 class probabilities each.
    assert value_of(kernel, "tiles(np.ones((2, 9, 13, 3), 'float32')).shape.as_list()") == [
        2,
        5,
    ]
    assert value_of(kernel, "round(float(np.sum(tiles(np.ones((1, 4, 4, 3), 'float32')))), 4)") == 1


def test_a_one_line_sequential_with_a_shape_keyword(kernel: KernelSession) -> None:
    cell = (
        "from keras import layers\n"
        "series_net = keras.Sequential([layers.Input(shape=(None, 5)), layers.Flatten(), "
        "layers.Dense(1)])\n"
    )
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == (
        "series_net = keras.Sequential([layers.Input(shape=(None, 5)), "
        "layers.GlobalAveragePooling1D(), layers.Dense(1)])"
    )
    runs_cleanly(kernel, "from keras import layers\n" + fix)
    assert value_of(kernel, "series_net(np.ones((4, 11, 5), 'float32')).shape.as_list()") == [4, 1]


def test_sized_and_pooled_sequential_lists_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TILE_CLASSIFIER.replace("(None, None, 3)", "(8, 8, 3)"))
    runs_cleanly(
        kernel,
        TILE_CLASSIFIER.replace("keras.layers.Flatten()", "keras.layers.GlobalMaxPooling2D()"),
    )
    assert value_of(kernel, "tiles.output_shape") == [None, 5]
