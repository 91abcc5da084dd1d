from __future__ import annotations

import textwrap

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC001"


def test_name_rebound_by_subtraction_gets_assign_sub():
    source = """\
        import tensorflow as tf
        w = tf.Variable(1.0)
        lr, g = 0.1, tf.constant(2.0)
        w = w - lr * g
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 1, 4, 15)
    assert "`w` is a tf.Variable" in finding.message
    assert "`w = w - lr * g`" in finding.message
    assert fixed(source, finding).splitlines()[3] == "w.assign_sub(lr * g)"


def test_attribute_rebound_by_multiplication_under_alias_gets_assign():
    source = """\
        import tensorflow as t

        class Model:
            def __init__(self):
                self.w = t.Variable(1.0)

            def double(self):
                self.w = self.w * 2
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 9, 8, 28)
    assert fixed(source, finding).splitlines()[7] == "        self.w.assign(self.w * 2)"


def test_attribute_rebound_by_an_update_op_in_a_plain_class():
    # ``self.w`` has two bindings (the variable, the op's result): the op's result is an
    # update of the attribute, as ``self.w - g`` is, not a second kind of value it may hold.
    source = """\
        import tensorflow as tf

        class Regression:
            def __init__(self):
                self.w = tf.Variable(tf.zeros((3, 1)))

            def step(self, dw, lr=0.1):
                self.w = tf.subtract(self.w, lr * dw)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 9, 8, 46)
    assert "`self.w` is a tf.Variable" in finding.message
    assert fixed(source, finding).splitlines()[7] == "        self.w.assign_sub(lr * dw)"
    reshaped = source.replace("tf.subtract(self.w, lr * dw)", "tf.reshape(self.w, (1, 3))")
    assert check(reshaped, CODE) == []


def test_augmented_assignments_map_to_assign_methods():
    source = """\
        from tensorflow import Variable as V
        a, b, c = V(0.0), V(1.0), V(2.0)
        a -= 0.5
        b += 1
        c *= 2 + 1
        a -= 1  # already a plain tensor after the first update: reported once
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(3, 1, 3, 9), (4, 1, 4, 7), (5, 1, 5, 11)]
    # `assign`, not `assign_sub`: any shape. Fixed, the line-6 update rebinds the variable
    # too: reported then.
    assert fixed(source, findings[0], reveals=1).splitlines()[2] == "a.assign(a - 0.5)"
    assert fixed(source, findings[1]).splitlines()[3] == "b.assign(b + 1)"
    assert fixed(source, findings[2]).splitlines()[4] == "c.assign(c * (2 + 1))"


def test_augmented_assignment_of_a_call_result_and_a_call_that_is_not_an_update():
    source = """\
        import tensorflow as tf
        w = tf.Variable([1.0, 2.0])
        g = tf.constant([0.1, 0.3])
        w -= tf.multiply(0.1, g)
        v = tf.Variable([1.0, 2.0])
        v = tf.identity(v)  # a call that is not an update op: silent
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(4, 1, 4, 25)]
    assert fixed(source, findings[0]).splitlines()[3] == "w.assign_sub(tf.multiply(0.1, g))"


def test_addition_with_variable_on_the_right_and_add_weight():
    source = """\
        import tensorflow as tf

        class Dense(tf.keras.layers.Layer):
            def build(self, shape):
                self.kernel = self.add_weight(shape=shape)

            def nudge(self, delta):
                self.kernel = delta + self.kernel
        """
    [finding] = check(source, CODE)
    assert fixed(source, finding).splitlines()[7] == "        self.kernel.assign_add(delta)"


def test_global_variable_rebound_inside_function():
    source = """\
        import tensorflow as tf
        w = tf.Variable(1.0)

        def step(g):
            global w
            w = w - 0.1 * g
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 5, 6, 20)


def test_notebook_cells_report_cell_and_line():
    cells = ["import tensorflow as tf\nw = tf.Variable(3.0)", "%matplotlib inline\nw = w / 2"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 2, 1, 2, 10)
    assert finding.fix is not None
    assert finding.fix.edits[0].line == 2
    assert finding.fix.edits[0].new_text == "w.assign(w / 2)"


