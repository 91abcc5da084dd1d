"""A required argument of a TensorFlow or Keras function or class left out (issue #25,
``errors/families_keras_arguments.py``, ``MISSING_REQUIRED``): Python refuses the call
before the library's code runs, so the traceback never enters Keras; the entry names the
parameter, the callee's signature (``inspect.signature``) and what the parameter means,
and for an attention layer's ``key_dim`` the value the query it is called on gives. Each
fix runs; a complete call and a user's own function missing an argument get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def test_attention_without_key_dim_is_sized_from_its_query(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "from keras import layers\nquery_seq = tf.random.normal((2, 6, 32))")
    cell = (
        "heads4 = layers.MultiHeadAttention(num_heads=4)\nprint(heads4(query_seq, query_seq).shape)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`layers.MultiHeadAttention(num_heads, key_dim, " in text
    assert "needs `key_dim`, which `layers.MultiHeadAttention(num_heads=4)` does not give" in text
    assert "`key_dim` is the size of each attention head's query and key projections" in text
    assert "`query_seq`, the query of `heads4` below, has 32 features" in text
    assert error["course"]["section"] == "keras-model-api"
    fix = fix_of(text)
    assert fix == "heads4 = layers.MultiHeadAttention(num_heads=4, key_dim=8)"
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    # The look-alike: the layer given both arguments is quiet.
    runs_cleanly(kernel, "layers.MultiHeadAttention(4, 8)(query_seq, query_seq)")


def test_any_library_class_missing_a_parameter_is_named(kernel: KernelSession) -> None:
    error = failing(kernel, "hidden = keras.layers.Dense(activation='relu')")
    text = error["explanation"]
    assert "`keras.layers.Dense(units, activation=None, " in text
    assert "needs `units`, which `keras.layers.Dense(activation='relu')` does not give" in text
    assert "`units` is the number of outputs of the layer" in text
    # A user's own function missing an argument is plain Python: no entry.
    execution = kernel.execute("def scale_by(x, factor):\n    return x * factor\nscale_by(3)")
    assert execution.reply["status"] == "error"
    assert execution.report["error"] is None


def test_attention_called_on_its_query_alone(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "from keras import layers\nsentences = tf.random.normal((3, 7, 16))\n"
        "self_att = layers.MultiHeadAttention(num_heads=2, key_dim=8)",
    )
    error = failing(kernel, "mixed = self_att(sentences)")
    text = error["explanation"]
    assert error["course"]["section"] == "keras-model-api"
    assert "`MultiHeadAttention.call(query, value," in text
    assert "needs `value`, which `self_att(sentences)` does not give" in text
    fix = fix_of(text)
    assert fix == "mixed = self_att(sentences, sentences)"
    runs_cleanly(kernel, fix + "\nassert mixed.shape == (3, 7, 16)")
    # Cross-attention written in full is quiet.
    runs_cleanly(kernel, "crossed = self_att(sentences, tf.random.normal((3, 5, 16)))")
