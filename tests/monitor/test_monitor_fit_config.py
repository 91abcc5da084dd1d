"""Silent mistakes in what Keras 3's fit/evaluate/predict were given (``fit_config.py``):
a callback whose mode contradicts its monitor, a Normalization layer never adapted, a
nested model frozen after fit without compile, a clone_model copy used with its random
weights. Each mistake in a real kernel, its printed fix run as printed (the symptom
gone), and correct look-alikes that stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import (
    IMPORTS,
    KernelSession,
    KernelSetup,
    changes_of,
    checked_report,
    run,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "keras.utils.set_random_seed(11)\n"
    "readings = np.random.rand(96, 4).astype('float32') * 30 + 5\n"
    "grade = (readings[:, 1] > 20).astype('int32')\n"
    "level = readings[:, :1] * 0.1"
)

SECTIONS = {"callback-mode", "preprocessing-adapt", "clone-model", "trainable-weights"}


def report_of(kernel: KernelSession, code: str) -> dict:
    return checked_report(run(kernel, code))


def notes_in(report: dict, section: str) -> list[str]:
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def quiet(report: dict) -> bool:
    """No entry of this module's sections."""
    entries = [*report["variables"], *report["notes"]]
    return not [e for e in entries if (e["course"] or {}).get("section") in SECTIONS]


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def classifier(name: str) -> str:
    return (
        f"{name} = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, "
        'activation="relu"), keras.layers.Dense(2, activation="softmax")])\n'
        f'{name}.compile(optimizer="adam", loss="sparse_categorical_crossentropy", '
        'metrics=["accuracy"])\n'
    )


# ------------------------------------------------------------------ callbacks
WATCH = (
    "watcher = keras.callbacks.EarlyStopping(monitor='val_loss', mode='max', patience=1, "
    "restore_best_weights=True)\n"
    + classifier("sorter")
    + "trail = sorter.fit(readings, grade, validation_split=0.25, epochs=12, verbose=0, "
    "callbacks=[watcher])\n"
)


def test_early_stopping_mode_against_a_loss(kernel: KernelSession) -> None:
    report = report_of(kernel, WATCH)
    [text] = notes_in(report, "callback-mode")
    assert text.startswith("`watcher` (EarlyStopping) watches 'val_loss' with mode='max'")
    assert "stops training after patience + 1 = 2 epochs (this fit ran 2 of 12 epochs)" in text
    assert "restore_best_weights=True then put back the weights of epoch 1" in text
    assert value_of(kernel, "len(trail.epoch)") == 2
    # The fix, as printed: the callback again with mode="min", then the same fit.
    [fix] = [s for s in spans(text) if s.startswith("watcher = ")]
    assert fix == (
        'watcher = keras.callbacks.EarlyStopping(monitor="val_loss", mode="min", '
        "patience=1, restore_best_weights=True)"
    )
    report = report_of(kernel, WATCH.replace(WATCH.splitlines()[0] + "\n", fix + "\n"))
    assert quiet(report)
    assert value_of(kernel, "len(trail.epoch)") > 2
    # Look-alikes: mode="max" on an accuracy, mode="auto" on a loss.
    maxed = WATCH.replace("monitor='val_loss', mode='max'", "monitor='val_accuracy', mode='max'")
    assert quiet(report_of(kernel, maxed))
    assert quiet(report_of(kernel, WATCH.replace(", mode='max'", "")))


