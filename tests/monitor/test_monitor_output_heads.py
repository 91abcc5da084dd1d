"""Output heads, layers, schedules, settings loops and sequences that train silently
wrong (issue #25): a regression's output activation that cannot reach its targets
(``training/loss_agreement.py``), ``if training is not None:`` guarding noise
(``training/model_source.py``), a raw ``tf.Variable`` in a Keras 3 layer
(``training/untracked_variables.py``), a schedule that fell to ~0 in the first epoch
(``training/learning_rate_decay.py``), one model fit again per setting
(``training/refit_loops.py``), ``Embedding(mask_zero=True)`` with 0 as a token
(``training/sequence_masks.py``), ``pad_sequences(truncating="post")`` cutting many
sequences (``symptoms/truncation.py``). Each in a real kernel: the note in the learner's
names, its fix run as printed (the note gone, the symptom gone), correct look-alikes
silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(5)\n"
    "points = np.random.rand(600, 4).astype('float32')\n"
    "raw = points @ np.array([3.0, -2.0, 1.0, 0.5], dtype='float32') + 10\n"
    "prices = (raw - raw.mean()) / raw.std()\n"
    "flags = (points[:, 0] > 0.5).astype('float32')"
)


def report_of(kernel: KernelSession, code: str) -> dict:
    return checked_report(run(kernel, code))


def notes_in(report: dict, section: str) -> list[str]:
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def fix_of(text: str, starts: str) -> str:
    [fix] = [s for s in re.findall(r"`([^`]+)`", text) if s.startswith(starts)]
    return fix


# ------------------------------------------------------------ output range
HEAD = 'keras.layers.Dense(1, activation="relu")'
REGRESSION = (
    "keras.utils.set_random_seed(3)\n"
    "valuer = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation='relu'), "
    f"{HEAD}])\n"
    'valuer.compile(optimizer="adam", loss="mse")\n'
    "fitted = valuer.fit(points, prices, epochs=30, verbose=0)\n"
)


def test_output_activation_that_cannot_reach_the_targets(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, REGRESSION), "output-activation")
    assert text.startswith(
        f"`valuer` ends with `valuer.layers[1]`, `{HEAD}`: activation 'relu' only outputs "
        "values in [0, inf), but `prices` (made in cell In["
    )
    # The targets' preparation is named where the learner wrote it (an earlier cell).
    assert re.search(
        r"`prices` \(made in cell In\[\d+\], line \d+: "
        r"`prices = \(raw - raw\.mean\(\)\) / raw\.std\(\)`\) run from ",
        text,
    )
    share = value_of(kernel, "int((prices < 0).sum())")
    assert f" and {share} of 600 (" in text
    assert '`loss="mse"` stays high' in text
    badly = value_of(kernel, "fitted.history['loss'][-1]")
    fix = re.findall(r"build the model with `([^`]+)`", text)[0]
    assert fix == "keras.layers.Dense(1, activation=None)"
    # The fix as printed: silent, and the same model now fits the targets.
    fixed = REGRESSION.replace(HEAD, fix)
    assert notes_in(report_of(kernel, fixed), "output-activation") == []
    assert value_of(kernel, "fitted.history['loss'][-1]") < badly / 5
    # A sigmoid head on targets outside [0, 1]: told the same way.
    sigmoid = REGRESSION.replace(HEAD, 'keras.layers.Dense(1, activation="sigmoid")')
    [text] = notes_in(report_of(kernel, sigmoid.replace("prices", "raw")), "output-activation")
    assert "activation 'sigmoid' only outputs values in (0, 1), but `raw` (made in cell In[" in text
    assert re.search(
        r"line \d+: `raw = points @ np\.array\(\[3\.0, -2\.0, 1\.0, 0\.5\], "
        r"dtype='float32'\) \+ 10`\) run from ",
        text,
    )
    assert " and 600 of 600 (100%)" in text
    # Look-alikes: a sigmoid head on 0/1 targets with mse; a relu head on positive targets.
    assert (
        notes_in(report_of(kernel, sigmoid.replace("prices", "flags")), "output-activation") == []
    )
    assert (
        notes_in(report_of(kernel, REGRESSION.replace("prices", "raw")), "output-activation") == []
    )


# ---------------------------------------------------- training is not None
JITTER = """class Jitter(keras.layers.Layer):
    def call(self, x, training=None):
        if training is not None:
            x = x + keras.random.normal(tf.shape(x), stddev=0.5)
        return x

