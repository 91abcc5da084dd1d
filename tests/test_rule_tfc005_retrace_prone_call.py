from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC005"


def test_different_literals_at_call_sites_report_each_site():
    source = """\
        import tensorflow as tf

        @tf.function
        def scale(x, factor):
            return x * factor

        a = scale(x, 2)
        b = scale(x, factor=3.5)
        c = scale(x, 2)
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(7, 14, 7, 15), (8, 21, 8, 24), (9, 14, 9, 15)]
    assert "`factor`" in findings[0].message
    assert "(2, 3.5)" in findings[0].message


def test_same_literal_everywhere_and_bools_are_fine():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x, n, training=False):
            return x

        step(x, 3, training=True)
        step(x, 3, training=False)
        """
    assert check(source, CODE) == []


def test_loop_variable_passed_to_tf_function_wrapped_later():
    source = """\
        import tensorflow as t

        def body(x, n):
            return x * n

        fast = t.function(body)
        for n in range(5):
            fast(x, n)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 13, 8, 14)
    assert "from the loop over `range(5)`" in finding.message


def test_tf_function_created_in_loop():
    source = """\
        from tensorflow import function
        import tensorflow as tf

        for lr in rates:
            step = function(train)

            @tf.function
            def inner(x):
                return x
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(5, 12, 5, 27), (7, 6, 7, 17)]
    assert "created inside a loop" in findings[0].message


def test_self_method_calls_with_different_literals():
    source = """\
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x, k):
                return x * k

            def run(self, x):
                self.step(x, 1)
                self.step(x, 2)
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(9, 22, 9, 23), (10, 22, 10, 23)]


def test_notebook_cells():
    cells = [
        "import tensorflow as tf\n@tf.function\ndef f(x, k):\n    return x * k",
        "f(x, 1)",
        "f(x, 2)",
    ]
    findings = check_cells(cells, CODE)
    assert [(f.cell, *span(f)) for f in findings] == [(1, 1, 6, 1, 7), (2, 1, 6, 1, 7)]


def test_look_alikes_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None]), tf.TensorSpec([])])
        def typed(x, k):
            return x * k

        typed(x, 1)
        typed(x, 2)

        @tf.function
        def f(x, n):
            return x

        for n in tf.range(5):
            f(x, n)
        for n in range(5):
            n = tf.constant(n)
            f(x, n)
        for item in batches:
            f(item, 1)

        def plain(x, k):
            return x
        plain(x, 1)
        plain(x, 2)
        step = tf.function(plain)
        """
    assert check(source, CODE) == []


def test_function_wrapping_what_the_loop_iterates_over_is_silent():
    # One tf.function per model is needed anyway: it traces once for its own model.
    source = """\
        import tensorflow as tf

        compiled = []
        for model in models:
            compiled.append(tf.function(model))
        for name, layer in layers.items():
            serve = tf.function(layer.call)
        for size in (8, 16):
            net = build(size)
            fast = tf.function(net)
        for lr in rates:
            step = tf.function(train)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (12, 12, 12, 30)
