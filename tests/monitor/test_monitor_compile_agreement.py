"""An output layer and a loss that disagree, told in the cell that calls ``compile``
(``training/compile_agreement.py``, issue #25), as a learner writes a notebook: the model
in one cell, compile in the next, fit in a later one. The note is in the compile cell,
names the cell and line where the model's last layer was defined, and is not told again
by fit; its printed fix, run as printed, trains the model and is silent. Correct
look-alikes stay silent. A mistake only fit can see names the earlier cells that hold
its cause (the layer's definition, the targets' preparation)."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "from keras import layers\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(5)\n"
    "points = np.random.rand(600, 4).astype('float32')\n"
    "kinds = points[:, :3].argmax(1).astype('int32')\n"
    "flags = (points[:, 0] > 0.5).astype('float32')\n"
    "sizes = points.sum(1) * 2"
)

SECTIONS = {"from-logits", "labels-and-loss", "output-activation"}


def cell(kernel: KernelSession, code: str) -> dict:
    return checked_report(run(kernel, code))


def told(report: dict) -> list[str]:
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") in SECTIONS]


def fix_of(text: str, starts: str) -> str:
    [fix] = [s for s in re.findall(r"`([^`]+)`", text) if s.startswith(starts)]
    return fix


def define(kernel: KernelSession, name: str, head: str) -> int:
    """The model's cell, as a learner writes it (the head on line 4); its count."""
    report = cell(
        kernel,
        "keras.utils.set_random_seed(3)\n"
        f"{name} = keras.Sequential([\n"
        "    keras.Input((4,)),\n"
        f"    {head},\n"
        "])\n",
    )
    assert told(report) == []
    return int(report["execution_count"])


def score(kernel: KernelSession, name: str, labels: str, threshold: str = "argmax") -> float:
    scores = f"{name}.predict(points, verbose=0)"
    if threshold == "argmax":
        return value_of(kernel, f"float(np.mean({scores}.argmax(1) == {labels}))")
    return value_of(kernel, f"float(np.mean(({scores}[:, 0] > {threshold}) == ({labels} > 0.5)))")


def test_raw_scores_told_where_compile_is(kernel: KernelSession) -> None:
    defined = define(kernel, "scorer", "layers.Dense(3)")
    compile_ = (
        "scorer.compile(optimizer=keras.optimizers.Adam(0.02),\n"
        '               loss="sparse_categorical_crossentropy", metrics=["accuracy"])'
    )
    report = cell(kernel, compile_)
    assert report["traces"] == []  # the hook reads; compile traced nothing
    [text] = told(report)
    assert text.startswith(
        f"`scorer` ends with `scorer.layers[0]`, `layers.Dense(3)` (no activation; defined in "
        f"cell In[{defined}], line 4): it outputs raw scores (logits), any real number, but "
        '`loss="sparse_categorical_crossentropy"` expects probabilities (from_logits=False).'
    )
    assert "so fit will raise no error while the model trains badly" in text
    # Told once: the fit in a later cell does not repeat it.
    assert told(cell(kernel, "scorer.fit(points, kinds, epochs=30, verbose=0)")) == []
    badly = score(kernel, "scorer", "kinds")
    fix = fix_of(text, "scorer.compile(")
    assert fix == (
        "scorer.compile(optimizer=keras.optimizers.Adam(0.02), "
        "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), "
        'metrics=["accuracy"])'
    )
    # The fix as printed, on the model built again: silent at compile and fit, and it trains.
    define(kernel, "scorer", "layers.Dense(3)")
    assert told(cell(kernel, fix)) == []
    assert told(cell(kernel, "scorer.fit(points, kinds, epochs=30, verbose=0)")) == []
    assert badly < 0.9 < score(kernel, "scorer", "kinds")
    # Look-alikes: a softmax with from_logits=False (the default) or with from_logits=True
    # (Keras 3.15 takes the softmax's input as the logits: probed, it trains the same).
    define(kernel, "scorer", 'layers.Dense(3, activation="softmax")')
    assert told(cell(kernel, compile_)) == []
    assert told(cell(kernel, fix)) == []
    assert told(cell(kernel, "scorer.fit(points, kinds, epochs=30, verbose=0)")) == []
    assert score(kernel, "scorer", "kinds") > 0.9
    # A sigmoid with from_logits=True: handled by Keras the same way, silent.
    define(kernel, "gate", 'layers.Dense(1, activation="sigmoid")')
    logits = (
        'gate.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))'
    )
    assert told(cell(kernel, logits)) == []
    # Compile and fit in one cell: one note (fit's), not two.
    define(kernel, "scorer", "layers.Dense(3)")
    both = cell(kernel, compile_ + "\nscorer.fit(points, kinds, epochs=1, verbose=0)")
    assert len(told(both)) == 1
    # The monitor keeps no model alive: a compiled model told about is freed when deleted.
    define(kernel, "scorer", "layers.Dense(3)")
    assert len(told(cell(kernel, compile_))) == 1
    run(kernel, "import gc, weakref\nprobe = weakref.ref(scorer)\ndel scorer\ngc.collect()")
    assert value_of(kernel, "probe() is None") is True


