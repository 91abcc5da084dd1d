from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span
from tests.tf_runner import run_tensorflow

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


HELPER_COMPUTES_TWICE = """\
    import tensorflow as tf

    w = tf.Variable(2.0)


    def grads_for(tape, loss_a, loss_b):
        grad_a = tape.gradient(loss_a, w)
        grad_b = tape.gradient(loss_b, w)
        return grad_a, grad_b


    with tf.GradientTape() as tape:
        loss_a = w * w
        loss_b = 3.0 * w
    grad_a, grad_b = grads_for(tape, loss_a, loss_b)
    """


def test_tape_passed_to_a_helper_that_computes_twice():
    [finding] = check(HELPER_COMPUTES_TWICE, CODE)
    assert span(finding) == (15, 18, 15, 49)
    assert "`grads_for(tape, ...)` computes gradients twice" in finding.message
    assert "non-persistent GradientTape `tape`" in finding.message
    repaired = fixed(HELPER_COMPUTES_TWICE, finding)
    assert repaired.splitlines()[11] == "with tf.GradientTape(persistent=True) as tape:"
    assert check(repaired, CODE) == []
    broken_run, repaired_run = run_tensorflow(
        HELPER_COMPUTES_TWICE, repaired, grads="[float(grad_a), float(grad_b)]"
    )
    assert broken_run.error == "RuntimeError"  # what the learner would have hit
    assert repaired_run.error is None
    assert repaired_run.probes["grads"] == [4.0, 3.0]


