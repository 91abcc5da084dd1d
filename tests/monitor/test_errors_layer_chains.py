"""A layer given what the layer before it produces (issue #25): the cause named from the
model's definition (an RNN without return_sequences=True, token ids without an Embedding,
Concatenate of different ranks, one layer object listed several times, a multi-input
model given its data in another order). Each fix is run in the kernel; correct
look-alikes get no such entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport keras\nfrom keras import layers")


def test_a_recurrent_layer_after_one_without_return_sequences(kernel: KernelSession) -> None:
    cell = (
        "steps_in = keras.Input(shape=(10, 3))\n"
        "encoded = layers.LSTM(8)(steps_in)\n"
        "summary = layers.GRU(4)(encoded)"
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert error["course"]["section"] == "functional-api"
    assert "`layers.LSTM(8)` returns only its last step's output" in explanation
    assert "`layers.GRU(4)` after it needs the whole sequence" in explanation
    fix = fix_of(explanation)
    assert fix == "encoded = layers.LSTM(8, return_sequences=True)(steps_in)"
    runs_cleanly(kernel, cell.replace("encoded = layers.LSTM(8)(steps_in)", fix))
    # The look-alike that is right: stacked with return_sequences=True, no entry at all.
    runs_cleanly(
        kernel,
        "stacked = keras.Sequential([keras.Input(shape=(10, 3)), "
        "layers.LSTM(8, return_sequences=True), layers.LSTM(4)])",
    )


def test_stacked_layers_in_a_sequential_list(kernel: KernelSession) -> None:
    cell = (
        "stack = keras.Sequential([keras.Input(shape=(10, 3)), "
        "layers.Bidirectional(layers.LSTM(8)), layers.LSTM(4)])"
    )
    error = failing(kernel, cell)
    assert "`layers.Bidirectional(layers.LSTM(8))` returns only" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert "layers.Bidirectional(layers.LSTM(8, return_sequences=True))" in fix
    runs_cleanly(kernel, fix)


def test_token_ids_into_a_recurrent_layer_need_an_embedding(kernel: KernelSession) -> None:
    cell = (
        "vocab_size = 500\n"
        "token_in = keras.Input(shape=(20,), dtype='int32')\n"
        "read_out = layers.LSTM(8)(token_in)"
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "holds token ids" in explanation
    fix = fix_of(explanation)
    assert fix == "read_out = layers.LSTM(8)(layers.Embedding(vocab_size, 16)(token_in))"
    runs_cleanly(kernel, cell.replace("read_out = layers.LSTM(8)(token_in)", fix))


def test_concatenate_of_a_sequence_and_a_vector(kernel: KernelSession) -> None:
    cell = (
        "series_in = keras.Input(shape=(10, 3))\n"
        "extra_in = keras.Input(shape=(4,))\n"
        "joined = layers.Concatenate()([series_in, extra_in])"
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`series_in` (None, 10, 3) has more than the others" in explanation
    fix = fix_of(explanation)
    assert fix == "joined = layers.Concatenate()([layers.Flatten()(series_in), extra_in])"
    runs_cleanly(kernel, cell.replace("joined = layers.Concatenate()([series_in, extra_in])", fix))


def test_one_layer_object_listed_three_times(kernel: KernelSession) -> None:
    cell = (
        "hidden_blocks = [layers.Dense(16)] * 3\n"
        "tower = keras.Sequential([keras.Input(shape=(4,))] + hidden_blocks + [layers.Dense(1)])"
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`hidden_blocks` holds the same layer object 3 times" in explanation
    fix = fix_of(explanation)
    assert fix == "hidden_blocks = [layers.Dense(16) for _ in range(3)]"
    runs_cleanly(kernel, cell.replace("hidden_blocks = [layers.Dense(16)] * 3", fix))


def test_inputs_given_in_another_order(kernel: KernelSession) -> None:
    made = (
        "price_in = keras.Input(shape=(3,), name='prices')\n"
        "word_in = keras.Input(shape=(7,), name='words')\n"
        "both = layers.Concatenate()([layers.Dense(4)(price_in), layers.Dense(4)(word_in)])\n"
        "two_inputs = keras.Model([price_in, word_in], layers.Dense(1)(both))\n"
        "price_x = np.ones((2, 3), 'float32')\n"
        "word_x = np.ones((2, 7), 'float32')"
    )
    runs_cleanly(kernel, made)
    error = failing(kernel, "two_inputs.predict([word_x, price_x], verbose=0)")
    explanation = error["explanation"]
    assert "the same data in another order" in explanation
    fix = fix_of(explanation)
    assert fix == "two_inputs.predict([price_x, word_x], verbose=0)"
    runs_cleanly(kernel, fix)
    # Data of the wrong size (no order fits) gets no such entry.
    wrong = failing(kernel, "two_inputs.predict([price_x, np.ones((2, 5), 'float32')], verbose=0)")
    assert "another order" not in wrong["explanation"]


def test_one_layer_called_on_inputs_of_two_sizes(kernel: KernelSession) -> None:
    made = (
        "narrow_in = keras.Input(shape=(4,))\n"
        "wide_in = keras.Input(shape=(9,))\n"
        "shared_dense = layers.Dense(16)\n"
        "narrow_out = shared_dense(narrow_in)"
    )
    runs_cleanly(kernel, made)
    cell = "wide_out = shared_dense(wide_in)"
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`shared_dense` is one layer object, built on its first call" in explanation
    fix = fix_of(explanation)
    assert fix == "wide_out = layers.Dense(16)(wide_in)"
    runs_cleanly(kernel, fix)
    # The same layer on an input of its own size shares its weights: no error, no entry.
    runs_cleanly(kernel, "again_out = shared_dense(keras.Input(shape=(4,)))")


ATTENTION_BLOCK = """class AttendBlock(layers.Layer):
    def __init__(self, width, **kwargs):
        super().__init__(**kwargs)
        self.att = layers.MultiHeadAttention(num_heads=2, key_dim=width // 2)
        self.norm = layers.LayerNormalization()

    def call(self, inputs):
        return self.norm(inputs + self.att(inputs, inputs))

word_ids = np.random.default_rng(0).integers(1, 50, size=(64, 12)).astype("int32")
word_table = layers.Embedding(50, 16)
attend = AttendBlock(16)
print(attend(word_table(word_ids[:2])).shape)
"""


def test_token_ids_given_to_a_block_built_on_vectors_need_the_lookup(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, ATTENTION_BLOCK)
    cell = "attended = attend(word_ids[:4])"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "functional-api"
    assert "`attend` was built on inputs of shape (2, 12, 16): 16 features per step" in text
    assert "`word_ids` is a (64, 12) int32 NumPy array of token ids" in text
    assert "never went through the embedding lookup" in text
    # The old advice (a features axis) is named as what would not work.
    assert "`word_ids[:4][..., None]`" in text and "still not 16" in text
    fix = fix_of(text)
    assert fix == "attended = attend(word_table(word_ids[:4]))"
    runs_cleanly(kernel, fix)
    # The look-alike: the ids looked up first are quiet; with no Embedding of that width
    # in the notebook, this entry is not given (no lookup to name).
    runs_cleanly(kernel, "attend(word_table(word_ids[4:8]))")
    runs_cleanly(kernel, "del word_table")
    execution = kernel.execute(cell)
    assert execution.reply["status"] == "error"
    assert "embedding lookup" not in (execution.report["error"] or {}).get("explanation", "")


def test_two_recurrent_layers_of_one_kind_in_a_sequential_list(kernel: KernelSession) -> None:
    # Keras numbers its layers across the session, so the failing `gru_N` is not the
    # list's N-th GRU: the one after a GRU that returns its last step only is named.
    cell = (
        "weather_rnn = keras.Sequential([keras.Input(shape=(24, 5)), layers.GRU(32), "
        "layers.GRU(16), layers.Dense(1)])"
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`layers.GRU(32)` returns only its last step's output" in explanation
    assert "`layers.GRU(16)` after it needs the whole sequence" in explanation
    fix = fix_of(explanation)
    assert fix == (
        "weather_rnn = keras.Sequential([keras.Input(shape=(24, 5)), "
        "layers.GRU(32, return_sequences=True), layers.GRU(16), layers.Dense(1)])"
    )
    runs_cleanly(kernel, fix)
