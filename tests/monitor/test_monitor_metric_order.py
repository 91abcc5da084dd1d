"""One flat ``metrics`` list for a model whose outputs were given as a dict (issue #25):
Keras 3 pairs it with ``output_names``, the dict's names sorted, not the order the loss
dict lists them in, so a classification metric can land on a regression output without
a warning. The note names each metric where Keras put it and prints a dict keyed by
output name; the fix is run and the history then holds each metric on the output it
was meant for. The list written in ``output_names`` order, and a model whose outputs are
a list, stay silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, fix_in, note_texts, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """gen = np.random.default_rng(8)
readings = gen.normal(size=(240, 7)).astype("float32")
level = (readings[:, :3].sum(axis=1, keepdims=True)).astype("float32")
alarm = (readings[:, 4:5] > 0.3).astype("float32")
def sensor_net(as_dict=True):
    feats = keras.Input((7,))
    hid = keras.layers.Dense(16, activation="relu")(feats)
    level_out = keras.layers.Dense(1, name="level")(hid)
    alarm_out = keras.layers.Dense(1, activation="sigmoid", name="alarm")(hid)
    outs = {"level": level_out, "alarm": alarm_out} if as_dict else [level_out, alarm_out]
    return keras.Model(feats, outs)
"""
LOSS = 'loss={"level": "huber", "alarm": "binary_crossentropy"}'


def compile_and_fit(metrics: str) -> str:
    return (
        "sensors = sensor_net()\n"
        f'sensors.compile(optimizer="adam", {LOSS}, metrics={metrics})\n'
        "hist = sensors.fit(readings, {'level': level, 'alarm': alarm}, epochs=1, verbose=0)\n"
        "print(sorted(hist.history))\n"
    )


def order_notes(texts: list[str]) -> list[str]:
    return [t for t in texts if "output_names` order" in t and "metrics=" in t]


def test_flat_list_in_the_written_order_lands_on_the_other_outputs(
    kernel: KernelSession,
) -> None:
    run(kernel, SETUP)
    cell = compile_and_fit('[keras.metrics.RootMeanSquaredError(), "binary_accuracy"]')
    execution = run(kernel, cell)
    # What Keras did: the RMSE on the alarm, the accuracy on the level.
    assert "'alarm_root_mean_squared_error'" in execution.stdout
    assert "'level_binary_accuracy'" in execution.stdout
    found = order_notes(note_texts(checked_report(execution)))
    assert len(found) == 1, note_texts(checked_report(execution))
    text = found[0]
    assert "`sensors.output_names` order, alarm, level" in text, text
    assert '`"binary_accuracy"` on level, a regression output (loss `"huber"`)' in text, text
    fix = fix_in(text)
    assert fix == (
        'metrics={"level": [keras.metrics.RootMeanSquaredError()], "alarm": ["binary_accuracy"]}'
    ), fix
    fixed = cell.replace('metrics=[keras.metrics.RootMeanSquaredError(), "binary_accuracy"]', fix)
    execution = run(kernel, fixed)
    assert "'level_root_mean_squared_error'" in execution.stdout
    assert "'alarm_binary_accuracy'" in execution.stdout
    assert order_notes(note_texts(checked_report(execution))) == []


def test_list_in_output_names_order_is_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    execution = run(kernel, compile_and_fit('["binary_accuracy", "mae"]'))
    assert "'alarm_binary_accuracy'" in execution.stdout
    assert order_notes(note_texts(checked_report(execution))) == []


def test_list_outputs_pair_in_their_own_order(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = (
        "listed = sensor_net(as_dict=False)\n"
        'listed.compile(optimizer="adam", loss=["huber", "binary_crossentropy"], '
        'metrics=["mae", "binary_accuracy"])\n'
        "listed.fit(readings, [level, alarm], epochs=1, verbose=0)\n"
    )
    assert order_notes(note_texts(checked_report(run(kernel, cell)))) == []
