"""A reloaded SavedModel's functions called with names they do not take
(errors/families_signatures.py, SIGNATURE_NAMES): a signature given a keyword its
``structured_input_signature`` lacks gets the names it takes and the call with the right
one; ``serve`` of a Keras export (positional inputs) given a keyword gets the call
without it. Both fixes run; the right keyword stays quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """import tempfile, os
ranker = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(2)])
shelf = os.path.join(tempfile.mkdtemp(), "ranker_export")
ranker.export(shelf, verbose=False)
restored = tf.saved_model.load(shelf)
ranked = restored.signatures["serving_default"]
queries = tf.random.normal((7, 5))
"""


def test_a_signature_given_another_keyword(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    name = value_of(kernel, "list(ranked.structured_input_signature[1])[0]")
    error = failing(kernel, "scores = ranked(features=queries)")
    assert error["course"]["section"] == "input-signature"
    text = error["explanation"]
    assert f"(`{name}`, its `structured_input_signature`" in text
    assert "`features` is not one of them" in text
    fix = fix_of(text)
    assert fix == f"scores = ranked({name}=queries)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(scores)") == ["output_0"]


def test_serve_given_a_keyword(kernel: KernelSession) -> None:
    text = failing(kernel, "direct = restored.serve(inputs=queries)")["explanation"]
    assert "inputs are positional" in text
    fix = fix_of(text)
    assert fix == "direct = restored.serve(queries)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "tuple(direct.shape)") == [7, 2]


def test_an_own_tf_function_is_not_claimed(kernel: KernelSession) -> None:
    cell = """@tf.function(input_signature=[tf.TensorSpec([None, 5], tf.float32)])
def summed(rows):
    return tf.reduce_sum(rows, axis=1)
out = summed(batch=queries)"""
    text = failing(kernel, cell)["explanation"]
    assert "SavedModel" not in text