def test_categorical_crossentropy_over_one_unit_told_at_compile(kernel: KernelSession) -> None:
    defined = define(kernel, "yesno", 'layers.Dense(1, activation="sigmoid")')
    compile_ = (
        'yesno.compile(optimizer=keras.optimizers.Adam(0.02), loss="categorical_crossentropy")'
    )
    [text] = told(cell(kernel, compile_))
    assert text.startswith(
        '`yesno` ends with `yesno.layers[0]`, `layers.Dense(1, activation="sigmoid")` '
        f"(defined in cell In[{defined}], line 4) and is compiled with "
        '`loss="categorical_crossentropy"`'
    )
    assert told(cell(kernel, "run_ = yesno.fit(points, flags, epochs=20, verbose=0)")) == []
    assert value_of(kernel, "sorted(set(run_.history['loss']))") == [0.0]
    fix = fix_of(text, "yesno.compile(")
    assert fix == 'yesno.compile(optimizer=keras.optimizers.Adam(0.02), loss="binary_crossentropy")'
    define(kernel, "yesno", 'layers.Dense(1, activation="sigmoid")')
    assert told(cell(kernel, fix)) == []
    assert told(cell(kernel, "run_ = yesno.fit(points, flags, epochs=20, verbose=0)")) == []
    assert score(kernel, "yesno", "flags", "0.5") > 0.9


def test_softmax_over_one_unit_told_at_compile(kernel: KernelSession) -> None:
    # The model's cell tells the layer first (training/unit_softmax_layers.py).
    built = cell(
        kernel,
        "keras.utils.set_random_seed(3)\n"
        "coin = keras.Sequential([\n"
        "    keras.Input((4,)),\n"
        '    layers.Dense(1, activation="softmax"),\n'
        "])\n",
    )
    [first] = told(built)
    assert first.startswith('`coin` has `layers.Dense(1, activation="softmax")` (line 4 of')
    defined = int(built["execution_count"])
    compile_ = 'coin.compile(optimizer=keras.optimizers.Adam(0.02), loss="binary_crossentropy")'
    [text] = told(cell(kernel, compile_))
    assert text.startswith(
        '`coin` ends with `coin.layers[0]`, `layers.Dense(1, activation="softmax")` (defined '
        f"in cell In[{defined}], line 4): softmax divides each output by the sum of all outputs"
    )
    # fit in a later cell: the same cause is not told again (fit_symptoms' note).
    assert told(cell(kernel, "coin.fit(points, flags, epochs=20, verbose=0)")) == []
    assert score(kernel, "coin", "flags", "0.5") < 0.6
    head = fix_of(text, 'layers.Dense(1, activation="sigmoid"')
    assert head == 'layers.Dense(1, activation="sigmoid")'
    # The printed layer in the model's cell, compiled as before: silent, and it trains.
    define(kernel, "coin", head)
    assert told(cell(kernel, compile_)) == []
    assert told(cell(kernel, "coin.fit(points, flags, epochs=20, verbose=0)")) == []
    assert score(kernel, "coin", "flags", "0.5") > 0.9
    # Compile and fit in one cell: one note (fit's), naming the cell that defined the layer.
    defined = define(kernel, "coin", 'layers.Dense(1, activation="softmax")')
    both = told(cell(kernel, compile_ + "\ncoin.fit(points, flags, epochs=1, verbose=0)"))
    [text] = both
    assert text.startswith(
        f"`coin`'s layer `coin.layers[0]` (defined in cell In[{defined}], line 4) applies "
        "softmax to a single unit"
    )
    assert 'For a yes/no target use `layers.Dense(1, activation="sigmoid")`' in text
    # With categorical cross-entropy the compile call is fixed as well.
    define(kernel, "coin", 'layers.Dense(1, activation="softmax")')
    [text] = told(cell(kernel, 'coin.compile(optimizer="adam", loss="categorical_crossentropy")'))
    assert 'then compile with binary cross-entropy: `coin.compile(optimizer="adam", ' in text


