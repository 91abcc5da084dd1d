"""A layer given where its tensor is needed (issue #25,
``errors/families_layer_as_tensor.py``): ``keras.Model(..., outputs=<a layer>)``. The entry
names the layer objects the learner wrote and appends ``.output`` to each; the printed fix
runs and the model gives the layer's result. The same model built from ``.output`` gets no
entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

NET = """pixels = keras.Input(shape=(8, 8, 1))
hidden = keras.layers.Conv2D(4, 3, name="c1")(pixels)
flat = keras.layers.Flatten(name="flat")(hidden)
scores = keras.layers.Dense(2, name="head")(flat)
net = keras.Model(pixels, scores)
"""


def test_layers_got_by_name_take_their_output(kernel: KernelSession) -> None:
    runs_cleanly(kernel, NET)
    cell = (
        'tapped = keras.Model(inputs=net.inputs, outputs=[net.get_layer("c1"), '
        'net.get_layer("head")])'
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "functional-api"
    text = error["explanation"]
    assert '`net.get_layer("c1")`, `net.get_layer("head")` are layer objects' in text
    assert "`name`" not in text
    fix = fix_of(text)
    assert fix == (
        'tapped = keras.Model(inputs=net.inputs, outputs=[net.get_layer("c1").output, '
        'net.get_layer("head").output])'
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[tuple(t.shape) for t in tapped(np.zeros((1, 8, 8, 1)))]") == [
        [1, 6, 6, 4],
        [1, 2],
    ]


def test_a_layer_held_in_a_name_takes_its_output(kernel: KernelSession) -> None:
    runs_cleanly(kernel, NET + 'flattener = net.get_layer("flat")')
    text = failing(kernel, "probe = keras.Model(net.input, flattener)")["explanation"]
    assert "`flattener` is a layer object, not a tensor" in text
    fix = fix_of(text)
    assert fix == "probe = keras.Model(net.input, flattener.output)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "tuple(probe(np.zeros((2, 8, 8, 1))).shape)") == [2, 144]
    runs_cleanly(kernel, 'again = keras.Model(net.input, net.get_layer("c1").output)')


def test_a_layer_among_symbolic_tensors_takes_its_output(kernel: KernelSession) -> None:
    runs_cleanly(kernel, NET)
    cell = 'joined = keras.layers.Concatenate()([flat, net.get_layer("head")])'
    text = failing(kernel, cell)["explanation"]
    assert '`net.get_layer("head")` is a layer object, not a tensor' in text
    fix = fix_of(text)
    assert fix == 'joined = keras.layers.Concatenate()([flat, net.get_layer("head").output])'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(joined.shape)") == [None, 146]


def test_a_layer_given_to_an_op_on_values_gets_the_cause_only(kernel: KernelSession) -> None:
    runs_cleanly(kernel, NET + "dense_head = net.get_layer('head')")
    text = failing(kernel, "activated = tf.nn.relu(dense_head)")["explanation"]
    assert "`dense_head` is a layer object, not a tensor" in text and "Fix:" not in text
    runs_cleanly(kernel, "activated = tf.nn.relu(dense_head(np.zeros((1, 144), 'float32')))")