jittery = keras.Sequential([keras.Input((4,)), Jitter(), keras.layers.Dense(1)])
jittery.compile(optimizer="adam", loss="mse")
jittery.fit(points, prices, epochs=1, verbose=0)
guess = jittery.predict(points[:8], verbose=0)
"""
STEADY = "bool(np.array_equal(guess, jittery.predict(points[:8], verbose=0)))"


def test_training_is_not_none_as_the_training_test(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, JITTER), "training-argument")
    assert value_of(kernel, STEADY) is False
    assert text.startswith(
        "`Jitter.call` applies `keras.random.normal` under `if training is not None:` (line 3)"
    )
    assert "(line 4: `x = x + keras.random.normal(tf.shape(x), stddev=0.5)`)" in text
    fix = re.findall(r"write `([^`]+)`", text)[-1]
    assert fix == "if training:"
    # The fix as printed (also the look-alike): silent, and predict is deterministic.
    fixed = JITTER.replace("if training is not None:", fix)
    assert notes_in(report_of(kernel, fixed), "training-argument") == []
    assert value_of(kernel, STEADY) is True


# -------------------------------------------------- a raw tf.Variable in a layer
SCALE = """class Scale(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.factor = tf.Variable(0.1)

    def call(self, x):
        return x * self.factor

keras.utils.set_random_seed(3)
scaled = keras.Sequential([keras.Input((4,)), Scale(), keras.layers.Dense(1)])
scaled.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
scaled.fit(points, prices, epochs=5, verbose=0)
factor = float(np.sum(scaled.layers[0].factor.numpy()))
"""


def test_raw_tf_variable_in_a_keras_layer(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, SCALE), "parameters-are-variables")
    assert value_of(kernel, "factor") == pytest.approx(0.1)
    assert text.startswith(
        "`Scale` keeps `self.factor` as a raw `tf.Variable` (line 4: "
        "`self.factor = tf.Variable(0.1)`). Keras 3 tracks only"
    )
    assert "not in `scaled.trainable_weights`" in text
    assert "2 of `scaled`'s weights changed in fit" in text
    fix = re.findall(r"fit again: `([^`]+)`", text)[-1]
    assert (
        fix
        == "self.factor = self.add_weight(shape=(), initializer=keras.initializers.Constant(0.1))"
    )
    # The fix as printed (also the look-alike: add_weight): silent, and the factor learns.
    fixed = SCALE.replace("self.factor = tf.Variable(0.1)", fix)
    assert notes_in(report_of(kernel, fixed), "parameters-are-variables") == []
    assert value_of(kernel, "factor") != pytest.approx(0.1)
    # In build, from tf.ones of a shape: the fix keeps the shape as written.
    built = SCALE.replace(
        "    def __init__(self):\n        super().__init__()\n"
        "        self.factor = tf.Variable(0.1)",
        "    def build(self, shape):\n        self.factor = tf.Variable(tf.ones(shape[-1:]))",
    )
    [text] = notes_in(report_of(kernel, built), "parameters-are-variables")
    fix = re.findall(r"fit again: `([^`]+)`", text)[-1]
    assert fix == 'self.factor = self.add_weight(shape=shape[-1:], initializer="ones")'
    assert (
        notes_in(
            report_of(kernel, built.replace("self.factor = tf.Variable(tf.ones(shape[-1:]))", fix)),
            "parameters-are-variables",
        )
        == []
    )


def test_raw_tf_variable_of_a_class_from_an_earlier_cell_names_that_cell(
    kernel: KernelSession,
) -> None:
    # The class is defined in one cell and fit in another: the defining cell tells the
    # cause and its fix (``traces/definitions.py``); the fit does not tell it again.
    definition, fitting = SCALE.split("keras.utils.set_random_seed(3)\n")
    defined = report_of(kernel, definition.replace("Scale", "EarlierScale"))
    [told] = notes_in(defined, "parameters-are-variables")
    assert told.startswith(
        "`EarlierScale.__init__` keeps `self.factor` as a raw `tf.Variable` "
        "(`self.factor = tf.Variable(0.1)`)."
    ), told
    fitting = fitting.replace("Scale()", "EarlierScale()").replace("scaled", "earlier")
    assert notes_in(report_of(kernel, fitting), "parameters-are-variables") == []
    assert defined["execution_count"] is not None


# ------------------------------------------------- a schedule that decays at once
DECAY = """keras.utils.set_random_seed(3)
fast = keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=1, decay_rate=0.5)
line = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
line.compile(optimizer=keras.optimizers.Adam(fast), loss="mse")
run_log = line.fit(points, prices, epochs=5, verbose=0)
"""


def test_learning_rate_schedule_that_decays_within_the_first_epoch(
    kernel: KernelSession,
) -> None:
    [text] = notes_in(report_of(kernel, DECAY), "stopped-learning")
    assert text.startswith(
        "`line`'s learning rate follows `keras.optimizers.schedules.ExponentialDecay(0.05, "
        "decay_steps=1, decay_rate=0.5)`, which counts optimizer steps (batches), not "
        "epochs: it was 0.05 at fit's first step and "
    )
    assert "after the first epoch (step 19), " in text
    assert "at the end (step 95)" in text
    badly = value_of(kernel, "run_log.history['loss'][-1]")
    fix = re.findall(r"fit again: `([^`]+)`", text)[-1]
    assert fix == (
        "keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=95, decay_rate=0.5)"
    )
    # The fix as printed (also the look-alike: a schedule decaying over the whole run).
    fixed = DECAY.replace(DECAY.splitlines()[1].split(" = ")[1], fix)
    assert notes_in(report_of(kernel, fixed), "stopped-learning") == []
    assert value_of(kernel, "run_log.history['loss'][-1]") < badly / 2


STAIRS = """from keras.optimizers.schedules import ExponentialDecay
keras.utils.set_random_seed(4)
stairs = ExponentialDecay(0.05, decay_steps=4, decay_rate=0.5, staircase=True)
plane = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
plane.compile(optimizer=keras.optimizers.SGD(stairs), loss="mse")
plane_log = plane.fit(points, prices, epochs=12, verbose=0)
"""


def test_schedule_counted_in_epochs_that_is_gone_by_half_way(kernel: KernelSession) -> None:
    """``decay_steps=4`` meant as "every 4 epochs": 6% of the rate after the first epoch
    (not at once), but nothing left by the middle of fit."""
    [text] = notes_in(report_of(kernel, STAIRS), "stopped-learning")
    assert text.startswith(
        "`plane`'s learning rate follows `ExponentialDecay(0.05, "
        "decay_steps=4, decay_rate=0.5, staircase=True)`, which counts optimizer steps "
        "(batches), not epochs: it was 0.05 at fit's first step and "
    ), text
    assert "half-way through fit (step 114)" in text
    assert "it fell under 0.1% of its start by half-way" in text
    assert "If 4 was meant as epochs, it is 76 steps here (4 times 19 batches per epoch)" in text
    fix = re.findall(r"model with `([^`]+)`", text)[-1]
    assert fix == "ExponentialDecay(0.05, decay_steps=76, decay_rate=0.5, staircase=True)"
    assert value_of(kernel, "float(plane.optimizer.learning_rate)") < 1e-6  # the symptom
    fixed = STAIRS.replace(STAIRS.splitlines()[2].split(" = ")[1], fix)
    assert notes_in(report_of(kernel, fixed), "stopped-learning") == []
    assert value_of(kernel, "float(plane.optimizer.learning_rate)") > 0.005
    # A second spelling (keywords, another optimizer and batch size): the same reading.
    other = (
        "keras.utils.set_random_seed(5)\n"
        "halving = keras.optimizers.schedules.ExponentialDecay(\n"
        "    initial_learning_rate=0.02, decay_steps=6, decay_rate=0.5)\n"
        "ridge = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "ridge.compile(optimizer=keras.optimizers.RMSprop(halving), loss='mse')\n"
        "ridge.fit(points, prices, epochs=10, batch_size=25, verbose=0)\n"
    )
    [text] = notes_in(report_of(kernel, other), "stopped-learning")
    assert "If 6 was meant as epochs, it is 144 steps here (6 times 24 batches per epoch)" in text
    # Look-alike: a schedule that halves over the whole run.
    slow = other.replace("decay_steps=6", "decay_steps=240")
    assert notes_in(report_of(kernel, slow), "stopped-learning") == []


# ---------------------------------------------- one model fit again per setting
SETTINGS = """keras.utils.set_random_seed(3)
probe = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
results = {}
for rate in [0.01, 0.001]:
    probe.compile(optimizer=keras.optimizers.Adam(rate), loss="mse")
    results[rate] = probe.fit(points, prices, epochs=5, verbose=0).history["loss"]
