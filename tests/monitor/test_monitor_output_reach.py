"""A model built to reproduce data whose output activation cannot reach that data (issue
#25, ``symptoms/output_reach.py``), told in the cell that builds or compiles it: a
functional autoencoder ending in tanh over standardised readings, and a Sequential
model named as a generator ending in relu, for a cloud of points with negatives. Each fix,
applied, builds a model that stays silent and reaches the data. Look-alikes stay silent:
a sigmoid image autoencoder over pixels in [0, 1], a relu autoencoder over counts, a
softmax classifier with as many classes as features, a sigmoid multi-label head, and a
tanh generator of points in [-1, 1]."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
raw_readings = rng.normal(40.0, 6.0, size=(400, 8))
readings_z = ((raw_readings - raw_readings.mean(0)) / raw_readings.std(0)).astype("float32")
"""


def reach_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "only outputs values in" in n["text"]]


def test_functional_autoencoder_ending_in_tanh(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "inp = keras.Input((8,))\n"
        'code_layer = keras.layers.Dense(3, activation="relu")(inp)\n'
        'out = keras.layers.Dense(8, activation="tanh")(code_layer)\n'
        "compressor = keras.Model(inp, out)\n"
        'compressor.compile(optimizer="adam", loss="mae")'
    )
    [text] = reach_notes(cell, kernel)
    assert text.startswith(
        "`compressor` reproduces its input (its output has the input's shape (8,)), but it "
        'ends with `compressor.layers[2]`, `keras.layers.Dense(8, activation="tanh")`: '
        "activation 'tanh' only outputs values in (-1, 1), and the data of that shape, "
        "`readings_z`, runs from"
    )
    fix = fix_in(text)
    assert fix == "keras.layers.Dense(8, activation=None)"
    fixed = cell.replace('keras.layers.Dense(8, activation="tanh")', fix)
    assert reach_notes(fixed, kernel) == []
    run(kernel, "compressor.fit(readings_z, readings_z, epochs=5, verbose=0)")
    assert value_of(kernel, "bool(compressor.predict(readings_z, verbose=0).min() < -1.0)")


def test_generator_named_model_ending_in_relu(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, 'cloud = rng.normal(0.0, 1.5, size=(600, 3)).astype("float32")')
    cell = (
        "maker = keras.Sequential([\n"
        "    keras.Input((6,)),\n"
        '    keras.layers.Dense(16, activation="relu"),\n'
        '    keras.layers.Dense(3, activation="relu"),\n'
        '], name="point_generator")'
    )
    [text] = reach_notes(cell, kernel)
    assert "`maker` generates data (its name says so) of shape (3,) per example" in text
    assert "`cloud`" in text
    fix = fix_in(text)
    assert fix == "keras.layers.Dense(3, activation=None)"
    fixed = cell.replace('keras.layers.Dense(3, activation="relu")', fix)
    assert reach_notes(fixed, kernel) == []
    assert value_of(kernel, "maker.layers[-1].activation.__name__") == "linear"


def test_models_whose_output_reaches_the_data_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(
        kernel,
        'pixels = rng.random((50, 8, 8, 1)).astype("float32")\n'
        'counts = rng.poisson(3.0, size=(80, 5)).astype("float32")\n'
        'unit_points = rng.uniform(-1, 1, size=(90, 2)).astype("float32")',
    )
    fine = (
        "image_ae = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Flatten(),\n"
        '    keras.layers.Dense(64, activation="sigmoid"), keras.layers.Reshape((8, 8, 1))])\n'
        "conv_ae = keras.Sequential([keras.Input((8, 8, 1)),\n"
        '    keras.layers.Conv2D(1, 3, padding="same", activation="sigmoid")])\n'
        'conv_ae.compile(optimizer="adam", loss="binary_crossentropy")\n'
        "count_ae = keras.Sequential([keras.Input((5,)), keras.layers.Dense(2),\n"
        '    keras.layers.Dense(5, activation="relu")])\n'
        'count_ae.compile(optimizer="adam", loss="mse")\n'
        "picker = keras.Sequential([keras.Input((8,)),\n"
        '    keras.layers.Dense(8, activation="softmax")])\n'
        'picker.compile(optimizer="adam", loss="sparse_categorical_crossentropy")\n'
        "tagger = keras.Sequential([keras.Input((8,)),\n"
        '    keras.layers.Dense(8, activation="sigmoid")])\n'
        'tagger.compile(optimizer="adam", loss="binary_crossentropy")\n'
        "ring_gen = keras.Sequential([keras.Input((4,)),\n"
        '    keras.layers.Dense(2, activation="tanh")])\n'
    )
    assert reach_notes(fine, kernel) == []