def test_accuracy_of_a_regression_told_at_compile(kernel: KernelSession) -> None:
    define(kernel, "gauge", "layers.Dense(1)")
    compile_ = (
        'gauge.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", metrics=["accuracy"])'
    )
    [text] = told(cell(kernel, compile_))
    assert text.startswith(
        "`gauge` is compiled with `loss=\"mse\"`, a regression loss, and the metric 'accuracy'"
    )
    assert (
        "For targets other than 0 and 1 (prices, temperatures, counts), accuracy will stay "
        "near 0 however well the model fits" in text
    )
    assert told(cell(kernel, "history = gauge.fit(points, sizes, epochs=3, verbose=0)")) == []
    assert value_of(kernel, "history.history['accuracy'][-1]") == 0.0
    fix = fix_of(text, "gauge.compile(")
    assert fix == (
        'gauge.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])'
    )
    define(kernel, "gauge", "layers.Dense(1)")
    assert told(cell(kernel, fix)) == []
    assert told(cell(kernel, "history = gauge.fit(points, sizes, epochs=20, verbose=0)")) == []
    assert value_of(kernel, "history.history['mae'][-1] < history.history['mae'][0] / 2") is True


def test_accuracy_threshold_on_raw_scores_told_at_compile(kernel: KernelSession) -> None:
    define(kernel, "gate", "layers.Dense(1)")
    compile_ = (
        'gate.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True), '
        'metrics=["accuracy"])'
    )
    [text] = told(cell(kernel, compile_))
    assert "Keras made the metric 'accuracy' a BinaryAccuracy with threshold 0.5" in text
    assert "so the accuracy fit prints will not be the model's accuracy" in text
    assert told(cell(kernel, "gate.fit(points, flags, epochs=5, verbose=0)")) == []
    fix = fix_of(text, "gate.compile(")
    assert 'metrics=[keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)]' in fix
    assert told(cell(kernel, fix)) == []
    evaluated = "dict(zip(['loss', 'accuracy'], gate.evaluate(points, flags, verbose=0)))"
    assert value_of(kernel, f"{evaluated}['accuracy']") == pytest.approx(
        score(kernel, "gate", "flags", "0")
    )


def test_correct_setups_stay_silent_at_compile(kernel: KernelSession) -> None:
    for head, compile_ in (
        (
            'layers.Dense(1, activation="sigmoid")',
            'loss="binary_crossentropy", metrics=["accuracy"]',
        ),
        ("layers.Dense(1)", 'loss="mse", metrics=["mae"]'),
        ("layers.Dense(3)", "loss=keras.losses.CategoricalCrossentropy(from_logits=True)"),
        ('layers.Dense(3, activation="softmax")', 'loss="sparse_categorical_crossentropy"'),
    ):
        define(kernel, "calm", head)
        assert told(cell(kernel, f'calm.compile(optimizer="adam", {compile_})')) == [], head


