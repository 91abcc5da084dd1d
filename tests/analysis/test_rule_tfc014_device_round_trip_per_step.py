from __future__ import annotations

import re
import textwrap

import pytest

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.rules import rule_by_code
from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC014"

# A tf.function that trains (its tape's gradient updates ``w``), in 8 lines: the loops the
# tests append start on line 9.
STEP = """\
    import tensorflow as tf
    w = tf.Variable(0.0)
    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((x - w) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss
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
    "a tf.function call that trains": ("train_step(batch)", True),
    "apply_gradients": ("optimizer.apply_gradients(zip(grads, variables))", True),
    "train_on_batch": ("model.train_on_batch(batch)", True),
    "tape.gradient": ("grads = tape.gradient(loss, variables)", True),
    # Silent twins: loops that run no training step.
    "a plain function call": ("evaluate(batch)", False),
    "model prediction": ("model(batch)", False),
    "gradient on something that is no tape": ("grads = helper.gradient(loss)", False),
}

# Functions and methods the loops below call, defined in the same file.
HELPERS = """\
    import scipy.optimize

    def apply_update(grads):
        optimizer.apply_gradients(zip(grads, variables))

    class Trainer:
        def fit_batch(self, batch):
            apply_update(grads_for(batch))

    def train_eagerly(x):
        with tf.GradientTape() as tape:
            cost = tf.reduce_sum(x * w)
        w.assign_sub(tape.gradient(cost, w))

    @tf.function
    def predict_fn(x):
        return tf.nn.softmax(x * w)

    trainer = Trainer()
    fast_step = tf.function(train_eagerly)
    score_fn = tf.function(lambda x: x * w)
"""


def _read_lines(statement: str) -> tuple[list[int], int]:
    """The lines TFC014 reports in a loop running ``statement`` and reading
    ``batch.numpy()``, and the line of that read."""
    source = (
        STEP
        + HELPERS
        + f"""\
    with tf.GradientTape() as tape:
        loss = train_step(first)
    for batch in dataset:
        {statement}
        values = batch.numpy()
    """
    )
    read_line = next(
        number for number, line in enumerate(source.splitlines(), 1) if "batch.numpy()" in line
    )
    return [f.line for f in check(source, CODE)], read_line


@pytest.mark.parametrize("case", sorted(STEPS))
def test_what_counts_as_a_training_step(case: str):
    statement, reported = STEPS[case]
    lines, read_line = _read_lines(statement)
    assert lines == ([read_line] if reported else [])


# Training found where the loop only calls code that trains, each beside a look-alike that
# does not train (the loop around it is silent).
TRAINING_AND_LOOK_ALIKES = {
    "an optimizer's minimize, not a module's": (
        "optimizer.minimize(loss_fn, variables)",
        "scipy.optimize.minimize(objective, x0)",
    ),
    "a plain function that applies gradients": ("apply_update(grads)", "evaluate(batch)"),
    "a method that trains through a helper, not one of an unknown object": (
        "trainer.fit_batch(batch)",
        "env.fit_batch(batch)",
    ),
    "a tf.function that trains, not one that predicts": (
        "train_step(batch)",
        "predict_fn(batch)",
    ),
    "a tf.function of a def that trains, not of a lambda that scores": (
        "fast_step(batch)",
        "score_fn(batch)",
    ),
    "a tape's gradient, not a tape opened without one": (
        "grads = tape.gradient(loss, variables)",
        "with tf.GradientTape() as inner:\n            pass",
    ),
}


@pytest.mark.parametrize("case", sorted(TRAINING_AND_LOOK_ALIKES))
def test_training_reached_through_calls_and_its_look_alikes(case: str):
    trains, look_alike = TRAINING_AND_LOOK_ALIKES[case]
    lines, read_line = _read_lines(trains)
    assert lines == [read_line]
    lines, _ = _read_lines(look_alike)
    assert lines == []


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
            run.log({"loss": float(loss)})  # used in Python, but only every 100 steps
        try:
            check_finite(loss)
        except ValueError:
            print(loss)
        history.append(float(loss))
    """
    )
    [finding] = check(source, CODE)
    assert finding.line == 20  # the read on every step


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
        ("if w == x_old:\n            break", "moves.append(w - x_old)"),
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
        "@tf.function\ndef train_step(x):\n    return opt.minimize(lambda: loss_fn(x), [w])",
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