def test_correct_updates_and_non_variables_are_silent():
    source = """\
        import tensorflow as tf
        w = tf.Variable(1.0)
        w.assign_sub(0.1)
        w.assign(w * 2)
        x = tf.constant(1.0)
        x = x * 2
        n = 3
        n = n + 1

        def f(v):
            v = v - 1  # parameter of unknown type
            return v

        class Layer:
            def __init__(self):
                self.scale = 2.0

            def grow(self):
                self.scale = self.scale * 2
        """
    assert check(source, CODE) == []


def test_after_rebinding_to_a_constant_it_is_no_longer_a_variable():
    source = """\
        import tensorflow as tf
        w = tf.Variable(1.0)
        w = tf.constant(2.0)
        w = w - 1
        """
    assert check(source, CODE) == []


def test_value_from_one_branch_only_is_not_certain():
    source = """\
        import tensorflow as tf
        w = tf.constant(2.0)
        if flag:
            w = tf.Variable(1.0)
        w = w - 1
        """
    assert check(source, CODE) == []


def test_file_without_tensorflow_import_is_silent():
    source = """\
        import torch
        w = torch.Variable(1.0)
        w = w - 1
        """
    assert check(source, CODE) == []


def test_local_alias_of_a_layer_weight_is_silent_but_augmented_assignment_is_not():
    # A masked / normalized copy of a weight: the layer still holds the variable.
    source = """\
        import tensorflow as tf

        class MaskedDense(tf.keras.layers.Layer):
            def build(self, shape):
                self.kernel = self.add_weight(shape=shape)
                self.mask = None

            def call(self, x):
                kernel = self.kernel
                if self.mask is not None:
                    kernel = kernel * self.mask
                w = self.kernel
                w = w / tf.norm(w)
                return x @ kernel @ w

            def bump(self):
                k = self.kernel
                k += 1  # augmented assignment on a variable raises, alias or not
        """
    [finding] = check(source, CODE)
    assert span(finding) == (18, 9, 18, 15)


DICT_OF_VARIABLES = """\
    import tensorflow as tf

    params = {"w": tf.Variable([[1.0], [2.0]]), "b": tf.Variable(0.5)}
    grads = {"w": tf.ones([2, 1]), "b": tf.constant(1.0)}
    lr = 0.1
    params["w"] = params["w"] - lr * grads["w"]
    for name in params:
        params[name] = params[name] - lr * grads[name]
    """


def test_variables_kept_in_a_dict_are_reported_per_entry():
    findings = check(DICT_OF_VARIABLES, CODE)
    assert [span(f) for f in findings] == [(6, 1, 6, 44), (8, 5, 8, 51)]
    assert '`params["w"]` is a tf.Variable' in findings[0].message
    assert "`params[name]` is a tf.Variable" in findings[1].message
    fixed_once = fixed(DICT_OF_VARIABLES, findings[0])
    assert fixed_once.splitlines()[5] == 'params["w"].assign_sub(lr * grads["w"])'
    assert fixed(DICT_OF_VARIABLES, findings[1]).splitlines()[7] == (
        "    params[name].assign_sub(lr * grads[name])"
    )


