"""A SavedModel folder given to Keras 3's load_model (errors/families_saved_model_folder.py):
the entry names the call that wrote the folder and the two routes; the printed fix, a
TFSMLayer with the endpoint the writer made, runs and gives the model's outputs. When the
cell goes on to use the result as a model, no one-line fix is printed. A `.keras` round
trip stays silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_an_exported_folder_is_loaded_as_a_layer(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(
        kernel,
        f"""import os
os.chdir({str(tmp_path)!r})
scorer = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
probe = np.ones((4, 3), "float32")""",
    )
    cell = (
        'scorer.export("scorer_srv", verbose=False)\n'
        'reloaded = keras.models.load_model("scorer_srv")'
    )
    text = failing(kernel, cell)["explanation"]
    assert '`scorer.export("scorer_srv", verbose=False)` wrote' in text, text
    fix = fix_of(text)
    assert fix == 'reloaded = keras.layers.TFSMLayer("scorer_srv", call_endpoint="serve")'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "bool(np.allclose(reloaded(probe), scorer(probe)))") is True
    # Used as a model later in the cell: both routes told, no one-line fix.
    cell = 'served = keras.models.load_model("scorer_srv")\nprint(served.predict(probe))'
    text = failing(kernel, cell)["explanation"]
    assert "TFSMLayer" in text and "Fix: " not in text, text


def test_a_tf_saved_model_folder_gets_its_own_endpoint(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(
        kernel,
        f"""os.chdir({str(tmp_path)!r})
ranker = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
ranker(np.zeros((1, 5), "float32"))
tf.saved_model.save(ranker, "ranker_sm")""",
    )
    text = failing(kernel, 'ranker_back = keras.models.load_model("ranker_sm")')["explanation"]
    fix = fix_of(text)
    assert (
        fix == 'ranker_back = keras.layers.TFSMLayer("ranker_sm", call_endpoint="serving_default")'
    )
    runs_cleanly(kernel, fix)
    # Look-alike: a .keras round trip loads with no entry.
    runs_cleanly(
        kernel,
        'ranker.save("ranker.keras")\nranker_ok = keras.models.load_model("ranker.keras")',
    )
