"""Data that silently stops meaning what the learner thinks: features and labels shuffled
by separate calls (``symptoms/separate_shuffles.py``), a preprocessing layer adapted on
the test data (``symptoms/adapt_leaks.py``). In a real kernel: the note names the
learner's calls and data; the printed fix, run as printed, keeps rows with their labels or
the statistics of the training data, and the note is gone; correct look-alikes stay
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
    "np.random.seed(2)\n"
    "x_train = (np.random.rand(300, 3) * 10).astype('float32')\n"
    "x_test = (np.random.rand(80, 3) * 10 + 50).astype('float32')"
)


def notes_in(kernel: KernelSession, code: str, section: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def fix_of(text: str, starts: str) -> str:
    """The last code span of ``text`` that starts so (the fix comes after the quote)."""
    return [s for s in re.findall(r"`([^`]+)`", text) if s.startswith(starts)][-1]


# ------------------------------------------------------------- shuffles
DATA = "feats = np.arange(200.0).reshape(100, 2)\nlabels = (feats[:, 0] > 99).astype('int32')\n"
PAIRED = "bool(((feats[:, 0] > 99).astype('int32') == labels).all())"


def test_features_and_labels_shuffled_separately(kernel: KernelSession) -> None:
    cell = DATA + "np.random.shuffle(feats)\nnp.random.shuffle(labels)\n"
    [text] = notes_in(kernel, cell, "tf-data-order")
    assert value_of(kernel, PAIRED) is False
    assert text.startswith(
        "`np.random.shuffle(feats)` (line 3) and `np.random.shuffle(labels)` (line 4) shuffle "
        "`feats`, `labels` separately: each call draws its own random order, so after them "
        "row i of `feats` no longer goes with row i of `labels` (all 100 rows long)."
    )
    fix = fix_of(text, "idx = ")
    assert fix == "idx = np.random.permutation(len(feats)); feats, labels = feats[idx], labels[idx]"
    assert notes_in(kernel, DATA + fix, "tf-data-order") == []
    assert value_of(kernel, PAIRED) is True
    assert value_of(kernel, "bool((np.diff(feats[:, 0]) > 0).all())") is False  # shuffled
    # Look-alikes: one array shuffled; the same seed before each shuffle (one order);
    # arrays of different lengths.
    assert notes_in(kernel, DATA + "np.random.shuffle(feats)", "tf-data-order") == []
    seeded = DATA + (
        "np.random.seed(4)\nnp.random.shuffle(feats)\nnp.random.seed(4)\nnp.random.shuffle(labels)"
    )
    assert notes_in(kernel, seeded, "tf-data-order") == []
    assert value_of(kernel, PAIRED) is True
    other = DATA + "names = list(range(7))\nnp.random.shuffle(feats)\nnp.random.shuffle(names)"
    assert notes_in(kernel, other, "tf-data-order") == []


def test_features_shuffled_alone_then_paired_with_their_labels(kernel: KernelSession) -> None:
    cell = DATA + (
        "np.random.shuffle(feats)\n"
        "pairs = tf.data.Dataset.from_tensor_slices((feats, labels)).batch(10)\n"
    )
    [text] = notes_in(kernel, cell, "tf-data-order")
    assert value_of(kernel, PAIRED) is False
    assert text.startswith(
        "`np.random.shuffle(feats)` (line 3 of this cell) reorders the rows of `feats` but "
        "not those of `labels`, which `tf.data.Dataset.from_tensor_slices((feats, labels))` "
        "pairs with it row by row"
    ), text
    fix = fix_of(text, "idx = ")
    assert fix == "idx = np.random.permutation(len(feats)); feats, labels = feats[idx], labels[idx]"
    fixed = cell.replace("np.random.shuffle(feats)", fix)
    assert notes_in(kernel, fixed, "tf-data-order") == []
    assert value_of(kernel, PAIRED) is True
    # Look-alike: the labels are shuffled with their own call first, with one seed.
    assert (
        notes_in(kernel, DATA + "np.random.shuffle(feats)\nsizes = len(feats)", "tf-data-order")
        == []
    )


# --------------------------------------------------------------- adapt
def test_normalization_adapted_on_training_and_test_data(kernel: KernelSession) -> None:
    cell = (
        "norm = keras.layers.Normalization()\n"
        "everything = np.concatenate([x_train, x_test])\n"
        "norm.adapt(everything)\n"
    )
    [text] = notes_in(kernel, cell, "preprocessing-adapt")
    assert text.startswith(
        "`norm.adapt(everything)` (line 3) learns the mean and variance of `norm` from "
        "`everything` (it holds `x_test`): the data the model is evaluated on."
    )
    fix = fix_of(text, "norm.adapt(")
    assert fix == "norm.adapt(x_train)"
    assert (
        notes_in(kernel, "norm = keras.layers.Normalization()\n" + fix, "preprocessing-adapt") == []
    )
    # The training inputs come out standardised by their own statistics.
    assert abs(value_of(kernel, "float(norm(x_train).numpy().mean())")) < 1e-3
    # A second adapt on the test data replaces them: told, with the same fix.
    [again] = notes_in(kernel, "norm.adapt(x_test)", "preprocessing-adapt")
    assert again.startswith(
        "`norm.adapt(x_test)` (line 1) learns the mean and variance of `norm` from `x_test`:"
    )
    assert fix_of(again, "norm.adapt(") == "norm.adapt(x_train)"
    # Look-alikes: the training data only; a test name that is not data.
    assert notes_in(kernel, "norm.adapt(x_train)", "preprocessing-adapt") == []
    assert (
        notes_in(kernel, "test_size = 3\nnorm.adapt(x_train[:test_size])", "preprocessing-adapt")
        == []
    )


def test_normalization_adapted_on_more_rows_than_the_training_split(
    kernel: KernelSession,
) -> None:
    # Neither name says test: the adapted data holds the training rows and 30 others.
    run(
        kernel,
        "houses = {'area': (np.random.rand(100) * 100 + 20).astype('float32')}\n"
        "train_rows = {k: v[:70] for k, v in houses.items()}\n",
    )
    cell = "area_norm = keras.layers.Normalization(axis=None)\narea_norm.adapt(houses['area'])\n"
    [text] = notes_in(kernel, cell, "preprocessing-adapt")
    assert text.startswith(
        "`area_norm.adapt(houses['area'])` (line 2) learns the statistics of `area_norm` from "
        "all 100 rows of `houses['area']`, but the training split `train_rows['area']` holds "
        "only 70 of them: the other 30 rows (validation or test data)"
    ), text
    fix = fix_of(text, "area_norm.adapt(")
    assert fix == "area_norm.adapt(train_rows['area'])"
    fixed = cell.replace("area_norm.adapt(houses['area'])", fix)
    assert notes_in(kernel, fixed, "preprocessing-adapt") == []
    assert abs(value_of(kernel, "float(area_norm(train_rows['area']).numpy().mean())")) < 1e-3
    # A split drawn at random (not the first or last rows) is found by its rows too.
    run(kernel, "pool = x_train[:100]\ntraining_x = pool[np.random.permutation(100)[:60]]\n")
    [text] = notes_in(
        kernel, "norm2 = keras.layers.Normalization()\nnorm2.adapt(pool)\n", "preprocessing-adapt"
    )
    assert fix_of(text, "norm2.adapt(") == "norm2.adapt(training_x)"
    # Look-alikes: other data of more rows that holds none of the training rows; the
    # training rows themselves.
    other = (
        "fresh = (np.random.rand(500, 3) + 900).astype('float32')\n"
        "norm3 = keras.layers.Normalization()\nnorm3.adapt(fresh)\n"
    )
    assert notes_in(kernel, other, "preprocessing-adapt") == []
    assert notes_in(kernel, "norm2.adapt(training_x)", "preprocessing-adapt") == []


# --------------------------------------------------------------- adapted, never applied
RENT = (
    "rng2 = np.random.default_rng(1)\n"
    "rent = {'size': (rng2.random((64, 1)) * 900 + 100).astype('float32'),\n"
    "        'floor': rng2.random((64, 1)).astype('float32')}\n"
    "size_scaler = keras.layers.Normalization()\n"
    "size_scaler.adapt(rent['size'])\n"
)
RENT_MODEL = (
    "ins = {'size': keras.Input(shape=(1,), name='size'),\n"
    "       'floor': keras.Input(shape=(1,), name='floor')}\n"
    "joined = keras.layers.Concatenate()([ins['size'], ins['floor']])\n"
    "rent_model = keras.Model(ins, keras.layers.Dense(1)(joined))\n"
    "seen = keras.Model(ins, joined).predict(rent, verbose=0)\n"
)


def test_a_normalization_adapted_but_left_out_of_the_model(kernel: KernelSession) -> None:
    run(kernel, RENT)
    [text] = notes_in(kernel, RENT_MODEL, "preprocessing-adapt")
    assert value_of(kernel, "float(abs(seen[:, 0].mean()))") > 100  # the raw sizes
    assert text.startswith(
        "`size_scaler` was adapted, and its name says it is for `size`, but the model this "
        "cell builds never applies it: `ins['size']` (line 3) goes in raw"
    ), text
    fix = fix_of(text, "size_scaler(")
    assert fix == "size_scaler(ins['size'])"
    fixed = RENT_MODEL.replace("[ins['size'], ins['floor']]", f"[{fix}, ins['floor']]")
    assert notes_in(kernel, fixed, "preprocessing-adapt") == []
    assert value_of(kernel, "float(abs(seen[:, 0].mean()))") < 1e-3  # standardised
    # Look-alikes: a layer whose name names no input of the model; a layer never adapted.
    run(kernel, "spare_norm = keras.layers.Normalization()\nspare_norm.adapt(rent['floor'])\n")
    other = RENT_MODEL.replace("rent_model", "model_b").replace(
        "[ins['size'], ins['floor']]", "[size_scaler(ins['size']), ins['floor']]"
    )
    assert notes_in(kernel, other, "preprocessing-adapt") == []
    run(kernel, "floor_norm = keras.layers.Normalization(mean=0.5, variance=0.08)\n")
    assert notes_in(kernel, other, "preprocessing-adapt") == []


# --------------------------------------------------------------- variance given a spread
TEMPS = (
    "temps = (np.random.default_rng(3).normal(20.0, 8.0, 500)).astype('float32')\n"
    "temp_norm = keras.layers.Normalization(axis=None, mean=20.0, variance=8.0)\n"
    "scaled = temp_norm(temps).numpy()\n"
)


def test_a_normalization_given_the_standard_deviation_as_variance(
    kernel: KernelSession,
) -> None:
    [text] = notes_in(kernel, TEMPS, "preprocessing-adapt")
    assert value_of(kernel, "float(scaled.std())") > 2  # the symptom: not standardised
    assert text.startswith(
        "`temp_norm` was built with `variance=8`, but the data it scales on line 3 of this "
        "cell has a standard deviation of"
    ), text
    fix = fix_of(text, "variance=")
    assert fix == "variance=8 ** 2"
    fixed = TEMPS.replace("variance=8.0", fix)
    assert notes_in(kernel, fixed, "preprocessing-adapt") == []
    assert abs(value_of(kernel, "float(scaled.std())") - 1) < 0.1
    # Look-alikes: a variance that is a variance; a variance below 1.
    assert (
        notes_in(kernel, TEMPS.replace("variance=8.0", "variance=64.0"), "preprocessing-adapt")
        == []
    )
    small = (
        "tiny = np.random.default_rng(4).normal(0, 0.5, 200)\n"
        "tiny_norm = keras.layers.Normalization(axis=None, mean=0.0, variance=0.5)\n"
        "out = tiny_norm(tiny)\n"
    )
    assert notes_in(kernel, small, "preprocessing-adapt") == []
