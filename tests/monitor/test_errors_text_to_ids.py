"""Raw text given to a model that reads token ids (``errors/families_text_to_ids.py``):
Keras's ``Invalid dtype: str...`` says nothing about tokens; the entry names the Embedding
and its fix maps the text with what the notebook holds, then predicts in the kernel."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]


def test_text_to_an_embedding_model_with_a_word_dict(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "lexicon = {w: i + 1 for i, w in enumerate('cat dog bird fish lion bear'.split())}\n"
        "reader = keras.Sequential([keras.Input((6,), dtype='int32'),\n"
        "    keras.layers.Embedding(len(lexicon) + 1, 4), keras.layers.GlobalAveragePooling1D(),\n"
        "    keras.layers.Dense(1)])\n"
        "phrases = ['cat and dog', 'a lion']",
    )
    error = failing(kernel, "guess = reader.predict(np.array(phrases), verbose=0)")
    text = error["explanation"]
    assert "starts from an `Embedding` layer" in text and "`phrases` is raw text" in text
    fix = fix_of(text)
    assert fix == (
        "guess = reader.predict(keras.utils.pad_sequences([[lexicon[w] for w in s.split() "
        "if w in lexicon] for s in phrases], maxlen=6), verbose=0)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(guess.shape)") == [2, 1]


def test_text_to_a_functional_model_of_any_length(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "token_of = {t: k for k, t in enumerate('_ up down left right stop'.split())}\n"
        "moves_in = keras.Input((None,), dtype='int32')\n"
        "pooled = keras.layers.GlobalMaxPooling1D()(keras.layers.Embedding(6, 3)(moves_in))\n"
        "router = keras.Model(moves_in, keras.layers.Dense(3, activation='softmax')(pooled))",
    )
    error = failing(kernel, "print(router.predict(np.asarray(['up up left', 'stop']), verbose=0))")
    fix = fix_of(error["explanation"])
    assert fix == (
        "print(router.predict(keras.utils.pad_sequences([[token_of[w] for w in s.split() "
        "if w in token_of] for s in ['up up left', 'stop']]), verbose=0))"
    )
    runs_cleanly(kernel, fix)
    # Ids given directly stay quiet.
    runs_cleanly(kernel, "ok = router.predict(np.array([[1, 1, 3], [5, 0, 0]]), verbose=0)")
