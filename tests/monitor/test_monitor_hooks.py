"""The monitor's hooks on TensorFlow's and Keras's methods (``monitor/hooks.py``) in a real
kernel: each method the monitor watches wraps the library's own original, once; after
``%unload_ext`` every original is back exactly (the same function object), a wrapper another
library put on top of a hook stays, and loading again hooks the originals, not old hooks."""

from __future__ import annotations

import pytest

from tests.harness import LOAD_FOR_PANEL, KernelSession, KernelSetup, run, run_quiet, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

# Every method the monitor hooks, as (module, class, method).
HOOKED = [
    ("tensorflow.python.eager.polymorphic_function.polymorphic_function", "Function", "__init__"),
    ("tensorflow.python.eager.polymorphic_function.polymorphic_function", "Function", "__call__"),
    ("tensorflow.python.trackable.autotrackable", "AutoTrackable", "__setattr__"),
    ("keras.src.layers.layer", "Layer", "__setattr__"),
    ("tensorflow.python.eager.backprop", "GradientTape", "gradient"),
    ("keras.src.optimizers.base_optimizer", "BaseOptimizer", "_filter_empty_gradients"),
    ("tensorflow.python.ops.resource_variable_ops", "ResourceVariable", "assign_sub"),
    ("tensorflow.python.ops.resource_variable_ops", "ResourceVariable", "assign_add"),
]

SETUP = f"""
import sys
import tensorflow as tf
import keras

HOOKED = {HOOKED!r}
MARK = "__tfcoach_original__"

def hook_state():
    '''Per method: [hooked, the hook wraps a hook of ours, id of the original].'''
    state = {{}}
    for module, owner, name in HOOKED:
        method = vars(getattr(sys.modules[module], owner))[name]
        original = getattr(method, MARK, None)
        state[f"{{owner}}.{{name}}"] = [
            original is not None,
            hasattr(original, MARK),
            id(original if original is not None else method),
        ]
    return state
"""

KERNEL = KernelSetup(before_load=SETUP, after_load="")


def test_each_hook_wraps_the_original_once_and_unload_restores_it(kernel: KernelSession) -> None:
    loaded = value_of(kernel, "hook_state()")
    assert set(loaded) == {f"{owner}.{name}" for _, owner, name in HOOKED}
    assert all(hooked and not nested for hooked, nested, _ in loaded.values()), loaded
    originals = {method: state[2] for method, state in loaded.items()}

    run(kernel, "%unload_ext jupyterlab_tfcoach")
    unloaded = value_of(kernel, "hook_state()")
    assert {method: state[0] for method, state in unloaded.items()} == dict.fromkeys(
        originals, False
    )
    assert {method: state[2] for method, state in unloaded.items()} == originals

    run(kernel, LOAD_FOR_PANEL)
    reloaded = value_of(kernel, "hook_state()")
    assert all(hooked and not nested for hooked, nested, _ in reloaded.values()), reloaded
    assert {method: state[2] for method, state in reloaded.items()} == originals
    # And the hooks still report: a tape.gradient of None is told.
    report = run_quiet(
        kernel,
        "x = tf.constant(2.0)\nwith tf.GradientTape() as tape:\n    y = x * x\n"
        "grad = tape.gradient(y, x)",
    )
    assert any("returned None" in note["text"] for note in report["notes"]), report


def test_unload_keeps_a_wrapper_put_on_top_of_a_hook(kernel: KernelSession) -> None:
    run(
        kernel,
        "hooked_gradient = tf.GradientTape.gradient\n"
        "wrapper_calls = []\n"
        "def wrapped_gradient(tape, *args, **kwargs):\n"
        "    wrapper_calls.append(1)\n"
        "    return hooked_gradient(tape, *args, **kwargs)\n"
        "tf.GradientTape.gradient = wrapped_gradient",
    )
    try:
        run(kernel, "%unload_ext jupyterlab_tfcoach")
        assert value_of(kernel, "tf.GradientTape.gradient is wrapped_gradient") is True
        run(
            kernel,
            "v = tf.Variable(3.0)\nwith tf.GradientTape() as tape:\n    y = v * v\n"
            "gradient_value = float(tape.gradient(y, v))",
        )
        assert value_of(kernel, "[gradient_value, len(wrapper_calls)]") == [6.0, 1]
    finally:
        run(kernel, "tf.GradientTape.gradient = getattr(hooked_gradient, MARK)")
        run(kernel, LOAD_FOR_PANEL)
    reloaded = value_of(kernel, "hook_state()")
    assert all(hooked and not nested for hooked, nested, _ in reloaded.values()), reloaded
