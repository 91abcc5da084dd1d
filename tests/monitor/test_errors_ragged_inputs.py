"""A tf.RaggedTensor given to a Keras 3 layer or model (issue #25,
``errors/families_ragged_inputs.py``): the entry says Keras 3 layers take no ragged input
and pads it with ``to_tensor()`` in a way that keeps each row's result: the rows rebuilt
with ``from_tensor(..., lengths=...)`` for a model of position-wise layers, a
``sequence_mask`` for one whose pooling or RNN reads a mask. Each printed fix runs and
gives, for every row, what the model computes on that row alone; a model given the
padded tensor gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

BASKETS = """
import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(3)
baskets = tf.ragged.constant(
    [
        [[0.5, 1.0, 2.0], [1.5, 0.0, 1.0]],
        [[2.0, 2.0, 0.5]],
        [[0.1, 0.2, 0.3], [1.0, 1.0, 1.0], [3.0, 0.0, 2.0]],
    ],
    ragged_rank=1,
)
"""


def test_position_wise_model_gets_its_rows_back(kernel: KernelSession) -> None:
    runs_cleanly(kernel, BASKETS)
    runs_cleanly(
        kernel,
        "pricer = keras.Sequential([keras.Input((None, 3)), keras.layers.Dense(6, "
        "activation='tanh'), keras.layers.Dense(2)])",
    )
    error = failing(kernel, "prices = pricer(baskets)")
    text = error["explanation"]
    assert "Keras 3 layers take no ragged input" in text
    assert "3 rows of 1 to 3 entries" in text
    fix = fix_of(text)
    assert fix == (
        "prices = tf.RaggedTensor.from_tensor(pricer(baskets.to_tensor()), "
        "lengths=baskets.row_lengths())"
    )
    runs_cleanly(kernel, fix)
    # Each row's result is the model's result on that row alone.
    assert value_of(
        kernel,
        "all(np.allclose(prices[i].numpy(), pricer(baskets[i:i + 1].to_tensor())[0].numpy(),"
        " atol=1e-6) for i in range(3))",
    )
    assert value_of(kernel, "prices.row_lengths().numpy().tolist()") == [2, 1, 3]


def test_pooling_model_gets_a_mask(kernel: KernelSession) -> None:
    runs_cleanly(kernel, BASKETS)
    runs_cleanly(
        kernel,
        "items = keras.Input((None, 3))\n"
        "summary = keras.layers.GlobalAveragePooling1D()(keras.layers.Dense(4)(items))\n"
        "basket_model = keras.Model(items, keras.layers.Dense(1)(summary))",
    )
    error = failing(kernel, "totals = basket_model(baskets)")
    text = error["explanation"]
    assert "GlobalAveragePooling1D mixes the entries of a row" in text
    fix = fix_of(text)
    assert (
        fix == "totals = basket_model(baskets.to_tensor(), "
        "mask=tf.sequence_mask(baskets.row_lengths()))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(
        kernel,
        "all(np.allclose(totals[i].numpy(), basket_model(baskets[i:i + 1].to_tensor())[0].numpy(),"
        " atol=1e-5) for i in range(3))",
    )


def test_recurrent_layer_gets_a_mask(kernel: KernelSession) -> None:
    runs_cleanly(kernel, BASKETS)
    runs_cleanly(kernel, "reader = keras.layers.GRU(5)")
    error = failing(kernel, "states = reader(baskets)")
    text = error["explanation"]
    assert "GRU mixes the entries of a row" in text
    fix = fix_of(text)
    assert (
        fix == "states = reader(baskets.to_tensor(), mask=tf.sequence_mask(baskets.row_lengths()))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(
        kernel,
        "all(np.allclose(states[i].numpy(), reader(baskets[i:i + 1].to_tensor())[0].numpy(),"
        " atol=1e-5) for i in range(3))",
    )


def test_convolution_is_named_without_a_fix(kernel: KernelSession) -> None:
    runs_cleanly(kernel, BASKETS)
    runs_cleanly(
        kernel,
        "smoother = keras.Sequential([keras.Input((None, 3)), keras.layers.Conv1D(2, 2, "
        "padding='same')])",
    )
    error = failing(kernel, "smooth = smoother(baskets)")
    text = error["explanation"]
    assert "Conv1D mixes the entries of a row and reads no mask" in text
    assert "Fix:" not in text


def test_padded_input_has_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, BASKETS)
    runs_cleanly(
        kernel,
        "pricer = keras.Sequential([keras.Input((None, 3)), keras.layers.Dense(2)])\n"
        "prices = pricer(baskets.to_tensor())",
    )