# Training loops that use what they read in Python on every step: silent, none of their
# reads (the loop waits for the device anyway). Each case has a twin that keeps the value
# for later instead (a list, NumPy arithmetic, TensorFlow), which is reported.
HOST_NEEDS = {
    "the action passed to env.step": (
        """\
    for t in range(100_000):
        loss = train_step(obs)
        action = tf.argmax(q_net(obs), axis=-1).numpy()[0]
        obs, reward, done, info = env.step(action)
        if done:
            obs = env.reset()
    """,
        ("env.step(action)", "remember(tf.constant(action))"),
        [12],
    ),
    "actions sampled from the probabilities with NumPy": (
        """\
    for t in range(100_000):
        probs = tf.nn.softmax(logits_fn(obs))
        action = np.random.choice(n_actions, p=probs.numpy()[0])
        loss = train_step(obs)
    """,
        ("np.random.choice(n_actions, p=", "np.log("),
        [12],
    ),
    "sampled ids decoded by a tokenizer": (
        """\
    for src, tgt in train_ds:
        loss = train_step(src)
        sample_ids = tf.argmax(model(src), axis=-1)
        text = tokenizer.decode(sample_ids.numpy()[0])
    """,
        ("tokenizer.decode(", "np.asarray("),
        [13],
    ),
    "the loss tested by an if": (
        """\
    for x in dataset:
        loss = train_step(x)
        if float(loss) < 1e-3:
            optimizer.learning_rate.assign(1e-4)
        history.append(loss.numpy())
    """,
        (
            "if float(loss) < 1e-3:\n            optimizer.learning_rate.assign(1e-4)",
            "small = float(loss) < 1e-3",
        ),
        [12, 13],
    ),
    "a name tested by an if": (
        """\
    for x in dataset:
        loss = train_step(x)
        converged = float(loss) < 1e-3
        if converged:
            optimizer.learning_rate.assign(1e-4)
    """,
        (
            "if converged:\n            optimizer.learning_rate.assign(1e-4)",
            "flags.append(converged)",
        ),
        [12],
    ),
    "a token id indexing a Python vocabulary": (
        """\
    for x in dataset:
        loss = train_step(x)
        token_id = tf.argmax(model(x)[0, -1]).numpy()
        words.append(vocabulary[token_id])
    """,
        ("vocabulary[token_id]", "token_id"),
        [12],
    ),
    "an epsilon-greedy action (read in one branch) passed to env.step": (
        """\
    for t in range(100_000):
        if rng.random() < epsilon:
            action = rng.integers(n_actions)
        else:
            action = tf.argmax(q_net(obs)[0]).numpy()
        obs, reward, done, info = env.step(action)
        loss = train_step(obs)
        losses.append(loss.numpy())
    """,
        ("obs, reward, done, info = env.step(action)", "actions.append(action)"),
        [17],
    ),
}


@pytest.mark.parametrize("case", sorted(HOST_NEEDS))
def test_loops_that_use_what_they_read_in_python_are_silent(case: str):
    loop, (use, keep), twin_lines = HOST_NEEDS[case]
    source = STEP + "    import numpy as np\n" + loop  # the loop starts on line 10
    assert check(source, CODE) == []
    twin = source.replace(use, keep)
    assert twin != source
    assert [f.line for f in check(twin, CODE)] == twin_lines


# The same needs met by a tensor the loop makes and passes on WITHOUT ``.numpy()``: the
# Python code it goes to converts it (``env.step`` reads the action as surely as
# ``.numpy()`` would), so the loop waits for the device anyway. Each twin keeps the tensor
# on the device instead, and the per-step ``.numpy()`` read of the loss is reported.
TENSOR_HOST_NEEDS = {
    "a tensor action passed to env.step": (
        """\
    for t in range(50_000):
        action = tf.argmax(critic(state), axis=-1)[0]
        state, reward, terminated, truncated, _ = env.step(action)
        losses.append(train_step(state).numpy())
    """,
        ("env.step(action)", "env.step(2)"),
    ),
    "tensor probabilities given to NumPy sampling": (
        """\
    for t in range(50_000):
        probs = tf.nn.softmax(actor(state))
        move = np.random.choice(4, p=probs[0])
        losses.append(train_step(state).numpy())
    """,
        ("np.random.choice(4, p=probs[0])", "np.log(probs[0])"),
    ),
    "a tensor tested by an if": (
        """\
    for batch in stream:
        norm = tf.reduce_max(tf.abs(encoder(batch)))
        if norm > 100.0:
            spikes += 1
        losses.append(train_step(batch).numpy())
    """,
        ("if norm > 100.0:\n            spikes += 1", "norms.append(norm > 100.0)"),
    ),
    "a tensor indexing a Python list": (
        """\
    for batch in stream:
        label_id = tf.argmax(classifier(batch)[0])
        names.append(class_names[label_id])
        losses.append(train_step(batch).numpy())
    """,
        ("class_names[label_id]", "label_id"),
    ),
}


