"""An Embedding sized by a number written by hand while the notebook names the vocabulary
size (issue #25): ``VOCAB_SIZE = vectorizer.vocabulary_size()`` exists, the layer got a
smaller literal, and an id past it is refused. The entry names the constant and the fix
passes it where the number was written, in a class's constructor call or at the
Embedding itself; the fix runs in the kernel. With no such constant the fix stays as
before (the ids' largest + 1)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_TOKENS = """
words = ["red", "green", "blue", "cyan", "pink", "gray", "teal", "gold"]
to_ids = keras.layers.StringLookup()
to_ids.adapt(words)
N_TOKENS = to_ids.vocabulary_size()
sentences = to_ids(tf.constant([["red", "gold", "teal"], ["pink", "gray", "blue"]]))
"""

_CLASS = """
class Bag(keras.layers.Layer):
    def __init__(self, n_ids, width, **kwargs):
        super().__init__(**kwargs)
        self.table = keras.layers.Embedding(n_ids, width)

    def call(self, ids):
        return keras.ops.mean(self.table(ids), axis=1)
"""


def test_a_class_given_a_literal_where_the_constant_is_named(kernel: KernelSession) -> None:
    runs_cleanly(kernel, _TOKENS + _CLASS)
    error = failing(kernel, "bag = Bag(5, 4)\npooled = bag(sentences)")
    text = error["explanation"]
    assert "`N_TOKENS` (`to_ids.vocabulary_size()`, 9)" in text
    fix = fix_of(text)
    assert fix == "bag = Bag(N_TOKENS, 4)"
    runs_cleanly(kernel, fix + "\npooled = bag(sentences)\nassert pooled.shape == (2, 4)")
    # The look-alike: the constant given already.
    runs_cleanly(kernel, "other = Bag(N_TOKENS, 3)(sentences)")


def test_an_embedding_given_a_literal_where_the_constant_is_named(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        "codes = keras.layers.IntegerLookup()\ncodes.adapt(np.array([10, 20, 30, 40, 50, 60]))\n"
        "n_codes = codes.vocabulary_size()\nseq = codes(np.array([[60, 10], [50, 40]]))",
    )
    cell = "vec = keras.layers.Embedding(3, 2)\nout = vec(seq)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`n_codes` holds `codes.vocabulary_size()` (7)" in text
    fix = fix_of(text)
    assert fix == "keras.layers.Embedding(n_codes, 2)"
    runs_cleanly(
        kernel,
        cell.replace("keras.layers.Embedding(3, 2)", fix) + "\nassert out.shape == (2, 2, 2)",
    )
    runs_cleanly(kernel, "fine = keras.layers.Embedding(n_codes, 5)(seq)")