def test_helper_after_a_direct_gradient_and_in_another_cell():
    cells = [
        "import tensorflow as tf\nw = tf.Variable(2.0)\n"
        "def one_grad(t, loss):\n    return t.gradient(loss, w)",
        "with tf.GradientTape() as tape:\n    loss = w * w\n"
        "g1 = tape.gradient(loss, w)\ng2 = one_grad(tape, loss)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 4)
    assert "`one_grad(tape, ...)` is a second gradient computation" in finding.message


def test_helpers_that_compute_once_or_on_a_persistent_tape_are_silent():
    source = """\
        import tensorflow as tf

        w = tf.Variable(2.0)

        def one_grad(t, loss):
            return t.gradient(loss, w)

        def grads_for(tape, loss_a, loss_b, separately):
            if separately:
                return tape.gradient(loss_a, w)
            else:
                return tape.gradient(loss_b, w)

        def both(tape, loss_a, loss_b):
            return tape.gradient(loss_a, w), tape.gradient(loss_b, w)

        with tf.GradientTape() as tape:
            loss = w * w
        g = one_grad(tape, loss)

        with tf.GradientTape() as tape:
            loss_a, loss_b = w * w, 3.0 * w
        g = grads_for(tape, loss_a, loss_b, True)

        with tf.GradientTape(persistent=True) as tape:
            loss_a, loss_b = w * w, 3.0 * w
        g = both(tape, loss_a, loss_b)
        del tape
        """
    assert check(source, CODE) == []


GRADIENT_PER_VARIABLE = """\
    import tensorflow as tf

    ws = [tf.Variable(1.0), tf.Variable(2.0)]
    with tf.GradientTape() as tape:
        loss = ws[0] * ws[1]
    grads = []
    for v in ws:
        grads.append(tape.gradient(loss, v))
    """


def test_one_gradient_per_iteration_of_a_loop_outside_the_tape():
    [finding] = check(GRADIENT_PER_VARIABLE, CODE)
    assert span(finding) == (8, 18, 8, 40)
    assert "runs on every iteration of its loop" in finding.message
    assert "the second iteration fails" in finding.message
    repaired = fixed(GRADIENT_PER_VARIABLE, finding)
    assert repaired.splitlines()[3] == "with tf.GradientTape(persistent=True) as tape:"
    assert check(repaired, CODE) == []
    broken, repaired_run = run_tensorflow(
        GRADIENT_PER_VARIABLE, repaired, grads="[float(g) for g in grads]"
    )
    assert broken.error == "RuntimeError"
    assert repaired_run.error is None
    assert repaired_run.probes["grads"] == [2.0, 1.0]


def test_a_tape_per_iteration_or_a_loop_that_stops_is_silent():
    source = """\
        import tensorflow as tf

        ws = [tf.Variable(1.0), tf.Variable(2.0)]
        for epoch in range(3):
            with tf.GradientTape() as tape:     # a new tape each iteration
                loss = ws[0] * ws[1]
            grads = tape.gradient(loss, ws)

        with tf.GradientTape() as tape:
            loss = ws[0] * ws[1]
        for v in ws:
            first = tape.gradient(loss, v)
            break                               # only ever one gradient

        with tf.GradientTape() as tape:
            loss = ws[0] * ws[1]
        grads = tape.gradient(loss, ws)         # one call for all the variables
        for v, g in zip(ws, grads):
            v.assign_sub(0.1 * g)
        """
    assert check(source, CODE) == []


def test_gradient_per_element_of_a_comprehension():
    source = """\
        import tensorflow as tf

        a, b = tf.Variable(1.0), tf.Variable(2.0)
        with tf.GradientTape() as tape:
            loss = a * b
        grads = [tape.gradient(loss, v) for v in (a, b)]
        """
    [finding] = check(source, CODE)
    assert (finding.line, finding.column) == (6, 10)
    assert "runs on every iteration of its loop" in finding.message
    repaired = fixed(source, finding)
    assert check(repaired, CODE) == []
    broken, repaired_run = run_tensorflow(source, repaired, grads="[float(g) for g in grads]")
    assert broken.error == "RuntimeError"
    assert repaired_run.error is None and repaired_run.probes["grads"] == [2.0, 1.0]
    # One call for all of them is the usual form, and it needs no persistent tape.
    twin = source.replace("[tape.gradient(loss, v) for v in (a, b)]", "tape.gradient(loss, [a, b])")
    assert check(twin, CODE) == []


# -- the persistent tape the fix makes is released (issue #26) -----------------------------

TWO_LOSSES = """\
    import tensorflow as tf

    w = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        square = w * w
        cube = square * w
    d_square = tape.gradient(square, w)
    d_cube = tape.gradient(cube, w)  # the second one
    print(float(d_square), float(d_cube))
    """


def test_fix_deletes_a_module_level_tape_after_its_last_use():
    [finding] = check(TWO_LOSSES, CODE)
    assert finding.fix.description == (
        "Create the tape with `persistent=True` and `del tape` after its last use"
    )
    repaired = fixed(TWO_LOSSES, finding)
    assert repaired.splitlines()[3:9] == [
        "with tf.GradientTape(persistent=True) as tape:",
        "    square = w * w",
        "    cube = square * w",
        "d_square = tape.gradient(square, w)",
        "d_cube = tape.gradient(cube, w)  # the second one",
        "del tape",
    ]
    assert check(repaired, "TFC007") == [] and check(repaired, CODE) == []
    broken, working = run_tensorflow(TWO_LOSSES, repaired)
    assert broken.error == "RuntimeError"
    assert (working.error, working.stdout) == (None, "6.0 27.0\n")


def test_the_del_goes_after_the_block_holding_the_last_use_at_its_indentation():
    source = """\
        import tensorflow as tf

        ws = [tf.Variable(1.0), tf.Variable(2.0)]
        for epoch in range(2):
            with tf.GradientTape() as tape:
                loss = ws[0] * ws[1]
            for v in ws:
                v.assign_sub(0.1 * tape.gradient(loss, v))
            print(epoch)
        if ws:
        \twith tf.GradientTape() as other:
        \t\tloss = ws[0] * ws[1]
        \tfirst = other.gradient(loss, ws[0])
        if ws: second = other.gradient(loss, ws[1])
        print(first, second)
        """
    per_epoch, after_if = check(source, CODE)
    repaired = fixed(source, per_epoch)
    # Inside the epoch loop, after the inner loop: each epoch's tape is released.
    assert repaired.splitlines()[6:10] == [
        "    for v in ws:",
        "        v.assign_sub(0.1 * tape.gradient(loss, v))",
        "    del tape",
        "    print(epoch)",
    ]
    repaired = fixed(repaired, check(repaired, CODE)[0])
    # After the one-line ``if`` holding the last use, at the level both share.
    assert repaired.splitlines()[11:17] == [
        "\twith tf.GradientTape(persistent=True) as other:",
        "\t\tloss = ws[0] * ws[1]",
        "\tfirst = other.gradient(loss, ws[0])",
        "if ws: second = other.gradient(loss, ws[1])",
        "del other",
        "print(first, second)",
    ]
    assert check(repaired, "TFC007") == []
    assert after_if.fix is not None


def test_no_fix_where_the_del_cannot_be_placed_safely():
    source = """\
        import tensorflow as tf

        w = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = w * w
        g1 = tape.gradient(y, w)

        def again():
            return tape.gradient(y, w)   # may run after any `del tape`

        g2 = tape.gradient(y, w)
        with tf.GradientTape() as other:
            y = w * w
        g1 = other.gradient(y, w); g2 = other.gradient(y, w)
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [11, 14]
    assert all(f.fix is None for f in findings)
    assert findings[0].message.endswith(
        "which fails; create it with `persistent=True` and `del tape` after its last use"
    )


def test_no_del_where_the_tape_is_released_anyway():
    source = """\
        import tensorflow as tf

        w = tf.Variable(2.0)

        def grads(x):
            with tf.GradientTape() as tape:   # released when the function returns
                y = x * w
            return tape.gradient(y, w), tape.gradient(y, w)

        with tf.GradientTape() as tape:
            y = w * w
        g1 = tape.gradient(y, w)
        g2 = tape.gradient(y, w)
        tape = None                           # rebound: released here
        """
    in_function, at_module = check(source, CODE)
    for finding in (in_function, at_module):
        assert finding.fix.description == "Create the tape with `persistent=True`"
        assert "del " not in fixed(source, finding)


# Proven by tests/analysis/test_fixes_proven.py: each fix applied, re-checked with every rule
# and, the runnable ones, run against code that computes the same the intended way.
FIX_CASES = (
    FixCase(
        CODE,
        TWO_LOSSES,
        TWO_LOSSES.replace(
            "d_cube = tape.gradient(cube, w)  # the second one",
            "with tf.GradientTape() as tape:\n        cube = w * w * w\n"
            "    d_cube = tape.gradient(cube, w)",
        ),
        "the issue's case: two gradients of one tape",
    ),
    FixCase(
        CODE,
        """\
        import tensorflow as tf

        a, b = tf.Variable(1.0), tf.Variable(2.0)
        for step in range(2):
            with tf.GradientTape() as tape:
                loss = a * b * (step + 1)
            grads = [tape.gradient(loss, v) for v in (a, b)]
        print([float(g) for g in grads])
        """,
        """\
        import tensorflow as tf

        a, b = tf.Variable(1.0), tf.Variable(2.0)
        for step in range(2):
            with tf.GradientTape() as tape:
                loss = a * b * (step + 1)
            grads = tape.gradient(loss, [a, b])
        print([float(g) for g in grads])
        """,
        "a tape per iteration, a gradient per variable",
    ),
)


# -- a loop that changes what the tape recorded: the tape belongs in the loop ----------------

RECORDED_BEFORE_THE_LOOP = """\
    import tensorflow as tf

    params = [tf.constant(1.0), tf.constant(-2.0)]
    with tf.GradientTape() as tape:
        tape.watch(params)
        err = (params[0] * 3.0 + params[1]) ** 2
    for k in range(4):
        steps = tape.gradient(err, params)
        params = [p - 0.01 * s for p, s in zip(params, steps)]
    """


def test_a_loop_that_rebinds_the_sources_moves_the_tape_in():
    [finding] = check(RECORDED_BEFORE_THE_LOOP, CODE)
    assert "recorded the forward pass once, before the loop" in finding.message
    assert "the loop changes `params`" in finding.message
    assert "Move the `with` block that creates `tape` into the loop" in finding.message
    assert finding.fix is None  # persistent=True would leave None gradients
    lines = RECORDED_BEFORE_THE_LOOP.splitlines()
    block, loop = lines[3:6], lines[6:]
    moved = "\n".join(lines[:3] + [loop[0]] + ["    " + line for line in block] + loop[1:] + [""])
    assert check(moved, CODE) == []
    persistent = RECORDED_BEFORE_THE_LOOP.replace("GradientTape()", "GradientTape(persistent=True)")
    broken, repaired = run_tensorflow(persistent, moved, params="[float(p) for p in params]")
    assert broken.error == "TypeError"  # the rebound tensors were never recorded
    assert repaired.error is None
    updates = """\
    import tensorflow as tf

    w = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        err = (w * 3.0 - 1.0) ** 2
    for k in range(4):
        g = tape.gradient(err, w)
        w.assign_sub(0.01 * g)
    """
    [finding] = check(updates, CODE)
    assert "the loop changes the variables (`assign_sub`)" in finding.message
    assert finding.fix is None


SUMMED_AFTERWARDS = """\
    import tensorflow as tf

    shared = tf.Variable([[0.5, -0.2]])
    left_w = tf.Variable([[1.0], [2.0]])
    right_w = tf.Variable([[-1.0], [0.5]])
    pairs = [shared, left_w, right_w]
    feats = tf.constant([[1.0], [2.0]])
    with tf.GradientTape() as tape:
        mid = feats @ shared
        cost_left = tf.reduce_sum(mid @ left_w)
        cost_right = tf.reduce_sum((mid @ right_w) ** 2)
    g_left = tape.gradient(cost_left, pairs)
    g_right = tape.gradient(cost_right, pairs)
    blend = [0.3 * a + 0.7 * b for a, b in zip(g_left, g_right)]
    print([round(float(tf.reduce_sum(g)), 4) for g in blend])
    """


def test_gradients_only_summed_afterwards_get_the_one_total_advice():
    [finding] = check(SUMMED_AFTERWARDS, CODE)
    assert finding.fix is None
    assert "the gradients of `cost_left`, `cost_right` are only summed afterwards" in (
        finding.message
    )
    assert "`tape.gradient(total, pairs)`" in finding.message
    # The old fix does not repair it: cost_left never reaches right_w (None), and the
    # advice written out does.
    persistent = SUMMED_AFTERWARDS.replace("GradientTape()", "GradientTape(persistent=True)")
    one_total = SUMMED_AFTERWARDS.replace(
        "        cost_right = tf.reduce_sum((mid @ right_w) ** 2)\n",
        "        cost_right = tf.reduce_sum((mid @ right_w) ** 2)\n"
        "        total = 0.3 * cost_left + 0.7 * cost_right\n",
    ).replace(
        "    g_left = tape.gradient(cost_left, pairs)\n"
        "    g_right = tape.gradient(cost_right, pairs)\n"
        "    blend = [0.3 * a + 0.7 * b for a, b in zip(g_left, g_right)]\n",
        "    blend = tape.gradient(total, pairs)\n",
    )
    assert check(one_total, CODE) == []
    broken, working = run_tensorflow(persistent, one_total)
    assert broken.error == "TypeError"
    assert working.error is None and working.stdout.startswith("[")


def test_gradients_combined_otherwise_keep_the_persistent_fix():
    source = SUMMED_AFTERWARDS.replace("0.3 * a + 0.7 * b", "a * b")
    [finding] = check(source, CODE)
    assert finding.fix is not None and "persistent=True" in finding.fix.description
