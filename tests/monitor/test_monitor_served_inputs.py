"""Raw inputs given to a reloaded export of a model trained on standardised ones
(``training/served_inputs.py``): nothing raises, the outputs mean little. The note names
the served call, the export that wrote it, both ranges and the scaled copy the learner
already holds; the printed fix runs and is quiet; the look-alikes (the scaled copy served,
a model trained on raw inputs served raw, a tf.Module that standardises inside) stay
silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import os, tempfile, warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(11)\n"
    "gen = np.random.default_rng(11)\n"
    "base = gen.normal(size=(600, 3)).astype('float32')\n"
    "meters = base * np.array([2.0, 300.0, 40.0], 'float32')\n"
    "meters = meters + np.array([5.0, 900.0, -60.0], 'float32')\n"
    "alarm = (base[:, 0] - base[:, 1] > 0).astype('int32')\n"
    "fit_rows, held_rows = meters[:450], meters[450:]\n"
    "centre, spread = fit_rows.mean(axis=0), fit_rows.std(axis=0)\n"
    "fit_scaled = (fit_rows - centre) / spread\n"
    "held_scaled = (held_rows - centre) / spread\n"
    "store = tempfile.mkdtemp()"
)


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "tf-data"]


TRAIN = (
    "detector = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation='relu'),"
    " keras.layers.Dense(1, activation='sigmoid')])\n"
    "detector.compile(optimizer='adam', loss='binary_crossentropy')\n"
    "detector.fit(fit_scaled, alarm[:450], epochs=2, verbose=0)\n"
)


def test_raw_rows_served_by_the_export(kernel: KernelSession) -> None:
    run(kernel, TRAIN)
    run(
        kernel,
        "bundle = os.path.join(store, 'detector_v1')\n"
        "detector.export(bundle, verbose=False)\n"
        "served = tf.saved_model.load(bundle)",
    )
    [text] = notes_of(kernel, "alarm_p = served.serve(tf.constant(held_rows)).numpy()")
    assert text.startswith(
        "`served.serve` runs `detector` as `detector.export(bundle, verbose=False)` wrote it,"
        " and was given `held_rows`, inputs from"
    )
    assert "but fit trained `detector` on `fit_scaled`, inputs from" in text
    assert "The export holds the model only" in text
    [fix] = [s for s in re.findall(r"`([^`]+)`", text) if s.startswith("served.serve(")]
    assert fix == "served.serve(tf.constant(held_scaled))"
    assert notes_of(kernel, f"alarm_p = {fix}.numpy()") == []
    assert value_of(kernel, "alarm_p.shape[0]") == 150


def test_a_signature_given_raw_rows(kernel: KernelSession) -> None:
    name = value_of(
        kernel, "list(served.signatures['serving_default'].structured_input_signature[1])[0]"
    )
    cell = f"out = served.signatures['serving_default']({name}=tf.constant(held_rows))"
    [text] = notes_of(kernel, cell)
    assert "`served.signatures['serving_default']` runs `detector`" in text
    assert f"`served.signatures['serving_default']({name}=tf.constant(held_scaled))`" in text


def test_look_alikes_stay_quiet(kernel: KernelSession) -> None:
    # A model trained on the raw rows, served raw.
    run(
        kernel,
        "raw_model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        "raw_model.compile(optimizer='adam', loss='mse')\n"
        "raw_model.fit(fit_rows, alarm[:450], epochs=1, verbose=0)\n"
        "raw_dir = os.path.join(store, 'raw')\n"
        "raw_model.export(raw_dir, verbose=False)\n"
        "raw_served = tf.saved_model.load(raw_dir)",
    )
    assert notes_of(kernel, "r = raw_served.serve(tf.constant(held_rows))") == []
    # A tf.Module that standardises inside, served raw: its statistics are in the graph.
    run(
        kernel,
        "class Scaled(tf.Module):\n"
        "    def __init__(self, net):\n"
        "        super().__init__()\n"
        "        self.net = net\n"
        "    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])\n"
        "    def serve(self, rows):\n"
        "        return self.net((rows - centre) / spread)\n"
        "wrapped_dir = os.path.join(store, 'wrapped')\n"
        "tf.saved_model.save(Scaled(detector), wrapped_dir)\n"
        "wrapped = tf.saved_model.load(wrapped_dir)",
    )
    assert notes_of(kernel, "w = wrapped.serve(tf.constant(held_rows))") == []
