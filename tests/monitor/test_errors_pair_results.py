"""A TensorFlow function's two results kept in one name (issue #25,
``errors/families_pair_results.py``): the entry names the assignment that kept the pair,
the fix unpacks it and the loop then trains; taking one of the two by index is right and
gets no such entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(0)
clip_model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
clip_opt = keras.optimizers.SGD(0.1)
xb = np.random.rand(8, 4).astype("float32")
yb = np.random.rand(8, 1).astype("float32")
"""
LOOP = """for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((clip_model(xb) - yb) ** 2)
    grads = tape.gradient(loss, clip_model.trainable_variables)
    grads = tf.clip_by_global_norm(grads, 1.0)
    clip_opt.apply_gradients(zip(grads, clip_model.trainable_variables))
"""


def test_clip_by_global_norm_kept_whole(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, LOOP)
    assert error["course"]["section"] == "training-loop"
    text = error["explanation"]
    assert "`grads` holds both results of `tf.clip_by_global_norm(grads, 1.0)`" in text
    fix = fix_of(text)
    assert fix == "grads, global_norm = tf.clip_by_global_norm(grads, 1.0)"
    runs_cleanly(kernel, SETUP + LOOP.replace("grads = tf.clip_by_global_norm(grads, 1.0)", fix))
    assert value_of(kernel, "int(clip_opt.iterations)") == 3


def test_one_result_taken_by_index_is_not_this_family(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP + "stats = tf.nn.moments(tf.constant(xb), axes=[0])")
    error = failing(kernel, "bad = tf.matmul(stats[0], tf.ones((4, 2)))")
    assert "holds both results" not in error["explanation"]
    runs_cleanly(kernel, "mean, variance = tf.nn.moments(tf.constant(xb), axes=[0])")


ATTENTION = """att_layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
tokens_emb = tf.random.normal((2, 5, 8))
"""


def test_attention_scores_read_on_the_pair_name_the_keyword(kernel: KernelSession) -> None:
    # Python raises the AttributeError in the learner's line: the traceback never enters
    # Keras, yet the pair came from Keras's call with return_attention_scores=True.
    runs_cleanly(kernel, ATTENTION)
    cell = (
        "att_scores = att_layer(tokens_emb, tokens_emb, return_attention_scores=True)\n"
        "print(att_scores.shape)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert (
        "`att_scores` holds both results of "
        "`att_layer(tokens_emb, tokens_emb, return_attention_scores=True)`"
    ) in text
    assert "meant the attention scores (a tuple has no `.shape`)" in text
    fix = fix_of(text)
    assert fix == (
        "_, att_scores = att_layer(tokens_emb, tokens_emb, return_attention_scores=True)"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    assert value_of(kernel, "list(att_scores.shape)") == [2, 2, 5, 5]
    # The look-alike: the output alone, without the scores, has its shape; and a pair of
    # the learner's own making read the same way is not Keras's to explain.
    runs_cleanly(kernel, "att_out = att_layer(tokens_emb, tokens_emb)\nprint(att_out.shape)")
    execution = kernel.execute("own_pair = (1, 2)\nprint(own_pair.shape)")
    assert execution.reply["status"] == "error"
    assert execution.report["error"] is None


def test_several_results_of_a_keras_layer_read_as_one(kernel: KernelSession) -> None:
    # An LSTM with return_state=True returns its output and its two states: any library
    # call whose results one name kept is told by what it returned, item by item.
    runs_cleanly(
        kernel,
        "state_lstm = keras.layers.LSTM(3, return_state=True)\n"
        "steps_in = tf.random.normal((2, 5, 4))",
    )
    cell = "lstm_result = state_lstm(steps_in)\nprint(lstm_result.shape)"
    execution = kernel.execute(cell)
    assert execution.reply["status"] == "error"
    text = execution.report["error"]["explanation"]
    assert "`lstm_result` holds what `state_lstm(steps_in)` returned: a " in text
    assert "(2, 3) float32 tensor" in text
    assert "The call returns 3 results" in text
    assert "`lstm_result_0, lstm_result_1, lstm_result_2 = state_lstm(steps_in)`" in text
    # The advice applied runs; a function of the learner's own is not Keras's to explain.
    runs_cleanly(kernel, "out_seq, h_state, c_state = state_lstm(steps_in)\nprint(out_seq.shape)")
    own = "def two_things():\n    return 1, 2\nboth = two_things()\nboth.shape"
    execution = kernel.execute(own)
    assert execution.reply["status"] == "error"
    assert execution.report["error"] is None


def test_normalize_kept_whole_then_multiplied_or_summed(kernel: KernelSession) -> None:
    # tf.linalg.normalize returns the unit-norm tensor and the norms (l2_normalize does not).
    runs_cleanly(kernel, "profiles = tf.random.normal((9, 5))")
    cell = (
        "unit = tf.linalg.normalize(profiles, axis=-1)\n"
        "cosines = tf.matmul(unit, tf.transpose(unit))"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`unit` holds both results of `tf.linalg.normalize(profiles, axis=-1)`" in text
    assert "the tensor scaled to unit norm and the norms it was divided by" in text
    fix = fix_of(text)
    assert fix == "unit, norms = tf.linalg.normalize(profiles, axis=-1)"
    runs_cleanly(kernel, cell.replace("unit = tf.linalg.normalize(profiles, axis=-1)", fix))
    assert value_of(kernel, "round(float(tf.linalg.diag_part(cosines)[0]), 4)") == 1.0
    # The L1 variant, summed: same reading.
    cell = (
        "shares = tf.linalg.normalize(tf.abs(profiles), ord=1, axis=1)\n"
        "totals = tf.reduce_sum(shares, axis=1)"
    )
    error = failing(kernel, cell)
    assert fix_of(error["explanation"]) == (
        "shares, norms = tf.linalg.normalize(tf.abs(profiles), ord=1, axis=1)"
    )
    # The single-result spelling stays quiet.
    runs_cleanly(
        kernel,
        "unit2 = tf.math.l2_normalize(profiles, axis=-1)\n"
        "c2 = tf.matmul(unit2, unit2, transpose_b=True)",
    )
