"""A model with several named outputs given what does not follow its outputs' names
(``monitor/errors/families_output_structure.py``), and a shape given as a name holding an
int (``families_keras_arguments.py``):

- a flat ``metrics=[...]`` list for a two-output model: the entry names the outputs and
  gives each metric to the outputs of its task, read from the compile call's loss dict;
- labels keyed by a name that is no output's (in a dataset's elements, or fit's ``y``):
  the entry names the key and the output it stands for, and rewrites the dict literal;
- ``keras.Input(shape=width)`` with ``width`` an int: ``shape=(width,)``.

Each printed fix is applied and the cell runs and trains; correct look-alikes (a metrics
dict, labels keyed by the output names, a tuple shape) get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(4)
sensors = np.random.normal(size=(120, 7)).astype("float32")
load = sensors[:, :2].sum(axis=1).astype("float32")
fault = (sensors[:, 3] > 0).astype("int32")

def two_heads():
    feed = keras.Input(shape=(7,))
    mid = keras.layers.Dense(12, activation="tanh")(feed)
    return keras.Model(feed, {
        "load": keras.layers.Dense(1, name="load")(mid),
        "fault": keras.layers.Dense(2, activation="softmax", name="fault")(mid),
    })
"""
KERNEL = KernelSetup(after_load=SETUP)

FLAT = """plant = two_heads()
plant.compile(
    optimizer="adam",
    loss={"load": "mean_squared_error", "fault": keras.losses.SparseCategoricalCrossentropy()},
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)
plant.fit(sensors, {"load": load, "fault": fault}, epochs=1, verbose=0)
"""


def test_a_flat_metrics_list_goes_to_the_outputs_of_its_task(kernel: KernelSession) -> None:
    error = failing(kernel, FLAT)
    text = error["explanation"]
    assert '`plant` has 2 outputs, named "fault", "load"' in text or (
        '`plant` has 2 outputs, named "load", "fault"' in text
    )
    assert "`metrics=[keras.metrics.SparseCategoricalAccuracy()]`" in text
    fix = fix_of(text)
    assert fix == 'metrics={"fault": [keras.metrics.SparseCategoricalAccuracy()]}'
    assert error["course"]["section"] == "functional-api"
    fixed = FLAT.replace("metrics=[keras.metrics.SparseCategoricalAccuracy()]", fix)
    fixed = fixed.replace("plant.fit(", "hist = plant.fit(")
    assert checked_report(run(kernel, fixed))["error"] is None
    keys = value_of(kernel, "sorted(hist.history)")
    assert "fault_sparse_categorical_accuracy" in keys
    assert not any("load_" in key and "accuracy" in key for key in keys)


def test_without_a_loss_dict_the_outputs_are_named_without_a_guess(
    kernel: KernelSession,
) -> None:
    cell = FLAT.replace(
        'loss={"load": "mean_squared_error", '
        '"fault": keras.losses.SparseCategoricalCrossentropy()}',
        'loss=["mean_squared_error", "sparse_categorical_crossentropy"]',
    )
    text = failing(kernel, cell)["explanation"]
    assert "Give the metrics as a dict keyed by output name" in text
    assert "Fix:" not in text


def test_a_metrics_dict_per_output_is_quiet(kernel: KernelSession) -> None:
    cell = FLAT.replace(
        "metrics=[keras.metrics.SparseCategoricalAccuracy()]",
        'metrics={"fault": ["accuracy"], "load": ["mae"]}',
    )
    assert checked_report(run(kernel, cell))["error"] is None


DATASET = """stream = tf.data.Dataset.from_tensor_slices(
    (sensors, {"load": load, "broken": fault})
).batch(32)
plant = two_heads()
plant.compile(optimizer="adam",
              loss={"load": "mse", "fault": "sparse_categorical_crossentropy"})
plant.fit(stream, epochs=1, verbose=0)
"""


def test_a_dataset_label_key_that_names_no_output(kernel: KernelSession) -> None:
    error = failing(kernel, DATASET)
    text = error["explanation"]
    assert "the labels given to `fit` are a dict keyed by" in text
    assert '`"broken"` matches no output and `"fault"` gets no labels' in text
    fix = fix_of(text)
    assert fix == '{"load": load, "fault": fault}'
    assert 'replace `{"load": load, "broken": fault}` by' in text
    fixed = DATASET.replace('{"load": load, "broken": fault}', fix)
    fixed = fixed.replace("plant.fit(", "hist = plant.fit(")
    assert checked_report(run(kernel, fixed))["error"] is None
    assert "fault_loss" in value_of(kernel, "sorted(hist.history)")


def test_a_label_key_in_fits_own_line(kernel: KernelSession) -> None:
    cell = """plant = two_heads()
plant.compile(optimizer="adam", loss={"load": "mse", "fault": "sparse_categorical_crossentropy"})
plant.fit(sensors, {"lod": load, "fault": fault}, epochs=1, verbose=0)
"""
    text = failing(kernel, cell)["explanation"]
    assert '`"lod"` matches no output and `"load"` gets no labels' in text
    fix = fix_of(text)
    assert fix == '{"load": load, "fault": fault}'
    assert (
        checked_report(run(kernel, cell.replace('{"lod": load, "fault": fault}', fix)))["error"]
        is None
    )


def test_labels_keyed_by_the_output_names_are_quiet(kernel: KernelSession) -> None:
    cell = DATASET.replace('"broken"', '"fault"')
    assert checked_report(run(kernel, cell))["error"] is None


def test_a_name_holding_an_int_given_as_a_shape(kernel: KernelSession) -> None:
    cell = "width = 7\nprobe_in = keras.Input(shape=width)\n"
    text = failing(kernel, cell)["explanation"]
    assert "was given `width` (`width` holds the int 7) as `shape`" in text
    assert "`(width,)`" in text
    fix = fix_of(text)
    assert fix == "probe_in = keras.Input(shape=(width,))"
    assert checked_report(run(kernel, "width = 7\n" + fix))["error"] is None
    assert value_of(kernel, "list(probe_in.shape)") == [None, 7]