def test_variables_kept_in_a_list_literal_or_comprehension():
    source = """\
        import tensorflow as tf

        ws = [tf.Variable(tf.zeros([3])) for _ in range(2)]
        layers = [tf.Variable(1.0), tf.Variable(2.0)]
        ws[0] = ws[0] - 0.1 * tf.ones([3])
        layers[1] -= 0.5
        layers[-1] = 2 * layers[-1]
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [5, 6, 7]
    assert fixed(source, findings[0]).splitlines()[4] == "ws[0].assign_sub(0.1 * tf.ones([3]))"
    assert fixed(source, findings[1]).splitlines()[5] == "layers[1].assign(layers[1] - 0.5)"
    assert fixed(source, findings[2]).splitlines()[6] == "layers[-1].assign(2 * layers[-1])"


def test_containers_of_tensors_or_of_unknown_values_are_silent():
    source = """\
        import tensorflow as tf

        state = {"h": tf.zeros([2]), "c": tf.zeros([2])}
        state["h"] = state["h"] * 0.9           # tensors: rebinding is how you update them
        mixed = {"w": tf.Variable(1.0), "scale": tf.constant(2.0)}
        mixed["scale"] = mixed["scale"] * 2     # that entry is a tensor
        filled = {}
        filled["w"] = tf.Variable(1.0)
        filled["w"] = filled["w"] - 0.1         # filled later: not followed, so not claimed
        params = {"w": tf.Variable(1.0)}
        params["w"].assign_sub(0.1)             # the corrected form
        grads = [tf.ones([2])]
        grads[0] = grads[0] * 0.5
        """
    assert check(source, CODE) == []


def test_fixed_dict_update_keeps_training_the_variables():
    """The offered fixes, applied and run: the dict still holds variables that moved."""
    findings = check(DICT_OF_VARIABLES, CODE)
    repaired = DICT_OF_VARIABLES
    for finding in reversed(findings):  # bottom-up: earlier positions stay valid
        repaired = fixed(repaired, finding)
    assert check(repaired, CODE) == []
    probes = {
        "w_is_variable": "isinstance(params['w'], tf.Variable)",
        "b_is_variable": "isinstance(params['b'], tf.Variable)",
        "w": "[round(v, 3) for v in params['w'].numpy().ravel().tolist()]",
        "b": "round(float(params['b'].numpy()), 3)",
    }
    broken, repaired_run = run_tensorflow(textwrap.dedent(DICT_OF_VARIABLES), repaired, **probes)
    assert broken.error is None and repaired_run.error is None
    assert broken.probes["w_is_variable"] is False  # the pitfall: the dict now holds tensors
    assert repaired_run.probes["w_is_variable"] is True
    assert repaired_run.probes["b_is_variable"] is True
    assert repaired_run.probes["w"] == [0.8, 1.8]  # two updates of 0.1 each
    assert repaired_run.probes["b"] == 0.4


TUPLE_AND_OP_REBINDS = """\
    import tensorflow as tf

    w = tf.Variable(1.0)
    b = tf.Variable(0.0)
    dw, db = tf.constant(0.5), tf.constant(0.25)
    w, b = w - 0.1 * dw, b - 0.1 * db
    v = tf.Variable([1.0, 5.0])
    v = tf.subtract(v, 0.5)
    v = tf.clip_by_value(v, 0.0, 2.0)
    """


def test_tuple_assignment_and_tensorflow_ops_rebind_variables():
    findings = check(TUPLE_AND_OP_REBINDS, CODE)
    assert [(f.line, f.column) for f in findings] == [(6, 1), (8, 1)]
    assert "`w` and `b` are tf.Variables" in findings[0].message
    assert "rebinds them to plain tensors" in findings[0].message
    assert "`v = tf.subtract(v, 0.5)`" in findings[1].message
    # After the first rebinding `v` is a tensor: the clip on line 9 is not a second report.
    # Fixed, `v = tf.subtract(...)` leaves `v` a variable: the clip on line 9 is reported then.
    repaired = fixed(TUPLE_AND_OP_REBINDS, findings[1], reveals=1)
    repaired = fixed(repaired, findings[0])
    lines = repaired.splitlines()
    assert lines[5:8] == [
        "w.assign_sub(0.1 * dw)",
        "b.assign_sub(0.1 * db)",
        "v = tf.Variable([1.0, 5.0])",
    ]
    # ``assign_sub(0.5)`` would fail on this vector: the fix keeps the op and broadcasts.
    assert lines[8] == "v.assign(tf.subtract(v, 0.5))"
    # Now the clip is the rebinding left, and its fix keeps the variable too.
    [clip] = check(repaired, CODE)
    assert clip.line == 10
    repaired = fixed(repaired, clip)
    assert repaired.splitlines()[9] == "v.assign(tf.clip_by_value(v, 0.0, 2.0))"
    assert check(repaired, CODE) == []
    probes = {
        "kinds": "[type(w).__name__, type(b).__name__, type(v).__name__]",
        "values": "[round(float(w), 3), round(float(b), 3), v.numpy().tolist()]",
    }
    broken, repaired_run = run_tensorflow(TUPLE_AND_OP_REBINDS, repaired, **probes)
    assert broken.error is None and repaired_run.error is None
    assert broken.probes["kinds"] == ["EagerTensor", "EagerTensor", "EagerTensor"]
    assert repaired_run.probes["kinds"] == ["ResourceVariable"] * 3
    assert repaired_run.probes["values"] == [0.95, -0.025, [0.5, 2.0]]


def test_partial_tuple_rebinding_is_reported_without_a_fix_and_new_variables_are_silent():
    source = """\
        import tensorflow as tf

        w = tf.Variable(1.0)
        scaled, w = w * 2, w - 1      # the fix would drop `scaled`: reported, not fixed
        u = tf.Variable(1.0)
        u = tf.Variable(u * 2)        # a new variable, still trainable
        k = tf.Variable(2.0)
        k.assign(tf.clip_by_value(k, 0.0, 1.0))
        a, c = tf.Variable(1.0), tf.Variable(2.0)
        a, c = c, a                   # swapping variables keeps them variables
        """
    [finding] = check(source, CODE)
    assert finding.line == 4 and finding.fix is None


def test_reshaping_a_variable_used_as_data_is_silent():
    # d2l's convolution chapter: a Variable for item assignment, then reshaped for a layer.
    source = """\
        import tensorflow as tf

        X = tf.Variable(tf.ones((6, 8)))
        X[:, 2:6].assign(tf.zeros(X[:, 2:6].shape))
        X = tf.reshape(X, (1, 6, 8, 1))
        Y = tf.Variable(tf.ones((3,)))
        Y = tf.cast(Y, tf.int32)
        """
    assert check(source, CODE) == []


LINEAR_REGRESSION_BY_HAND = """\
    import tensorflow as tf

    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = tf.constant([[1.0], [2.0], [3.0]])
    w = tf.Variable(tf.zeros((2, 1)))
    b = tf.Variable(tf.zeros((1,)))
    shift = tf.Variable(tf.zeros((2,)))
    lr = 0.01
    for step in range(3):
        with tf.GradientTape() as tape:
            error = x @ w + b - y
            loss = tf.reduce_mean(error**2)
        dw = tape.gradient(loss, w)
        w = w - lr * dw
        b = b - lr * tf.reduce_mean(error)
        shift -= lr
