from __future__ import annotations

import re
import textwrap

import pytest

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.rules import rule_by_code
from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC014"

STEP = """\
    import tensorflow as tf

    w = tf.Variable(0.0)

    @tf.function
    def train_step(x):
        return tf.reduce_mean(x - w)

"""


def test_numpy_of_the_step_result_every_batch():
    source = (
        STEP
        + """\
    losses = []
    for x in dataset:
        loss = train_step(x)
        losses.append(loss.numpy())
    """
    )
    [finding] = check(source, CODE)
    assert span(finding) == (12, 19, 12, 31)
    assert finding.severity is Severity.INFORMATION
    assert finding.message.startswith(
        "`loss.numpy()` in a training loop copies the value to the host and waits for the "
        "device on every step"
    )
    assert "`tf.keras.metrics.Mean`" in finding.message and "once per epoch" in finding.message
    assert finding.fix is None


def test_tensors_kept_and_converted_once_are_silent():
    source = (
        STEP
        + """\
    losses = []
    for x in dataset:
        losses.append(train_step(x))
    history = tf.stack(losses).numpy()
    """
    )
    assert check(source, CODE) == []


def test_float_int_and_print_of_known_tensors():
    source = (
        STEP
        + """\
    for step, x in enumerate(dataset):
        loss = train_step(x)
        total = float(loss)
        first = float(train_step(x))
        count = int(w)
        print("step", step, "loss", loss)
        print("step", step)
        rate = float(learning_rate)
        size = int(x.shape[0])
    """
    )
    findings = check(source, CODE)
    assert [(f.line, f.column) for f in findings] == [(11, 13), (12, 13), (13, 13), (14, 5)]