def test_checkpoint_and_plateau_given_inline(kernel: KernelSession) -> None:
    code = classifier("ranker") + (
        "ranker.fit(readings, grade, validation_split=0.25, epochs=3, verbose=0, callbacks=["
        "keras.callbacks.ModelCheckpoint(store, monitor='val_accuracy', mode='min', "
        "save_best_only=True), "
        "keras.callbacks.ReduceLROnPlateau(monitor='loss', mode='max', patience=1)])\n"
    )
    run(kernel, "import tempfile, os\nstore = os.path.join(tempfile.mkdtemp(), 'top.keras')")
    report = report_of(kernel, code)
    checkpoint, plateau = notes_in(report, "callback-mode")
    assert checkpoint.startswith("the ModelCheckpoint given to fit watches 'val_accuracy'")
    assert "keeps the epoch with the lowest val_accuracy" in checkpoint
    assert plateau.startswith("the ReduceLROnPlateau given to fit watches 'loss' with mode='max'")
    assert "multiplies the learning rate by 0.1 every 2 epochs" in plateau
    [fix] = [s for s in spans(plateau) if s.startswith("callbacks=")]
    assert fix == (
        'callbacks=[keras.callbacks.ReduceLROnPlateau(monitor="loss", mode="min", patience=1)]'
    )
    fixed = classifier("ranker") + f"ranker.fit(readings, grade, epochs=3, verbose=0, {fix})"
    assert quiet(report_of(kernel, fixed))
    # Look-alike: a checkpoint saving every epoch does not use its monitor.
    every = code.replace("save_best_only=True), ", "), ").replace(
        "keras.callbacks.ReduceLROnPlateau(monitor='loss', mode='max', patience=1)", ""
    )
    assert quiet(report_of(kernel, every))


# ------------------------------------------------------------- normalization
SCALED = (
    "rescale = keras.layers.Normalization()\n"
    "gauge = keras.Sequential([keras.Input((4,)), rescale, keras.layers.Dense(1)])\n"
    'gauge.compile(optimizer="sgd", loss="mse")\n'
    "gauge.fit(readings, level, epochs=2, verbose=0)\n"
)
PASSES_THROUGH = "bool(np.allclose(rescale(readings[:3]).numpy(), readings[:3]))"


def test_normalization_never_adapted(kernel: KernelSession) -> None:
    report = report_of(kernel, SCALED)
    [text] = notes_in(report, "preprocessing-adapt")
    assert text.startswith("`rescale` in `gauge` was never adapted")
    assert "passes its inputs through unchanged and the fit ran on unscaled features" in text
    assert value_of(kernel, PASSES_THROUGH) is True
    assert "`rescale.adapt(readings)`" in text
    assert "then compile `gauge` again" in text
    # The fix as printed: adapt, compile again, fit.
    fixed = SCALED.replace("gauge.compile", "rescale.adapt(readings)\ngauge.compile")
    assert quiet(report_of(kernel, fixed))
    assert value_of(kernel, PASSES_THROUGH) is False
    centred = "float(abs(gauge.predict(readings, verbose=0).mean()) < 1e6)"
    assert value_of(kernel, centred) == 1.0
    # Given its statistics, it is right too.
    given = SCALED.replace(
        "keras.layers.Normalization()",
        "keras.layers.Normalization(mean=readings.mean(0), variance=readings.var(0))",
    )
    assert quiet(report_of(kernel, given))
    # predict on a model whose layer is not adapted, reached by position.
    inline = (
        "probe = keras.Sequential([keras.Input((4,)), keras.layers.Normalization(), "
        "keras.layers.Dense(1)])\nprobe.predict(readings, verbose=0)\npass"
    )
    [text] = notes_in(report_of(kernel, inline), "preprocessing-adapt")
    assert "`probe.layers[0]` in `probe`" in text and "the predict ran" in text
    assert "`probe.layers[0].adapt(readings)`" in text


# ------------------------------------------------------------------ freezing
NESTED = (
    "encoder = keras.Sequential([keras.Input((4,)), "
    'keras.layers.Dense(5, activation="relu")])\n'
    'judge = keras.Sequential([encoder, keras.layers.Dense(2, activation="softmax")])\n'
    'judge.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")\n'
    "judge.fit(readings / 30, grade, epochs=1, verbose=0)\n"
)
FREEZE = (
    "encoder.trainable = False\n"
    "kept = encoder.layers[0].kernel.numpy().copy()\n"
    "judge.fit(readings / 30, grade, epochs=1, verbose=0)\n"
)
ENCODER_MOVED = "bool(np.any(encoder.layers[0].kernel.numpy() != kept))"


