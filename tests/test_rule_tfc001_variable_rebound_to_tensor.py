from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

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
    assert fixed(source, findings[0]).splitlines()[2] == "a.assign_sub(0.5)"
    assert fixed(source, findings[1]).splitlines()[3] == "b.assign_add(1)"
    assert fixed(source, findings[2]).splitlines()[4] == "c.assign(c * (2 + 1))"


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
