"""Test data that skipped the training data's preprocessing (issue #25, silent bugs): a
standardising function applied to the training table only, and sequences centred by a
notebook function before padding while the test sequences are padded raw, are told with
the function named and the statement written for the test data; the fixes run and the
test data then comes out on the training data's scale. Two raw splits of one
distribution and test data preprocessed like the training data stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(8)
raw_tr = gen.normal(40.0, 12.0, size=(300, 4)).astype("float32")
raw_te = gen.normal(40.0, 12.0, size=(90, 4)).astype("float32")
MU, SD = raw_tr.mean(axis=0), raw_tr.std(axis=0)

def standardise(x):
    return (x - MU) / SD

feats_tr = tf.constant(standardise(raw_tr))

def centre(seq):
    seq = seq - seq.mean(axis=0)
    return seq / np.abs(seq).max()

def make_seqs(n):
    return [
        gen.normal(gen.uniform(-5, 5), gen.uniform(1, 4), size=(int(gen.integers(5, 21)), 2))
        for _ in range(n)
    ]

train_seqs, test_seqs = make_seqs(200), make_seqs(60)
train_c = [centre(s) for s in train_seqs]
train_pad = keras.utils.pad_sequences(train_c, maxlen=20, dtype="float32", padding="post")
"""


def scale_notes(report: dict[str, Any]) -> list[str]:
    wanted = "did not go through the preprocessing"
    return [n["text"] for n in report["notes"] if wanted in n["text"]]


def fixes_of(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Apply it to the test data too: ", 1)[1])


def test_a_standardising_function_applied_to_the_training_table_only(
    kernel: KernelSession,
) -> None:
    run(kernel, DATA)
    cell = "feats_te = tf.constant(raw_te)\n"
    notes = scale_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`feats_te` (line 1) is the test counterpart of `feats_tr` (the same shape after the "
        "first axis), but its values are on another scale"
    )
    assert "`feats_tr` was made through `standardise` (`feats_tr = " in notes[0]
    fixes = fixes_of(notes[0])
    assert fixes == ["feats_te = tf.constant(standardise(raw_te))"]
    fixed = fixes[0] + "\n"
    assert scale_notes(checked_report(run(kernel, fixed))) == []
    check = """spread = tf.math.reduce_std(feats_te, axis=0).numpy()
assert np.all((spread > 0.7) & (spread < 1.4)), spread
"""
    checked_report(run(kernel, check))


def test_sequences_padded_raw_where_the_training_ones_were_centred(
    kernel: KernelSession,
) -> None:
    run(kernel, DATA)
    cell = (
        "test_pad = keras.utils.pad_sequences("
        'test_seqs, maxlen=20, dtype="float32", padding="post")\n'
    )
    notes = scale_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert (
        "`train_pad` was made through `centre` (`train_c = [centre(s) for s in train_seqs]`)"
        in notes[0]
    )
    fixes = fixes_of(notes[0])
    assert fixes == [
        "test_c = [centre(s) for s in test_seqs]",
        'test_pad = keras.utils.pad_sequences(test_c, maxlen=20, dtype="float32", padding="post")',
    ]
    fixed = "\n".join(fixes) + "\n"
    assert scale_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert np.abs(test_pad).max() <= 1.0 + 1e-6"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """a_train = gen.normal(50.0, 10.0, size=(200, 3))
a_test = gen.normal(50.0, 10.0, size=(80, 3))
feats_te = tf.constant(standardise(raw_te))
z_tr = gen.normal(size=(150, 5))
z_te = gen.normal(size=(50, 5))
"""
    assert scale_notes(checked_report(run(kernel, cell))) == []
