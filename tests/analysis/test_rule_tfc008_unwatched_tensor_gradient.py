from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC008"


def test_constant_source_not_watched():
    source = """\
        import tensorflow as tf
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            y = x * x
        dy_dx = tape.gradient(y, x)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 26, 5, 27)
    assert "`x` is a constant tensor" in finding.message
    assert "tape.watch(x)" in finding.message


def test_list_of_sources_under_alias_only_constants_reported():
    source = """\
        import tensorflow as t
        w = t.Variable(1.0)
        b = t.convert_to_tensor([1.0, 2.0])
        with t.GradientTape() as g:
            loss = w * b
        grads = g.gradient(loss, [w, b])
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 30, 6, 31)


def test_inside_function_with_from_import():
    source = """\
        from tensorflow import GradientTape, constant

        def grad():
            x = constant(2.0)
            with GradientTape() as tape:
                y = x ** 2
            return tape.gradient(y, sources=x)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 37, 7, 38)


def test_notebook_cells():
    cells = [
        "import tensorflow as tf\nx = tf.constant(1.0)",
        "with tf.GradientTape() as tape:\n    y = x * 2\ntape.gradient(y, x)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 18, 3, 19)


def test_watched_variables_and_parameters_are_silent():
    source = """\
        import tensorflow as tf
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)

        v = tf.Variable(1.0)
        with tf.GradientTape() as tape2:
            y = v * v
        tape2.gradient(y, v)

        def grad(p):
            with tf.GradientTape() as tape:
                y = p * p
            return tape.gradient(y, p)   # parameter of unknown type

        z = tf.constant(1.0)
        z = tf.Variable(z)
        with tf.GradientTape() as tape3:
            y = z * 2
        tape3.gradient(y, z)

        c = tf.constant([1.0])
        with tf.GradientTape() as tape4:
            tape4.watch([c])
            y = c * 2
        tape4.gradient(y, [c])
        """
    assert check(source, CODE) == []


def test_watching_a_list_name_or_a_starred_element_watches_its_contents():
    source = """\
        import tensorflow as tf
        a = tf.constant(1.0)
        b = tf.constant(2.0)
        params = [a, b]
        with tf.GradientTape() as tape:
            tape.watch(params)
            loss = a * b
        grads = tape.gradient(loss, [a, b])

        def f(rest):
            c = tf.constant(3.0)
            with tf.GradientTape() as tape:
                tape.watch([a, *rest])
                loss = a * c
            return tape.gradient(loss, [c])

        with tf.GradientTape() as tape:
            tape.watch(a)
            loss = a * b
        grads = tape.gradient(loss, [a, b])
        """
    [finding] = check(source, CODE)
    assert (finding.line, finding.column) == (20, 33)


def test_watching_a_parameter_watches_only_that_name():
    # A parameter cannot hold a constant created after the call, so ``c`` is unwatched.
    source = """\
        import tensorflow as tf

        def f(x):
            c = tf.constant(1.0)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * c
            return tape.gradient(y, [x, c])
        """
    [finding] = check(source, CODE)
    assert (finding.line, finding.column) == (8, 33)