"""


def test_scalar_steps_get_assign_because_assign_sub_does_not_broadcast():
    """``b`` has one entry per output but its step is a single number: ``b.assign_sub(step)``
    fails (measured below), so the fix keeps the subtraction inside ``assign``."""
    findings = check(LINEAR_REGRESSION_BY_HAND, CODE)
    assert [f.line for f in findings] == [14, 15, 16]
    repaired = LINEAR_REGRESSION_BY_HAND
    for finding in reversed(findings):
        repaired = fixed(repaired, finding)
    lines = textwrap.dedent(repaired).splitlines()
    assert lines[13].strip() == "w.assign_sub(lr * dw)"  # the gradient has w's shape
    assert lines[14].strip() == "b.assign(b - lr * tf.reduce_mean(error))"
    assert lines[15].strip() == "shift.assign(shift - lr)"  # ``lr`` is a Python number
    assert check(repaired, CODE) == []
    naive = textwrap.dedent(repaired).replace(
        "b.assign(b - lr * tf.reduce_mean(error))", "b.assign_sub(lr * tf.reduce_mean(error))"
    )
    probes = {
        "kind": "type(b).__name__",
        "b": "[round(v, 4) for v in b.numpy().tolist()]",
        "shift": "[round(v, 4) for v in shift.numpy().tolist()]",
    }
    broken, repaired_run, naive_run = run_tensorflow(
        textwrap.dedent(LINEAR_REGRESSION_BY_HAND), repaired, naive, **probes
    )
    assert broken.error == "RuntimeError"  # ``shift -= lr`` on a variable raises at once
    assert repaired_run.error is None
    assert repaired_run.probes["kind"] == "ResourceVariable"
    assert len(repaired_run.probes["b"]) == 1 and repaired_run.probes["b"][0] > 0.0
    assert repaired_run.probes["shift"] == [-0.03, -0.03]
    assert naive_run.error == "InvalidArgumentError"  # shapes [1] and [] must be equal


# -- Keras 3 (issue #26): keras.Variable and add_weight, without TensorFlow imported --------


def test_keras_variable_rebound_without_tensorflow_import():
    source = """\
        import keras
        from keras import Variable as KV

        bias = keras.Variable(0.5)
        bias -= 0.1
        gain = KV([1.0, 2.0])
        gain = gain - 0.5 * keras.ops.ones((2,))
        """
    first, second = check(source, CODE)
    assert span(first) == (5, 1, 5, 12)
    assert "`bias` is a Keras variable" in first.message
    assert fixed(source, first).splitlines()[4] == "bias.assign(bias - 0.1)"
    assert "`gain` is a Keras variable" in second.message
    assert fixed(source, second).splitlines()[6] == "gain.assign_sub(0.5 * keras.ops.ones((2,)))"


def test_tf_keras_variable_and_keras_look_alikes():
    source = """\
        import tensorflow as tf
        import keras

        w = tf.keras.Variable(2.0)
        w = w * 0.5
        w.assign_sub(0.1)
        t = keras.ops.ones((3,))
        t = t - 1.0
        """
    [finding] = check(source, CODE)
    assert finding.line == 5 and "`w` is a Keras variable" in finding.message


KERAS_LAYER_DECAY = """\
    import keras
    import numpy as np

    class Decay(keras.layers.Layer):
        def build(self, input_shape):
            self.scale = self.add_weight(shape=(), initializer="ones")

        def call(self, x):
            self.scale -= 0.25
            return x * self.scale

    layer = Decay()
    layer(np.ones((1, 2), "float32"))
    layer(np.ones((1, 2), "float32"))
    """


def test_add_weight_rebound_in_a_keras_layer_and_the_fix_keeps_a_variable():
    [finding] = check(KERAS_LAYER_DECAY, CODE)
    assert finding.line == 9 and "`self.scale` is a Keras variable" in finding.message
    repaired = fixed(KERAS_LAYER_DECAY, finding)
    assert check(repaired, CODE) == []
    probes = {
        "is_variable": "isinstance(layer.scale, keras.Variable)",
        "weights": "len(layer.trainable_weights)",
        "scale": "round(float(np.asarray(layer.scale)), 3)",
    }
    broken, repaired_run = run_tensorflow(textwrap.dedent(KERAS_LAYER_DECAY), repaired, **probes)
    assert broken.error is None and repaired_run.error is None
    assert broken.probes["is_variable"] is False  # the pitfall: a tensor, silently
    assert repaired_run.probes["is_variable"] is True
    assert repaired_run.probes["weights"] == 1
    assert repaired_run.probes["scale"] == 0.5  # two updates of 0.25, in place


# Proven by tests/analysis/test_fixes_proven.py: each fix applied and re-checked with every
# rule and, the runnable ones, run against code that does what the source means to do.
DESCENT_BY_HAND = """\
    import tensorflow as tf

    w = tf.Variable([1.0, 2.0])
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        grad = tape.gradient(loss, w)
        w = w - 0.1 * grad
    print(type(w).__name__, w.numpy().round(4).tolist())
    """
FIX_CASES = (
    FixCase(
        CODE,
        DESCENT_BY_HAND,
        DESCENT_BY_HAND.replace("w = w - 0.1 * grad", "w.assign(w - 0.1 * grad)"),
        "gradient descent by hand",
    ),
)
