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
