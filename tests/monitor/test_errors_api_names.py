"""A TensorFlow or Keras name Python could not find (issue #25,
``errors/families_api_names.py``): tf.keras 2 names run on Keras 3 get what Keras 3 calls
them, mistyped names get the closest public name; each fix as printed runs in the kernel,
and the correct spelling beside it gets no entry. An attribute missing on the learner's
own object is not this family's."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERAS_SECTION = "keras-model-api"


def test_keras_2_names_on_keras_3(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "opt = keras.optimizers.Adam(0.01)\ntp = keras.metrics.TruePositives()")
    # The optimizer's rate: `lr` is gone; the fix reads and sets learning_rate.
    error = failing(kernel, "opt.lr.assign(0.1)")
    assert error["course"]["section"] == KERAS_SECTION
    assert "Keras 3 optimizers dropped the `lr` alias" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "opt.learning_rate.assign(0.1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "round(float(opt.learning_rate), 6)") == 0.1
    # A metric's reset.
    error = failing(kernel, "tp.update_state([1, 0], [1, 1])\ntp.reset_states()")
    assert "renamed a metric's `reset_states()` to `reset_state()`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "tp.reset_state()"
    runs_cleanly(kernel, f"tp.update_state([1, 0], [1, 1])\n{fix}")
    assert value_of(kernel, "float(tp.result())") == 0.0
    # The reduction enum: a string now.
    cell = "bce = keras.losses.BinaryCrossentropy(reduction=keras.losses.Reduction.SUM)"
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == 'bce = keras.losses.BinaryCrossentropy(reduction="sum")'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "round(float(bce([[1.0], [0.0]], [[0.9], [0.2]])), 4)") == 0.3285
    # The preprocessing layers left experimental.preprocessing, under tf.keras too.
    for cell in (
        "norm = keras.layers.experimental.preprocessing.Normalization(axis=-1)",
        "norm = tf.keras.layers.experimental.preprocessing.Normalization(axis=-1)",
    ):
        error = failing(kernel, cell)
        fix = fix_of(error["explanation"])
        assert fix == cell.replace("experimental.preprocessing.", "")
        runs_cleanly(kernel, fix)
        assert value_of(kernel, "type(norm).__name__") == "Normalization"


def test_mistyped_names_get_the_closest_one(kernel: KernelSession) -> None:
    error = failing(kernel, "hidden = keras.layers.Dence(8)")
    assert (
        "The module `keras.layers` has no `Dence`; its closest name is `Dense`"
        in (error["explanation"])
    )
    fix = fix_of(error["explanation"])
    assert fix == "hidden = keras.layers.Dense(8)"
    runs_cleanly(kernel, fix)
    # One clearly closest TensorFlow name (reduce_mean, not reduce_min or reduce_max).
    error = failing(kernel, "avg = tf.reduce_means(tf.constant([1.0, 2.0]))")
    fix = fix_of(error["explanation"])
    assert fix == "avg = tf.reduce_mean(tf.constant([1.0, 2.0]))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(avg)") == 1.5
    # A model's method, named on the learner's model.
    runs_cleanly(kernel, "net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])")
    error = failing(
        kernel, "net.compile(optimizer='sgd', loss='mse')\nnet.fitt(np.zeros((4, 3)), np.zeros(4))"
    )
    fix = fix_of(error["explanation"])
    assert fix == "net.fit(np.zeros((4, 3)), np.zeros(4))"
    runs_cleanly(kernel, f"{fix[:-1]}, verbose=0)")


def test_correct_names_and_the_learners_own_objects_get_no_such_entry(
    kernel: KernelSession,
) -> None:
    # The look-alikes: the names as Keras 3 spells them.
    runs_cleanly(
        kernel,
        "opt2 = keras.optimizers.Adam(0.01)\nopt2.learning_rate.assign(0.1)\n"
        "tp2 = keras.metrics.TruePositives()\ntp2.reset_state()\n"
        'bce2 = keras.losses.BinaryCrossentropy(reduction="sum")\n'
        "norm2 = keras.layers.Normalization()\nhidden2 = keras.layers.Dense(8)",
    )
    # A class of the learner's: its attributes are theirs to name, not Keras's.
    execution = run(kernel, "class Box:\n    size = 3\n\nBox().sise", ok=False)
    error = checked_report(execution)["error"]
    assert error is None or "closest name" not in error.get("explanation", ""), error
    # A plain dict: not a TensorFlow or Keras object either.
    execution = run(kernel, "settings = {'rate': 1}\nsettings.rate", ok=False)
    error = checked_report(execution)["error"]
    assert error is None or "closest name" not in error.get("explanation", ""), error


def test_keras_2_keywords_get_their_keras_3_names(kernel: KernelSession) -> None:
    # Too far apart for a spelling match: a small table of Keras 2 keywords.
    cell = "slow = keras.optimizers.Adam(lr=1e-5)"
    error = failing(kernel, cell)
    assert "`Adam` takes `learning_rate`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "slow = keras.optimizers.Adam(learning_rate=1e-5)"
    runs_cleanly(kernel, fix)
    runs_cleanly(
        kernel,
        "tiny = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        'tiny.compile(optimizer="sgd", loss="mse")',
    )
    cell = "tiny.fit(np.zeros((4, 3)), np.zeros(4), nb_epoch=2, verbose=0)"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == "tiny.fit(np.zeros((4, 3)), np.zeros(4), epochs=2, verbose=0)"
    runs_cleanly(kernel, f"log = {fix}")
    assert value_of(kernel, "len(log.history['loss'])") == 2


RATE_METRIC = """class PositiveRate(keras.metrics.Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.positives = self.add_weight("positives", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.positives.assign_add(tf.reduce_sum(tf.cast(y_pred > 0.5, tf.float32)))

    def result(self):
        return self.positives

rate = PositiveRate()
"""


def test_add_weight_in_tf_keras_2_order(kernel: KernelSession) -> None:
    error = failing(kernel, RATE_METRIC)
    assert error["course"]["section"] == "keras-weights-in-build"
    text = error["explanation"]
    assert "Keras 3's `add_weight` takes `shape` first" in text
    fix = fix_of(text)
    assert fix == 'self.positives = self.add_weight(name="positives", initializer="zeros")'
    fixed = RATE_METRIC.replace(
        'self.positives = self.add_weight("positives", initializer="zeros")', fix
    )
    runs_cleanly(
        kernel, fixed + "rate.update_state(tf.constant([1, 0, 1]), tf.constant([0.9, 0.8, 0.1]))"
    )
    assert value_of(kernel, "float(rate.result())") == 2.0


def test_a_keras_2_name_on_the_learners_own_metric_class(kernel: KernelSession) -> None:
    # The class is the learner's, its base Keras's: Keras's renamed method is still told.
    runs_cleanly(
        kernel,
        "class Hits(keras.metrics.Metric):\n"
        "    def __init__(self, **kwargs):\n"
        "        super().__init__(**kwargs)\n"
        '        self.n = self.add_weight(name="n", shape=(), initializer="zeros")\n'
        "    def update_state(self, y):\n"
        "        self.n.assign_add(tf.reduce_sum(y))\n"
        "    def result(self):\n"
        "        return self.n\n"
        "hits = Hits()",
    )
    text = failing(kernel, "hits.reset_states()")["explanation"]
    assert "Keras 3 renamed a metric's `reset_states()` to `reset_state()`" in text
    fix = fix_of(text)
    assert fix == "hits.reset_state()"
    runs_cleanly(kernel, fix)


def test_the_same_old_spelling_again_in_the_cell_is_named(kernel: KernelSession) -> None:
    # Fixing the failing line alone would stop at the next one written the same way.
    runs_cleanly(kernel, "hits_a = keras.metrics.Mean()\nhits_b = keras.metrics.Mean()")
    cell = "hits_a.reset_states()\nhits_b.reset_states()"
    text = failing(kernel, cell)["explanation"]
    assert "this cell writes it again: `hits_b.reset_states()` (line 2)" in text
    assert fix_of(text) == "hits_a.reset_state()"
    runs_cleanly(kernel, cell.replace("reset_states", "reset_state"))
    two_weights = RATE_METRIC.replace(
        '        self.positives = self.add_weight("positives", initializer="zeros")\n',
        '        self.positives = self.add_weight("positives", initializer="zeros")\n'
        '        self.seen = self.add_weight("seen", initializer="zeros")\n',
    )
    text = failing(kernel, two_weights)["explanation"]
    assert (
        'this cell writes it again: `self.seen = self.add_weight("seen", initializer="zeros")`'
        " (line 5), which needs the arguments by keyword too"
    ) in text
    # A single add_weight in Keras 3's order is quiet.
    runs_cleanly(
        kernel, RATE_METRIC.replace('add_weight("positives"', 'add_weight(name="positives"')
    )


CALLBACK_DATA = """feats = np.random.rand(64, 3).astype("float32")
target = feats.sum(axis=1)
reg = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
reg.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
"""

RATE_TRACE = """class RateTrace(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append(float(self.model.optimizer.lr))

trace = RateTrace()
reg.fit(feats, target, epochs=2, verbose=0, callbacks=[trace])
"""

STEP_COUNT = """class StepCount(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        self.steps = int(self.model.optimizer.iteration)

counter = StepCount()
reg.fit(feats, target, epochs=1, batch_size=16, verbose=0, callbacks=[counter])
"""


def test_a_name_missing_on_the_model_a_callback_reads(kernel: KernelSession) -> None:
    """``self.model.optimizer.lr`` inside a callback: the model is a Keras property of the
    callback, read through Keras's own descriptor; the rename is named in that line."""
    runs_cleanly(kernel, CALLBACK_DATA)
    error = failing(kernel, RATE_TRACE)
    assert "Keras 3 optimizers dropped the `lr` alias" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "self.seen.append(float(self.model.optimizer.learning_rate))"
    wrong = "self.seen.append(float(self.model.optimizer.lr))"
    runs_cleanly(kernel, RATE_TRACE.replace(wrong, fix))
    assert value_of(kernel, "[round(r, 4) for r in trace.seen]") == [0.05, 0.05]
    # A mistyped name on the same chain: the closest name the optimizer has.
    error = failing(kernel, STEP_COUNT)
    assert "its closest name is `iterations`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "self.steps = int(self.model.optimizer.iterations)"
    wrong = "self.steps = int(self.model.optimizer.iteration)"
    runs_cleanly(kernel, STEP_COUNT.replace(wrong, fix))
    assert value_of(kernel, "counter.steps") > 0
