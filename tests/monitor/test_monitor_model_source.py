"""Silent bugs in the learner's own Keras 3 classes, told when fit/evaluate/predict ran
them (``monitor/training/model_source.py``): Python state changed in a compiled method,
randomness in a ``call`` that ignores ``training``, ``training=True`` in a custom
``test_step``, metrics kept in module globals. Each mistake is shown by its symptom in
the kernel, its note names what the learner wrote, the note's fix is applied as printed
and the symptom is gone; a correct look-alike stays silent."""

from __future__ import annotations

import ast
import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "keras.utils.set_random_seed(3)\n"
    "rows = np.random.rand(96, 4).astype('float32')\n"
    "goal = (rows @ np.array([[2.0], [-1.0], [0.5], [1.0]], dtype='float32')).astype('float32')"
)
SECTIONS = {"side-effects", "training-argument", "custom-train-step"}


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    """The coaching notes of this module's sections after running ``code``; every code
    span they print is valid Python."""
    report = checked_report(run(kernel, code))
    texts = [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") in SECTIONS]
    for text in texts:
        for span in spans(text):
            ast.parse(span)
    return texts


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def span_after(text: str, words: str) -> str:
    """The first code span printed after ``words``."""
    return spans(text[text.index(words) + len(words) :])[0]


# --------------------------------------------------------- Python state in call
TICKER = """class TickLayer(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.inner = keras.layers.Dense(units)
        self.ticks = 0

    def call(self, batch):
        self.ticks += 1
        return self.inner(batch)

ticker = TickLayer(1)
ticking = keras.Sequential([keras.Input((4,)), ticker])
ticking.compile(optimizer="sgd", loss="mse"{eager})
ticking.fit(rows, goal, batch_size=16, epochs=2, verbose=0)
"""
TICKS = "int(np.asarray(ticker.ticks))"  # 96 / 16 * 2 = 12 batches


def test_a_python_counter_in_call_counts_traces_not_batches(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, TICKER.format(eager=""))
    assert value_of(kernel, TICKS) < 12  # the symptom: a count of traces
    assert "`TickLayer.call` changes `self.ticks` with Python" in text
    assert "`self.ticks += 1`" in text and "only while Keras traces it" in text
    # The printed fix, applied as printed: a weight in __init__, assign_add in call.
    created = span_after(text, "replace `self.ticks = 0` with ")
    update = span_after(text, "write ")
    assert created.startswith("self.ticks = self.add_weight(") and update == (
        "self.ticks.assign_add(1)"
    )
    fixed = TICKER.replace("self.ticks = 0", created).replace("self.ticks += 1", update)
    assert notes_of(kernel, fixed.format(eager="")) == []
    assert value_of(kernel, TICKS) >= 12
    # The look-alike: the Python counter in a model compiled with run_eagerly=True runs
    # on every batch (and Keras's build call), in fit and in predict.
    assert notes_of(kernel, TICKER.format(eager=", run_eagerly=True")) == []
    assert value_of(kernel, TICKS) >= 12
    assert notes_of(kernel, "seen = ticking.predict(rows[:8], verbose=0)") == []


SHAPES = """shapes_seen = []

class ShapeLog(keras.layers.Layer):
    def call(self, batch):
        shapes_seen.append(tuple(batch.shape))
        return batch * 2.0

logging_model = keras.Sequential([keras.Input((4,)), ShapeLog(), keras.layers.Dense(1)])
logging_model.compile(optimizer="sgd", loss="mse"{eager})
logging_model.fit(rows, goal, batch_size=32, epochs=2, verbose=0)
"""


def test_a_list_appended_to_in_call_holds_only_traces(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, SHAPES.format(eager=""))
    assert value_of(kernel, "len(shapes_seen)") < 6
    assert "`ShapeLog.call` changes the global `shapes_seen`" in text
    assert "`shapes_seen.append(tuple(batch.shape))`" in text
    eager = span_after(text, "compile with ")
    assert eager == "run_eagerly=True"
    assert notes_of(kernel, SHAPES.format(eager=f", {eager}")) == []
    assert value_of(kernel, "len(shapes_seen)") >= 6  # 3 batches x 2 epochs (and the build)


GLOBAL_STEPS = """steps_taken = 0

class Stepper(keras.Model):
    def __init__(self):
        super().__init__()
        self.lin = keras.layers.Dense(1)

    def call(self, batch):
        global steps_taken
        steps_taken += 1
        return self.lin(batch)

stepper = Stepper()
stepper.compile(optimizer="sgd", loss="mse")
stepper.fit(rows, goal, batch_size=32, epochs=2, verbose=0)
"""


def test_a_global_counter_in_a_model_call(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, GLOBAL_STEPS)
    assert "`Stepper.call` changes the global `steps_taken`" in text
    assert value_of(kernel, "steps_taken") < 6
    created = span_after(text, "outside the function: ")
    update = span_after(text, "write ")
    assert created == 'steps_taken = keras.Variable(0, dtype="int64", trainable=False)'
    fixed = (
        GLOBAL_STEPS.replace("steps_taken = 0", created)
        .replace("        global steps_taken\n", "")
        .replace("steps_taken += 1", update)
    )
    assert notes_of(kernel, fixed) == []
    assert value_of(kernel, "int(steps_taken.numpy())") >= 6  # every batch (and the build)
    # The same counter in train_step is told once, by the traces (their side-effect
    # reason), not again here.
    in_step = GLOBAL_STEPS.replace(
        "    def call(self, batch):\n        global steps_taken\n        steps_taken += 1\n",
        "    def call(self, batch):\n",
    ).replace(
        "stepper = Stepper()",
        "    def train_step(self, data):\n"
        "        global steps_taken\n"
        "        steps_taken += 1\n"
        "        return super().train_step(data)\n\n"
        "stepper = Stepper()",
    )
    report = checked_report(run(kernel, in_step))
    [trace] = report["traces"]
    assert [r["kind"] for r in trace["reasons"]] == ["side_effect"]
    assert [n for n in report["notes"] if "steps_taken" in n["text"]] == []


# ------------------------------------------------ randomness that ignores training
SHAKE = """class Shake(keras.layers.Layer):
    def __init__(self, spread):
        super().__init__()
        self.spread = spread

    def call(self, signal):
        signal = signal + keras.random.normal(tf.shape(signal), stddev=self.spread)
        return signal

shaky = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6), Shake(0.5),
                          keras.layers.Dense(1)])
shaky.compile(optimizer="adam", loss="mse")
shaky.fit(rows, goal, epochs=1, verbose=0)
"""
CALM = """class Gate(keras.layers.Layer):
    def call(self, h, training=None):
        if not training:
            return h
        return tf.nn.dropout(h, rate=0.3)

class Fuzz(keras.layers.Layer):
    def call(self, h, training=False):
        noise = keras.random.normal(tf.shape(h)) if training else 0.0
        return h + noise

class Sampler(keras.layers.Layer):
    def call(self, pair):
        mean, log_var = pair
        eps = keras.random.normal(tf.shape(mean))
        return mean + tf.exp(0.5 * log_var) * eps

picks = keras.Input((4,))
drawn = Sampler()([keras.layers.Dense(2)(picks), keras.layers.Dense(2)(picks)])
sampling = keras.Model(picks, drawn)
sampling.compile(optimizer="adam", loss="mse")
sampling.fit(rows, goal[:, [0, 0]], epochs=1, verbose=0)
drawn_twice = sampling.predict(rows[:8], verbose=0)

calm = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), Gate(), Fuzz(),
                         keras.layers.Dropout(0.5), keras.layers.Dense(1)])
calm.compile(optimizer="adam", loss="mse")
calm.fit(rows, goal, epochs=1, verbose=0, validation_split=0.25)
calm_pred = calm.predict(rows[:8], verbose=0)
"""
STEADY = (
    "bool(np.array_equal(shaky.predict(rows[:8], verbose=0), shaky.predict(rows[:8], verbose=0)))"
)


def test_noise_in_a_call_without_training(kernel: KernelSession) -> None:
    # fit alone is right: training is when the noise belongs.
    assert notes_of(kernel, SHAKE) == []
    [text] = notes_of(kernel, "guess = shaky.predict(rows[:8], verbose=0)")
    assert value_of(kernel, STEADY) is False
    assert "`Shake.call` has no `training` parameter and always applies" in text
    assert "`keras.random.normal`" in text
    header = span_after(text, "fills in: ").removesuffix(" ...")
    guarded = span_after(text, "only in training: ")
    assert header == "def call(self, signal, training=None):"
    statement = "signal = signal + keras.random.normal(tf.shape(signal), stddev=self.spread)"
    assert guarded == f"if training: {statement}"
    fixed = SHAKE.replace("def call(self, signal):", header).replace(statement, guarded)
    run(kernel, fixed)
    assert notes_of(kernel, "guess = shaky.predict(rows[:8], verbose=0)") == []
    assert value_of(kernel, STEADY) is True
    # Look-alikes: randomness only in training, Keras's Dropout, and a VAE's sampling
    # layer (random in predict on purpose: a sample drawn from the values it gets).
    assert notes_of(kernel, CALM) == []
    same = "bool(np.array_equal(calm_pred, calm.predict(rows[:8], verbose=0)))"
    assert value_of(kernel, same) is True


def test_dropout_by_hand_with_training_ignored(kernel: KernelSession) -> None:
    code = """class HandDrop(keras.layers.Layer):
    def call(self, h, training=None):
        return tf.nn.dropout(h, rate=0.4)

holes = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), HandDrop(),
                          keras.layers.Dense(1)])
holes.compile(optimizer="adam", loss="mse")
holes.fit(rows, goal, epochs=1, verbose=0)
score = holes.evaluate(rows, goal, verbose=0)
"""
    [text] = notes_of(kernel, code)
    assert "`HandDrop.call` takes `training` but applies `tf.nn.dropout`" in text
    guarded = span_after(text, "only in training: ")
    assert guarded == "return tf.nn.dropout(h, rate=0.4) if training else h"
    fixed = code.replace("return tf.nn.dropout(h, rate=0.4)", guarded)
    assert notes_of(kernel, fixed) == []
    same = "holes.evaluate(rows, goal, verbose=0) == holes.evaluate(rows, goal, verbose=0)"
    assert value_of(kernel, same) is True


# ----------------------------------------------------- training=True in test_step
CHECKER = """class Checker(keras.Model):
    def __init__(self):
        super().__init__()
        self.wide = keras.layers.Dense(24, activation="relu")
        self.thin = keras.layers.Dropout(0.6)
        self.last = keras.layers.Dense(1)

    def call(self, feats, training=False):
        return self.last(self.thin(self.wide(feats), training=training))

    def test_step(self, data):
        feats, truth = data
        guess = self(feats, training=True)
        loss = self.compute_loss(x=feats, y=truth, y_pred=guess)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(truth, guess)
        return {m.name: m.result() for m in self.metrics}

checker = Checker()
checker.compile(optimizer="adam", loss="mse")
checker.fit(rows, goal, epochs=1, verbose=0)
"""
REPEATABLE = (
    "checker.evaluate(rows, goal, batch_size=96, verbose=0)"
    " == checker.evaluate(rows, goal, batch_size=96, verbose=0)"
)


def test_training_true_in_test_step(kernel: KernelSession) -> None:
    assert notes_of(kernel, CHECKER) == []  # fit without validation never runs test_step
    [text] = notes_of(kernel, "checked = checker.evaluate(rows, goal, verbose=0)")
    assert value_of(kernel, REPEATABLE) is False
    assert "`Checker.test_step` calls `self` with `training=True`" in text
    assert "`guess = self(feats, training=True)`" in text
    assert "`Dropout` drops units at random" in text
    fix = span_after(text, "Write ")
    assert fix == "guess = self(feats, training=False)"
    run(kernel, CHECKER.replace("guess = self(feats, training=True)", fix))
    assert notes_of(kernel, "checked = checker.evaluate(rows, goal, verbose=0)") == []
    assert value_of(kernel, REPEATABLE) is True
    # The look-alike: training=True in test_step of a model with no layer that behaves
    # differently in training changes nothing: silent.
    plain = (
        CHECKER.replace("class Checker", "class Flat")
        .replace("        self.thin = keras.layers.Dropout(0.6)\n", "")
        .replace("self.thin(self.wide(feats), training=training)", "self.wide(feats)")
        .replace("checker = Checker()", "checker = Flat()")
    )
    run(kernel, plain)
    assert notes_of(kernel, "checked = checker.evaluate(rows, goal, verbose=0)") == []


# ------------------------------------------------------- metrics in module globals
RUNNING = """err_avg = keras.metrics.Mean(name="loss")
abs_err = keras.metrics.MeanAbsoluteError(name="mae")

class Runner(keras.Model):
    def __init__(self):
        super().__init__()
        self.lin = keras.layers.Dense(1)

    def call(self, feats):
        return self.lin(feats)

    def train_step(self, data):
        feats, truth = data
        with tf.GradientTape() as tape:
            guess = self(feats, training=True)
            loss = tf.reduce_mean(tf.square(guess - truth))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        err_avg.update_state(loss)
        abs_err.update_state(truth, guess)
        return {"loss": err_avg.result(), "mae": abs_err.result()}

runner = Runner()
runner.compile(optimizer=keras.optimizers.SGD(0.05))
runner_log = runner.fit(rows, goal, batch_size=32, epochs=3, verbose=0)
"""


def test_metrics_kept_in_module_globals(kernel: KernelSession) -> None:
    texts = notes_of(kernel, RUNNING)
    assert len(texts) == 1, texts
    [text] = texts
    # The symptom: the tracker counted every batch of every epoch (3 x 3), never reset.
    assert value_of(kernel, "int(err_avg.count.numpy())") == 9
    assert "`err_avg` and `abs_err` are module globals that `Runner.train_step` updates" in text
    created = spans(text[text.index("in `__init__`, ") + 15 : text.index("; in train_step")])
    assert created == [
        'self.err_avg = keras.metrics.Mean(name="loss")',
        'self.abs_err = keras.metrics.MeanAbsoluteError(name="mae")',
    ]
    assert span_after(text, "in train_step, ") == "self.err_avg"
    prop = span_after(text, "resets them: ")
    assert prop == "def metrics(self): return [self.err_avg, self.abs_err]"
    init = "".join(f"        {line}\n" for line in created)
    fixed = (
        RUNNING.split("class Runner", 1)[1]
        .replace(
            "        self.lin = keras.layers.Dense(1)\n",
            f"        self.lin = keras.layers.Dense(1)\n{init}",
        )
        .replace("err_avg.", "self.err_avg.")
        .replace("abs_err.", "self.abs_err.")
        .replace("    def call(", f"    @property\n    {prop}\n\n    def call(")
    )
    assert notes_of(kernel, f"class Runner{fixed}") == []
    # Reset by fit every epoch: the tracker holds the last epoch's 3 batches only.
    assert value_of(kernel, "int(runner.err_avg.count.numpy())") == 3
    # The look-alike: globals listed in the model's own metrics property, which fit
    # resets every epoch.
    listed = RUNNING.replace(
        "    def call(",
        "    @property\n    def metrics(self):\n        return [err_avg, abs_err]\n\n    def call(",
    )
    assert notes_of(kernel, listed) == []
    assert value_of(kernel, "int(err_avg.count.numpy())") == 3


# ------------------------------------------------ what is read from a class, once
class _CondGate:
    def call(self, h, training=None):
        return tf.cond(training, lambda: tf.nn.dropout(h, 0.2), lambda: h)  # noqa: F821


class _Unguarded:
    def call(self, h, training=None):
        h = tf.nn.dropout(h, 0.2)  # noqa: F821
        return h


def test_the_reading_of_a_class_sees_guards_and_is_cached() -> None:
    from jupyterlab_tfcoach.monitor.training import model_source

    assert model_source.reading_of(_CondGate).random_calls == []
    reading = model_source.reading_of(_Unguarded)
    [random_call] = reading.random_calls
    assert random_call.guarded_fix == "if training: h = tf.nn.dropout(h, 0.2)"
    assert model_source.reading_of(_Unguarded) is reading  # parsed once per class