def test_fit_names_the_cells_that_hold_the_cause(kernel: KernelSession) -> None:
    # Targets standardised in one cell, a relu head in another: only fit sees the targets.
    made = cell(kernel, "target = (sizes - sizes.mean()) / sizes.std()")["execution_count"]
    defined = define(kernel, "price", 'layers.Dense(1, activation="relu")')
    # A later cell writes the same layer for something else: the model's own cell is named.
    cell(kernel, 'spare = layers.Dense(1, activation="relu")')
    assert told(cell(kernel, 'price.compile(optimizer="adam", loss="mse")')) == []
    [text] = told(cell(kernel, "price.fit(points, target, epochs=5, verbose=0)"))
    assert text.startswith(
        '`price` ends with `price.layers[0]`, `layers.Dense(1, activation="relu")` (defined in '
        f"cell In[{defined}], line 4): activation 'relu' only outputs values in [0, inf), but "
        f"`target` (made in cell In[{made}], line 1: "
        "`target = (sizes - sizes.mean()) / sizes.std()`) run from"
    )
    fixed = fix_of(text, "layers.Dense(1, activation=None")
    assert fixed == "layers.Dense(1, activation=None)"
    define(kernel, "price", fixed)
    assert told(cell(kernel, 'price.compile(optimizer="adam", loss="mse")')) == []
    assert told(cell(kernel, "price.fit(points, target, epochs=5, verbose=0)")) == []


def test_a_class_from_an_earlier_cell_is_named_by_its_cell(kernel: KernelSession) -> None:
    # A layer class in one cell, the model and fit in later ones: the note about its
    # `call` names the class's cell and line, where the learner fixes it.
    defined = cell(
        kernel,
        "class Counted(keras.layers.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.calls = 0\n"
        "\n"
        "    def call(self, x):\n"
        "        self.calls += 1\n"
        "        return x\n",
    )["execution_count"]
    define(kernel, "counting", "Counted()")
    cell(kernel, 'counting.add(layers.Dense(1))\ncounting.compile(optimizer="adam", loss="mse")')
    report = cell(kernel, "counting.fit(points, sizes, epochs=1, verbose=0)")
    [text] = [n["text"] for n in report["notes"] if "self.calls" in n["text"]]
    assert (
        f"`Counted.call` changes `self.calls` with Python (cell In[{defined}], line 7: "
        "`self.calls += 1`)" in text
    )


def test_a_loaded_model_is_not_told_its_saved_compile_again(kernel: KernelSession) -> None:
    """``load_model`` compiles the restored model with the saved settings: Keras's call,
    not the learner's. A cell that only saves, loads and compares is not told the saved
    compile's cause again (it was told where written); fitting the loaded model tells it,
    and the printed fix trains it. A compile the learner writes for it is still read."""
    define(kernel, "ranker", "layers.Dense(3)")
    compile_ = 'ranker.compile(optimizer="adam", loss="sparse_categorical_crossentropy")'
    assert len(told(cell(kernel, compile_))) == 1
    run(kernel, "import os, tempfile\nkept = os.path.join(tempfile.mkdtemp(), 'r.keras')")
    reload = (
        "ranker.save(kept)\n"
        "twin = keras.models.load_model(kept)\n"
        "same = np.allclose(twin.predict(points[:5], verbose=0), "
        "ranker.predict(points[:5], verbose=0))\n"
    )
    assert told(cell(kernel, reload)) == []
    assert value_of(kernel, "same") is True
    # Fitting the loaded model is where its saved cause matters: told there.
    [text] = told(cell(kernel, "twin.fit(points, kinds, epochs=1, verbose=0)"))
    assert "`twin` ends with" in text and "from_logits=False" in text, text
    # The learner's own compile of a loaded model is read as any compile.
    again = 'twin.compile(optimizer="adam", loss="sparse_categorical_crossentropy")'
    assert len(told(cell(kernel, again))) == 1
    # A binary head saved and restored under another name: silent at load too.
    define(kernel, "gate2", "layers.Dense(1)")
    assert (
        len(told(cell(kernel, 'gate2.compile(optimizer="sgd", loss="binary_crossentropy")'))) == 1
    )
    back = "gate2.save(kept)\nrestored_gate = keras.models.load_model(kept)\n"
    assert told(cell(kernel, back)) == []
    fixed = (
        'restored_gate.compile(optimizer="sgd", '
        "loss=keras.losses.BinaryCrossentropy(from_logits=True))"
    )
    assert told(cell(kernel, fixed)) == []
    assert told(cell(kernel, "restored_gate.fit(points, flags, epochs=1, verbose=0)")) == []