"""


def test_one_model_fit_again_for_each_setting(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, SETTINGS), "clone-model")
    assert text.startswith(
        "`probe` is fit 2 times in `for rate in [0.01, 0.001]:` (line 4 of this cell), "
        "once per `rate`, "
        "but it is the same model object each time"
    )
    first = value_of(kernel, "results[0.01][0]")
    assert f"the first fit's first-epoch loss was {first:.3g}" in text
    fix = re.findall(r"make `([^`]+)` the first statement", text)[-1]
    assert fix == SETTINGS.splitlines()[1]
    # The fix as printed (also the look-alike: a fresh model per setting): silent, and
    # the second setting now starts untrained.
    fixed = SETTINGS.replace("    probe.compile(", f"    {fix}\n    probe.compile(")
    assert notes_in(report_of(kernel, fixed), "clone-model") == []
    assert value_of(kernel, "results[0.001][0]") > value_of(kernel, "results[0.01][-1]")


# ------------------------------------------- mask_zero with 0 as a real token
TOKENS = """keras.utils.set_random_seed(3)
words = np.random.randint(0, 20, size=(200, 12))
words[:, 9:] = 0
reviews = keras.Sequential([keras.Input((12,)), keras.layers.Embedding(20, 8, mask_zero=True),
                            keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
reviews.compile(optimizer="adam", loss="mse")
reviews.fit(words, prices[:200], epochs=1, verbose=0)
"""


def test_mask_zero_with_zero_as_a_real_token(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, TOKENS), "joining-indexing")
    assert text.startswith(
        "`reviews` starts with `keras.layers.Embedding(20, 8, mask_zero=True)`, which masks "
        "every position whose id is 0 as padding, but "
    )
    rows = value_of(
        kernel,
        "int(sum(any(r[i] == 0 and r[:i].any() and r[i + 1:].any() for i in range(12))"
        " for r in words))",
    )
    assert f"but {rows} of the 200 rows read of `words` hold a 0 between two non-zero ids" in text
    assert "give the Embedding input_dim=21" in text
    fix = re.findall(r"without the mask: `([^`]+)`", text)[-1]
    assert fix == "keras.layers.Embedding(20, 8)"
    # The fix as printed: silent. Look-alike: ids from 1, zeros only as padding at the end.
    fixed = TOKENS.replace("keras.layers.Embedding(20, 8, mask_zero=True)", fix)
    assert notes_in(report_of(kernel, fixed), "joining-indexing") == []
    shifted = TOKENS.replace("(0, 20, size", "(1, 20, size")
    assert notes_in(report_of(kernel, shifted), "joining-indexing") == []


# ------------------------------------------ pad_sequences cutting the ends off
PADDED = """rng = np.random.default_rng(0)
texts = [list(rng.integers(1, 50, size=n)) for n in rng.integers(20, 60, size=100)]
padded = keras.utils.pad_sequences(texts, maxlen=25, truncating="post")
"""


def test_pad_sequences_cutting_the_end_of_many_sequences(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, PADDED), "tf-data")
    cut = value_of(kernel, "sum(len(t) > 25 for t in texts)")
    assert text.startswith(
        f"{cut} of the 100 sequences in `texts` ({cut}%) are longer than maxlen=25, and "
        'truncating="post" cuts their end'
    )
    fix = re.findall(r"tokens: `([^`]+)`", text)[-1]
    kept = value_of(kernel, "sorted(len(t) for t in texts)[90]")
    assert fix == f'keras.utils.pad_sequences(texts, maxlen={kept}, truncating="post")'
    # The fix as printed: silent. Look-alike: maxlen above almost every length.
    assert (
        notes_in(
            report_of(kernel, PADDED.replace(PADDED.splitlines()[2], f"padded = {fix}")), "tf-data"
        )
        == []
    )
    assert notes_in(report_of(kernel, PADDED.replace("maxlen=25", "maxlen=60")), "tf-data") == []