def test_loss_given_to_tape_gradient_is_a_tensor():
    source = """\
        import tensorflow as tf

        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            print(float(loss))
            print(float(accuracy))
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 11, 8, 22)


# What makes a loop a training loop: each loop body also reads ``batch.numpy()``.
STEPS = {
    "a tf.function call": ("train_step(batch)", True),
    "apply_gradients": ("optimizer.apply_gradients(zip(grads, variables))", True),
    "train_on_batch": ("model.train_on_batch(batch)", True),
    "tape.gradient": ("grads = tape.gradient(loss, variables)", True),
    "a tape opened in the loop": ("with tf.GradientTape() as inner:\n            pass", True),
    # Silent twins: loops that run no training step.
    "a plain function call": ("evaluate(batch)", False),
    "model prediction": ("model(batch)", False),
    "gradient on something that is no tape": ("grads = helper.gradient(loss)", False),
}


@pytest.mark.parametrize("case", sorted(STEPS))
def test_what_counts_as_a_training_step(case: str):
    statement, reported = STEPS[case]
    source = (
        STEP
        + f"""\
    with tf.GradientTape() as tape:
        loss = train_step(first)
    for batch in dataset:
        {statement}
        values = batch.numpy()
    """
    )
    findings = check(source, CODE)
    expected_line = next(
        number for number, line in enumerate(source.splitlines(), 1) if "batch.numpy()" in line
    )
    assert [f.line for f in findings] == ([expected_line] if reported else [])


def test_reads_once_per_epoch_are_silent():
    source = (
        STEP
        + """\
    mean_loss = tf.keras.metrics.Mean()
    for _ in range(10):
        mean_loss.reset_state()
        for x in dataset:
            loss = train_step(x)
            mean_loss.update_state(loss)
            per_step = loss.numpy()
        print("epoch done", float(mean_loss.result()), mean_loss.result().numpy())
        print("last loss", loss, float(loss))
    """
    )
    [finding] = check(source, CODE)
    assert finding.line == 15  # the inner loop's read only


def test_steps_run_by_a_comprehension_make_the_loop_around_it_an_epoch_loop():
    source = (
        STEP
        + """\
    for _ in range(10):
        losses = [train_step(x) for x in batches]
        print(tf.reduce_mean(losses).numpy())
        per_step = [loss.numpy() for loss in losses]
    """
    )
    assert check(source, CODE) == []
    # The twin: the same steps run one by one in the loop.
    one_by_one = source.replace("[train_step(x) for x in batches]", "train_step(x)")
    assert [f.line for f in check(one_by_one, CODE)] == [11, 12]


def test_step_loop_counting_epochs_is_an_epoch_loop():
    # Full-batch training: each iteration is an epoch, so reading the loss there is the
    # once-per-epoch read the rule recommends. The same loop counting steps is reported.
    epochs = (
        STEP
        + """\
    for epoch in range(20):
        loss = train_step(features)
        losses.append(loss.numpy())
    """
    )
    assert check(epochs, CODE) == []
    [finding] = check(epochs.replace("epoch", "i"), CODE)
    assert finding.line == 11


def test_periodic_reads_under_an_if_are_silent():
    source = (
        STEP
        + """\
    step = 0
    while True:
        loss = train_step(next(batches))
        step += 1
        if step % 100 == 0:
            print(f"step {step}: {loss.numpy():.4f}")
        try:
            check_finite(loss)
        except ValueError:
            print(loss)
        if float(loss) < 0.01:
            optimizer.learning_rate.assign(1e-4)
    """
    )
    [finding] = check(source, CODE)
    assert finding.line == 19  # the condition itself runs every step


# Loops that stop on what they read need the value every iteration: silent. Each case has a
# twin, the same loop without the stopping decision, that is reported.
STOPPING_LOOPS = {
    "convergence test with break": (
        """\
    for it in range(1, 2001):
        x_old = w.numpy()
        loss = train_step(x)
        path.append(w.numpy())
        if w == x_old:
            break
    """,
        ("break", "print('same')"),
        [10, 12],
    ),
    "early stopping on a running mean": (
        """\
    for episode in range(10000):
        reward = int(train_step(x))
        rewards.append(reward)
        running = statistics.mean(rewards)
        if running > threshold:
            break
    """,
        ("break", "print(running)"),
        [10],
    ),
    "return under an if": (
        """\
    def fit():
        for x in dataset:
            loss = train_step(x)
            history.append(loss.numpy())
            if history[-1] < 0.01:
                return history
    """,
        ("return history", "print(history[-1])"),
        [12],
    ),
    "while test on a value the loop reads": (
        """\
    loss_value = 1e9
    while loss_value > 1e-4:
        loss = train_step(x)
        loss_value = loss.numpy()
    """,
        ("while loss_value > 1e-4:", "while step < 1000:"),
        [12],
    ),
}


@pytest.mark.parametrize("case", sorted(STOPPING_LOOPS))
def test_loops_that_stop_on_what_they_read_are_silent(case: str):
    loop, (decision, no_decision), twin_lines = STOPPING_LOOPS[case]
    source = STEP + loop
    assert check(source, CODE) == []
    twin = source.replace(decision, no_decision)
    assert twin != source
    assert [f.line for f in check(twin, CODE)] == twin_lines


def test_exits_that_decide_nothing_from_the_values_are_reported():
    source = (
        STEP
        + """\
    step = 0
    while step < 1000:
        loss = train_step(next(batches))
        print(float(loss))
        step += 1
        for grad in grads:
            if grad is None:
                break
        try:
            batch = next(batches)
        except StopIteration:
            break
    """
    )
    # ``step += 1`` counts; the inner ``break`` leaves the inner loop; running out of
    # batches is how every data loop ends.
    assert [f.line for f in check(source, CODE)] == [12]


def test_loop_over_values_written_in_its_header_is_no_training_loop():
    source = (
        STEP
        + """\
    for temperature in (0.2, 0.5, 1.0, 1.5):
        print(temperature, train_step(logits / temperature).numpy())
    """
    )
    assert check(source, CODE) == []
    # The twin: the same loop over a collection that is not written out (a data set).
    twin = source.replace("(0.2, 0.5, 1.0, 1.5)", "temperatures")
    assert [f.line for f in check(twin, CODE)] == [10]


def test_step_split_over_written_out_parts_still_runs_once_per_batch():
    # Two optimizers for two groups of layers: the step loop is still the batch loop, so its
    # per-batch read is reported whether the step is split or not.
    split = (
        STEP
        + """\
    for x in dataset:
        loss = train_step(x)
        for layers, optimizer in ((lower, lower_opt), (upper, upper_opt)):
            optimizer.apply_gradients(zip(grads, layers.trainable_variables))
        status = mean_loss.result().numpy()
    """
    )
    assert [f.line for f in check(split, CODE)] == [13]
    whole = split.replace("        loss = train_step(x)\n", "")
    assert [f.line for f in check(whole, CODE)] == [12]


def test_loops_nested_inside_the_step_loop_still_run_every_step():
    source = (
        STEP
        + """\
    for x in dataset:
        loss = train_step(x)
        for grad in grads:
            print(grad.numpy())
        norms = [g.numpy() for g in grads]
    """
    )
    assert [f.line for f in check(source, CODE)] == [12, 13]


def test_graph_code_and_callbacks_are_silent():
    source = (
        STEP
        + """\
    @tf.function
    def train_epoch(dataset):
        for x in dataset:
            loss = train_step(x)
            tf.print(loss)
        return loss

    for x in dataset:
        loss = train_step(x)
        def report():
            return loss.numpy()  # runs whenever it is called, not per step
        callbacks.append(report)
        tf.print("loss", loss)

    final = train_step(x).numpy()
    """
    )
    assert check(source, CODE) == []


def test_shadowed_builtins_are_silent():
    source = (
        STEP
        + """\
    from rich import print

    def float(value):
        return value

    for x in dataset:
        loss = train_step(x)
        print(loss)
        float(loss)
    """
    )
    assert check(source, CODE) == []


def test_notebook_time_cell():
    cells = [
        "import tensorflow as tf",
        "@tf.function\ndef train_step(x):\n    return x * 2",
        "%%time\nfor x in dataset:\n    loss = train_step(x)\n    print(loss.numpy())",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (2, 4, 11, 4, 23)
    # The twin: read once, after the loop.
    cells[2] = "%%time\nfor x in dataset:\n    loss = train_step(x)\nprint(loss.numpy())"
    assert check_cells(cells, CODE) == []


def test_docs_example_is_reported_and_its_correction_is_not():
    docs = rule_by_code(CODE).docs
    example, corrected = re.findall(r"```python\n(.*?)```", docs, re.S)
    prelude = textwrap.dedent(STEP)
    assert len(check(prelude + example, CODE)) == 1
    assert check(prelude + corrected, CODE) == []


def test_formatting_a_tensor_in_an_f_string_is_a_read_per_step():
    source = """\
        import tensorflow as tf

        w = tf.Variable(2.0)
        opt = tf.keras.optimizers.SGD(0.1)
        for step in range(5):
            with tf.GradientTape() as tape:
                loss = (w - 1.0) ** 2
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            print(f"step {step}: loss={loss:.4f}")
        """
    [finding] = check(source, CODE)
    assert (finding.line, finding.severity.value) == (9, "information")
    # Formatting the step number alone reads nothing from the device.
    twin = source.replace('print(f"step {step}: loss={loss:.4f}")', 'print(f"step {step}")')
    assert check(twin, CODE) == []


def test_values_checked_by_an_assertion_every_step_are_silent():
    source = """\
        import numpy as np
        import tensorflow as tf

        var = tf.Variable([1.0, 2.0])
        opt = tf.keras.optimizers.SGD(0.1)
        expected = [[0.9, 1.9], [0.8, 1.8]]
        for step in range(2):
            opt.apply_gradients([(tf.constant([1.0, 1.0]), var)])
            np.testing.assert_allclose(var.numpy(), expected[step], rtol=1e-6)
            assert float(var[0]) < 1.0
            history = var.numpy()          # not a check: still a read per step
        """
    [finding] = check(source, CODE)
    assert finding.line == 11


def test_a_batch_loop_that_always_breaks_after_one_step_is_silent():
    source = """\
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.SGD(0.1)
        ds = tf.data.Dataset.from_tensor_slices((tf.ones([8, 2]), tf.ones([8, 1]))).batch(4)
        for epoch in range(3):
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                        model.trainable_variables))
                print(loss.numpy())
                break
        """
    assert check(source, CODE) == []
    assert len(check(source.replace("            break\n", ""), CODE)) == 1
