"""A layer made trainable after its model's train step was built, then fit again without
compile (issue #25, "explain code it has never seen"): Keras 3 reuses the step it built at
the first fit after compile, so the unfrozen weights never move. The entry names the
statement that set the flag, the compile before it and the fit after it, and prints the
learner's own compile statement as the fix (with the learning rate set since, and a new
optimizer where theirs is a built one held by a name). The fix is run: the weights then
move. No GradientTape recipe is printed for a model fit trains. A flag set before
compile, or a compile after the flag, stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, changes_of, checked_report, fix_in, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """rs = np.random.default_rng(11)
pts = rs.uniform(-1, 1, size=(160, 5)).astype("float32")
target = (pts[:, :2].sum(axis=1, keepdims=True) ** 2).astype("float32")
"""


def encoder(name: str) -> str:
    return (
        f"{name} = keras.Sequential([keras.Input((5,)), "
        f'keras.layers.Dense(12, activation="tanh", name="{name}_hidden")], name="{name}")\n'
    )


def regressor(model: str, base: str) -> str:
    return (
        f"{base}.trainable = False\n"
        f"z_in = keras.Input((5,))\n"
        f"{model} = keras.Model(z_in, keras.layers.Dense(1, name='{model}_out')({base}(z_in)))\n"
    )


def moved(base: str) -> str:
    return f"print('moved', not np.allclose(snap, {base}.layers[0].kernel.numpy()))\n"


SNAP = "snap = {base}.layers[0].kernel.numpy().copy()\n"


def entries(report: dict[str, Any]) -> list[str]:
    return [c["text"] for c in report["variables"]]


def test_unfrozen_after_fit_in_the_same_cell(kernel: KernelSession) -> None:
    run(kernel, DATA + encoder("enc"))
    cell = (
        regressor("reg", "enc")
        + 'reg.compile(optimizer=keras.optimizers.RMSprop(0.01), loss="mae")\n'
        + "reg.fit(pts, target, epochs=2, batch_size=40, verbose=0)\n"
        + "enc.trainable = True\n"
        + "reg.optimizer.learning_rate = 0.002\n"
        + SNAP.format(base="enc")
        + "reg.fit(pts, target, epochs=2, batch_size=40, verbose=0)\n"
        + moved("enc")
    )
    execution = run(kernel, cell)
    assert "moved False" in execution.stdout
    report = checked_report(execution)
    texts = [c["text"] for c in changes_of(report, "trainable_flag")]
    assert len(texts) == 1, entries(report)
    text = texts[0]
    assert "`enc.trainable = True` (line 6 of this cell)" in text, text
    assert "line 4 of this cell" in text and "the fit at line 9 of this cell" in text, text
    assert "none of `enc`'s 2 weights changed" in text, text
    assert all("tape.gradient" not in t for t in entries(report)), entries(report)
    fix = fix_in(text)
    assert fix == 'reg.compile(optimizer=keras.optimizers.RMSprop(0.002), loss="mae")', fix
    # The corrected cell: the fix after the flag, before the second fit.
    fixed = cell.replace(
        "reg.optimizer.learning_rate = 0.002\n", f"reg.optimizer.learning_rate = 0.002\n{fix}\n"
    )
    run(kernel, encoder("enc"))
    execution = run(kernel, fixed)
    assert "moved True" in execution.stdout
    assert entries(checked_report(execution)) == []
    lr = run(kernel, "print(float(reg.optimizer.learning_rate))").stdout
    assert abs(float(lr) - 0.002) < 1e-9


def test_unfrozen_in_an_earlier_cell_with_a_named_optimizer(kernel: KernelSession) -> None:
    run(kernel, DATA + encoder("trunk"))
    setup = (
        regressor("fitter", "trunk")
        + "nadam = keras.optimizers.Nadam(learning_rate=0.005)\n"
        + 'fitter.compile(optimizer=nadam, loss="mse")\n'
        + "fitter.fit(pts, target, epochs=1, verbose=0)\n"
        + "fitter.get_layer('trunk').trainable = True\n"
    )
    run(kernel, setup)
    later = SNAP.format(base="trunk") + "fitter.fit(pts, target, epochs=2, verbose=0)\n"
    execution = run(kernel, later + moved("trunk"))
    assert "moved False" in execution.stdout
    report = checked_report(execution)
    texts = [c["text"] for c in changes_of(report, "trainable_flag")]
    assert len(texts) == 1, entries(report)
    assert "`fitter.get_layer('trunk').trainable = True` (cell In[" in texts[0], texts[0]
    fix = fix_in(texts[0])
    # The built optimizer would refuse the new weights: a new one, made as the learner did.
    assert fix == (
        'fitter.compile(optimizer=keras.optimizers.Nadam(learning_rate=0.005), loss="mse")'
    ), fix
    execution = run(kernel, fix + "\n" + later + moved("trunk"))
    assert "moved True" in execution.stdout
    assert entries(checked_report(execution)) == []


def test_flag_set_before_compile_is_silent(kernel: KernelSession) -> None:
    run(kernel, DATA + encoder("stem"))
    cell = (
        regressor("head_net", "stem")
        + 'head_net.compile(optimizer="adam", loss="mse")\n'
        + "head_net.fit(pts, target, epochs=1, verbose=0)\n"
        + "stem.trainable = True\n"
        + 'head_net.compile(optimizer=keras.optimizers.Adam(1e-4), loss="mse")\n'
        + SNAP.format(base="stem")
        + "head_net.fit(pts, target, epochs=1, verbose=0)\n"
        + moved("stem")
    )
    execution = run(kernel, cell)
    assert "moved True" in execution.stdout
    assert entries(checked_report(execution)) == []


def test_compile_after_the_flag_without_fit_is_silent(kernel: KernelSession) -> None:
    """Fit while frozen, unfreeze and compile again: the next fit builds a new step, so
    nothing is left unapplied (no tape recipe, no entry)."""
    run(kernel, DATA + encoder("core"))
    cell = (
        regressor("probe", "core")
        + 'probe.compile(optimizer="sgd", loss="mse")\n'
        + "probe.fit(pts, target, epochs=1, verbose=0)\n"
        + "core.trainable = True\n"
        + 'probe.compile(optimizer="sgd", loss="mse")\n'
    )
    assert entries(checked_report(run(kernel, cell))) == []