@pytest.mark.parametrize("case", sorted(TENSOR_HOST_NEEDS))
def test_tensors_passed_to_python_code_without_numpy_are_host_needs(case: str):
    loop, (use, keep) = TENSOR_HOST_NEEDS[case]
    source = STEP + "    import numpy as np\n" + loop  # the loop starts on line 10
    assert check(source, CODE) == []
    twin = source.replace(use, keep)
    assert twin != source
    [finding] = check(twin, CODE)
    assert finding.line == len(textwrap.dedent(twin).splitlines())  # the loss read


def test_tensors_kept_on_the_device_are_no_host_need():
    # Tensors passed to the tape, zipped into an optimizer reached through the model, to a
    # helper of the file, kept in a list, printed, or iterated (a tensor's rows are
    # tensors): none is read on the host, so the per-step read is still reported.
    source = """\
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        model.compile(optimizer="adam")

        def log_step(value):
            tf.summary.scalar("loss", value)

        history = []
        for images, labels in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(images) - labels))
            grads = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
            log_step(loss)
            kept.append(loss)
            print(loss)
            for row in tf.unstack(labels):
                count_row(row)
            history.append(loss.numpy())
        """
    assert [f.line for f in check(source, CODE)] == [17, 20]  # ``print`` reads it too


def test_reinforce_loop_sampling_actions_for_the_environment_is_silent():
    source = """\
        import gymnasium as gym
        import numpy as np
        import tensorflow as tf

        env = gym.make("CartPole-v1")
        policy = tf.keras.Sequential([
            tf.keras.layers.Dense(32, activation="relu"),
            tf.keras.layers.Dense(2, activation="softmax"),
        ])
        optimizer = tf.keras.optimizers.Adam(1e-2)
        episode_returns = []

        for episode in range(300):
            state, _ = env.reset()
            rewards, log_probs = [], []
            with tf.GradientTape() as tape:
                for t in range(500):
                    probs = policy(state[None, :])
                    action = np.random.choice(2, p=probs.numpy()[0])
                    log_probs.append(tf.math.log(probs[0, action]))
                    state, reward, terminated, truncated, _ = env.step(action)
                    rewards.append(reward)
                    if terminated or truncated:
                        break
                returns = tf.constant(discounted(rewards), tf.float32)
                loss = -tf.reduce_sum(tf.stack(log_probs) * returns)
            grads = tape.gradient(loss, policy.trainable_variables)
            optimizer.apply_gradients(zip(grads, policy.trainable_variables))
            episode_returns.append(sum(rewards))
        """
    assert check(source, CODE) == []
    # The twin: the action chosen on the device, the probabilities only kept for a plot.
    twin = source.replace(
        "action = np.random.choice(2, p=probs.numpy()[0])",
        "action = int(tf.random.categorical(tf.math.log(probs), 1)[0, 0])\n"
        "                    history.append(probs.numpy())",
    ).replace("env.step(action)", "env.step(1)")
    assert [f.line for f in check(twin, CODE)] == [20]


def test_inference_and_evaluation_loops_are_no_training_loops():
    source = """\
        import tensorflow as tf

        model = tf.keras.models.load_model("translator.keras")
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        val_loss = tf.keras.metrics.Mean()

        @tf.function
        def predict_fn(images):
            return tf.nn.softmax(model(images, training=False))

        @tf.function
        def eval_step(src, tgt):
            logits = model([src, tgt[:, :-1]], training=False)
            val_loss.update_state(loss_fn(tgt[:, 1:], logits))
            return tf.argmax(logits, axis=-1)

        predictions = []
        for images, _ in test_ds:
            predictions.append(predict_fn(images).numpy())

        decoded = []
        for src, tgt in val_ds:
            pred_ids = eval_step(src, tgt)
            decoded.extend(pred_ids.numpy().tolist())
            print("val loss", float(val_loss.result()))
        """
    assert check(source, CODE) == []
    # The twin: the evaluation step also trains (a tape's gradient applied): reported.
    twin = source.replace(
        "            val_loss.update_state(loss_fn(tgt[:, 1:], logits))\n",
        "            val_loss.update_state(loss_fn(tgt[:, 1:], logits))\n"
        "            optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
    )
    assert [f.line for f in check(twin, CODE)] == [25]


