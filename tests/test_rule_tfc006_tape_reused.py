from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, fixed, span

CODE = "TFC006"


def test_second_gradient_on_non_persistent_tape():
    source = """\
        import tensorflow as tf
        with tf.GradientTape() as tape:
            y = f(w)
        g1 = tape.gradient(y, w)
        g2 = tape.gradient(y, v)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 6, 5, 25)
    assert "`tape.gradient(...)`" in finding.message
    assert fixed(source, finding).splitlines()[1] == (
        "with tf.GradientTape(persistent=True) as tape:"
    )


def test_fix_appends_to_existing_arguments_and_flips_false():
    source = """\
        import tensorflow as t
        with t.GradientTape(watch_accessed_variables=False) as a:
            y = f(w)
        a.gradient(y, w)
        a.jacobian(y, w)
        with t.GradientTape(persistent=False) as b:
            y = f(w)
        b.gradient(y, w)
        b.batch_jacobian(y, w)
        """
    first, second = check(source, CODE)
    assert fixed(source, first).splitlines()[1] == (
        "with t.GradientTape(watch_accessed_variables=False, persistent=True) as a:"
    )
    assert fixed(source, second).splitlines()[5] == "with t.GradientTape(persistent=True) as b:"


def test_assigned_tape_inside_function_from_import():
    source = """\
        from tensorflow import GradientTape

        def grads(x):
            tape = GradientTape()
            with tape:
                y = x * x
            return tape.gradient(y, x), tape.gradient(y, x)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 33, 7, 52)
    assert fixed(source, finding).splitlines()[3] == "    tape = GradientTape(persistent=True)"


def test_notebook_cells_fix_dropped_across_cells():
    cells = [
        "import tensorflow as tf\nwith tf.GradientTape() as tape:\n    y = f(w)",
        "a = tape.gradient(y, w)",
        "b = tape.gradient(y, w)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (2, 1, 5, 1, 24)
    assert finding.fix is None  # the constructor lives in another cell


def test_look_alikes_are_silent():
    source = """\
        import tensorflow as tf
        with tf.GradientTape(persistent=True) as tape:
            y = f(w)
        tape.gradient(y, w)
        tape.gradient(y, v)
        del tape

        def branches(x, flag):
            with tf.GradientTape() as tape:
                y = x * x
            if flag:
                return tape.gradient(y, x)
            else:
                return tape.gradient(y, [x])

        def early(x, flag):
            with tf.GradientTape() as tape:
                y = x * x
            if flag:
                return tape.gradient(y, x)
            return tape.gradient(y, x)

        def loop(batches):
            for x in batches:
                with tf.GradientTape() as tape:
                    y = x * x
                tape.gradient(y, x)

        def fresh(x):
            with tf.GradientTape() as tape:
                y = x * x
            tape.gradient(y, x)
            with tf.GradientTape() as tape:
                y = x * x
            tape.gradient(y, x)
        """
    assert check(source, CODE) == []


def test_continue_or_break_after_the_first_gradient_on_a_per_iteration_tape():
    source = """\
        import tensorflow as tf

        def train(model, batches, x):
            for batch in batches:
                with tf.GradientTape() as tape:
                    loss = model(batch)
                if loss < 0:
                    tape.gradient(loss, model.trainable_variables)
                    continue
                tape.gradient(2 * loss, model.trainable_variables)
            with tf.GradientTape() as outer:
                loss = model(x)
            for batch in batches:
                if batch is None:
                    outer.gradient(loss, model.trainable_variables)
                    break
                outer.gradient(2 * loss, model.trainable_variables)
        """
    # Only the tape made before the loop is reused (by the next iteration).
    [finding] = check(source, CODE)
    assert finding.line == 17
