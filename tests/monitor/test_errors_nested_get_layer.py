"""``get_layer`` asked for a layer that lives inside a nested model
(``errors/families_keras_api.py``): Keras looks only at the model's own layers and lists
them; the entry says which nested model holds the name and its fix reaches it through
that model by name. The fixed line gets the very layer; a name that is nowhere keeps the
plain reading (the model's layer names)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import keras
stem = keras.Sequential([keras.Input((6,)), keras.layers.Dense(5, name="stem_proj")], name="stem")
tower = keras.Sequential([keras.Input((6,)), stem, keras.layers.Dense(2, name="logits")])
"""


def test_layer_inside_a_nested_model(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "proj = tower.get_layer('stem_proj')\nproj.trainable = False")
    text = error["explanation"]
    assert (
        '"stem_proj" is not one of `tower`\'s own layers: it is inside the nested model "stem"'
        in text
    ), text
    assert "Keras names a layer when it is made" not in text
    fix = fix_of(text)
    assert fix == 'proj = tower.get_layer("stem").get_layer("stem_proj")'
    runs_cleanly(kernel, fix + "\nproj.trainable = False")
    assert value_of(kernel, "proj is stem.layers[0]") is True
    assert value_of(kernel, "len(tower.trainable_weights)") == 2


def test_a_name_nowhere_keeps_the_layer_list(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    text = failing(kernel, "tower.get_layer('stem_projection')")["explanation"]
    assert "nested model" not in text
    assert '"stem", "logits"' in text