def test_greedy_decoding_loop_without_training_is_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def decode_step(dec_input, state, enc_out):
            logits, state = decoder(dec_input, state, enc_out)
            return logits, state

        def translate(sentence, max_len=40):
            enc_out, state = encoder(tokenize(sentence))
            dec_input = tf.constant([[start_id]])
            out_ids = []
            for _ in range(max_len):
                logits, state = decode_step(dec_input, state, enc_out)
                next_id = tf.argmax(logits[0, -1])
                out_ids.append(next_id.numpy())
                dec_input = tf.reshape(next_id, [1, 1])
            return out_ids
        """
    assert check(source, CODE) == []


# A loop whose steps take NumPy batches made on the host each iteration (an index drawn by a
# NumPy generator, a slice of a NumPy array, the learner's own helper applied to one) runs at
# the host's pace: its per-step read is not what keeps the device waiting, so it is silent.
# Each twin feeds the same step from the device (a tensor, a tf.data dataset): reported.
HOST_FED_LOOPS = {
    "an index drawn by a NumPy generator, then a helper of the file": (
        """\
    import numpy as np
    rng = np.random.default_rng(3)
    readings = np.linspace(0.0, 1.0, 600).astype(np.float32)

    def add_jitter(chunk):
        return chunk + rng.normal(0.0, 0.01, size=chunk.shape).astype(np.float32)

    history = []
    for round_ in range(40):
        picks = rng.choice(len(readings), size=48)
        chunk = add_jitter(readings[picks])
        history.append(float(train_step(chunk)))
    """,
        ("chunk = add_jitter(readings[picks])", "chunk = tf.gather(tf.constant(readings), picks)"),
    ),
    "a slice of a NumPy array per step": (
        """\
    import numpy as np
    samples = np.random.rand(320).astype("float32")
    trace = []
    for start in range(0, 320, 32):
        piece = samples[start:start + 32]
        trace.append(train_step(piece).numpy())
    """,
        ("samples = np.random.rand(320)", "samples = tf.random.uniform([320])"),
    ),
}


@pytest.mark.parametrize("case", sorted(HOST_FED_LOOPS))
def test_loops_fed_numpy_batches_made_on_the_host_are_silent(case: str):
    loop, (host, device) = HOST_FED_LOOPS[case]
    source = STEP + loop
    assert check(source, CODE) == []
    twin = source.replace(host, device)
    assert twin != source
    [finding] = check(twin, CODE)
    assert "in a training loop copies the value to the host" in finding.message


def test_an_eager_step_given_numpy_slices_under_its_tape_is_silent():
    source = """\
        import numpy as np
        import keras
        import tensorflow as tf

        signal = np.sin(np.arange(512, dtype=np.float32))[:, None]
        net = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
        sgd = keras.optimizers.SGD(0.01)
        costs = []
        for k in range(0, 512, 64):
            window = signal[k:k + 64]
            with tf.GradientTape() as tape:
                cost = tf.reduce_mean(tf.square(net(window) - window))
            weights = net.trainable_variables
            sgd.apply_gradients(zip(tape.gradient(cost, weights), weights))
            costs.append(cost.numpy())
        """
    source = textwrap.dedent(source)
    assert check(source, CODE) == []
    # The same loop over a dataset of the same numbers: nothing is made on the host.
    twin = source.replace(
        "for k in range(0, 512, 64):\n    window = signal[k:k + 64]",
        "for window in tf.data.Dataset.from_tensor_slices(signal).batch(64):",
    )
    assert twin != source
    [finding] = check(twin, CODE)
    assert finding.line == 14


# A loop over learning rates, each given to the optimizer: a range test measures one rate
# per step, so each step's loss is its result.
SWEEP = """\
    import numpy as np
    import keras
    import tensorflow as tf
    net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    opt = keras.optimizers.SGD()
    rates = np.geomspace(1e-5, 1.0, 30)
    probe_losses = []
    for {target} in {rates}:
        {set_rate}
        with tf.GradientTape() as tape:
            step_loss = tf.reduce_mean((net(feats) - goals) ** 2)
        grads = tape.gradient(step_loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))
        probe_losses.append(float(step_loss))
"""


@pytest.mark.parametrize(
    ("target", "rates", "set_rate"),
    [
        ("rate", "rates", "opt.learning_rate.assign(rate)"),
        ("rate", "rates", "keras.backend.set_value(opt.learning_rate, rate)"),
        ("(i, rate)", "enumerate(rates)", "opt.learning_rate = rate"),
    ],
)
def test_a_learning_rate_range_test_is_silent(target: str, rates: str, set_rate: str) -> None:
    source = SWEEP.format(target=target, rates=rates, set_rate=set_rate)
    assert check(source, CODE) == []


def test_a_warm_up_that_computes_the_rate_is_reported() -> None:
    # The loop runs over steps and computes each rate: a training loop like any other.
    source = SWEEP.format(
        target="step", rates="range(200)", set_rate="opt.learning_rate.assign(1e-3 * step / 200)"
    )
    [finding] = check(source, CODE)
    assert "`float(step_loss)`" in finding.message