def test_nested_model_frozen_in_a_later_cell(kernel: KernelSession) -> None:
    run(kernel, NESTED)
    report = report_of(kernel, FREEZE)
    [flag] = changes_of(report, "trainable_flag")
    assert flag["name"] == "encoder.trainable"  # the learner's name, not sequential_<n>
    assert "Call `judge.compile(...)` again" in flag["text"]
    assert value_of(kernel, ENCODER_MOVED) is True  # what the entry says: still trained
    # The fix: compile again after freezing; the frozen weights stay.
    run(kernel, NESTED)
    compiled = 'judge.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")\n'
    report = report_of(kernel, FREEZE.replace("kept =", compiled + "kept ="))
    assert changes_of(report, "trainable_flag") == []
    assert value_of(kernel, ENCODER_MOVED) is False


def test_nested_model_frozen_in_the_same_cell(kernel: KernelSession) -> None:
    report = report_of(kernel, NESTED + FREEZE)
    [flag] = changes_of(report, "trainable_flag")
    assert flag["name"] == "encoder.trainable"
    text = flag["text"]
    assert "`encoder.trainable = False` came after `judge` was fit in this cell" in text
    assert "2 of 2 of `encoder`'s weights changed during that fit" in text
    assert value_of(kernel, ENCODER_MOVED) is True
    call = 'judge.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")'
    assert f"Call `{call}` again after setting trainable" in text
    # The printed fix, where the entry says: after setting trainable, before fit.
    report = report_of(kernel, NESTED + FREEZE.replace("kept =", f"{call}\nkept ="))
    assert changes_of(report, "trainable_flag") == [] and quiet(report)
    assert value_of(kernel, ENCODER_MOVED) is False
    # Look-alike: frozen before the first fit.
    frozen_first = NESTED.replace("judge.compile", "encoder.trainable = False\njudge.compile")
    assert quiet(report_of(kernel, frozen_first))


# -------------------------------------------------------------------- clones
ORIGINAL = classifier("oracle") + "oracle.fit(readings / 30, grade, epochs=3, verbose=0)\n"
CLONED = (
    "twin = keras.models.clone_model(oracle)\n"
    'twin.compile(optimizer="adam", loss="sparse_categorical_crossentropy", '
    'metrics=["accuracy"])\n'
)
SAME = "bool(np.allclose(twin(readings / 30).numpy(), oracle(readings / 30).numpy()))"


def test_clone_used_with_its_random_weights(kernel: KernelSession) -> None:
    run(kernel, ORIGINAL + CLONED)
    report = report_of(kernel, "twin.evaluate(readings / 30, grade, verbose=0)\npass")
    [text] = notes_in(report, "clone-model")
    assert text.startswith("`twin` was made by clone_model")
    assert "before this evaluate" in text
    assert "`twin.set_weights(oracle.get_weights())`" in text
    assert value_of(kernel, SAME) is False
    # The fix as printed, then the same use: silent, and the same predictions.
    run(kernel, CLONED + "twin.set_weights(oracle.get_weights())")
    assert quiet(report_of(kernel, "twin.evaluate(readings / 30, grade, verbose=0)\npass"))
    assert value_of(kernel, SAME) is True
    # Look-alike: a clone trained from scratch before use.
    trained = CLONED + "twin.fit(readings / 30, grade, epochs=1, verbose=0)\n"
    assert quiet(report_of(kernel, trained + "twin.predict(readings / 30, verbose=0)\npass"))
    # Imported by name before the monitor hooked anything: still seen.
    by_name = CLONED.replace("keras.models.clone_model", "copy_model")
    run(kernel, "from keras.models import clone_model as copy_model\n" + by_name)
    [text] = notes_in(report_of(kernel, "twin.predict(readings, verbose=0)\npass"), "clone-model")
    assert "before this predict" in text
