"""What Keras's training calls need that the learner's call or class left out (issue #25,
``errors/families_keras_calls.py`` and the never-compiled family): a dataset given with
its targets beside it, a subclassed model with no ``call``, a model loaded with
``compile=False``, and an attention layer's (output, scores) pair used as one tensor.
Each fix as printed runs; the correct calls beside them raise nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """xs = np.random.rand(32, 4).astype("float32")
ys = np.random.rand(32, 1).astype("float32")
line_model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
line_model.compile(optimizer="sgd", loss="mse")
pairs = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(8)
"""


def test_targets_given_beside_a_dataset_that_holds_them(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "log = line_model.fit(pairs, ys, epochs=2, verbose=0)")
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "`pairs` already yields (inputs, targets) pairs" in text
    fix = fix_of(text)
    assert fix == "log = line_model.fit(pairs, epochs=2, verbose=0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "len(log.history['loss'])") == 2


NO_CALL = """class Scorer(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.out = keras.layers.Dense(1)

scorer = Scorer()
scorer.compile(optimizer="sgd", loss="mse")
scorer.fit(xs, ys, epochs=1, verbose=0)
"""


def test_a_subclassed_model_with_no_call(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, NO_CALL)
    text = error["explanation"]
    assert "`Scorer` extends `keras.Model` but defines no `call(self, inputs)`" in text
    fix = fix_of(text)
    assert fix == (
        "def call(self, inputs): x = inputs; x = self.hidden(x); x = self.out(x); return x"
    )
    fixed = NO_CALL.replace(
        "        self.out = keras.layers.Dense(1)\n",
        f"        self.out = keras.layers.Dense(1)\n\n    {fix}\n",
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "list(scorer.predict(xs[:2], verbose=0).shape)") == [2, 1]


def test_a_model_loaded_with_compile_false(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(kernel, SETUP)
    path = str(tmp_path / "line.keras")
    runs_cleanly(kernel, f"line_model.save({path!r})")
    cell = f"again = keras.models.load_model({path!r}, compile=False)\n"
    error = failing(kernel, cell + "again.fit(xs, ys, epochs=1, verbose=0)")
    text = error["explanation"]
    assert "loaded it with `compile=False`, which leaves the saved optimizer and loss" in text
    fix = fix_of(text)
    assert fix == cell.strip().replace(", compile=False", "")
    runs_cleanly(kernel, fix + "\nagain.fit(xs, ys, verbose=0)")


def test_an_attention_layers_output_and_scores_kept_together(kernel: KernelSession) -> None:
    cell = (
        "q = keras.Input((5, 8))\n"
        "out = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)("
        "q, q, return_attention_scores=True)\n"
        "h = keras.layers.Dense(3)(out)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`out` holds both results of" in text and "the attention scores" in text
    fix = fix_of(text)
    assert fix.startswith("out, scores = keras.layers.MultiHeadAttention(")
    lines = cell.split("\n")
    runs_cleanly(kernel, "\n".join([lines[0], fix, lines[2]]))
    assert value_of(kernel, "list(h.shape)") == [None, 5, 3]


def test_one_examples_values_by_input_name(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        'named = {"age": keras.Input((1,), name="age"), "score": keras.Input((1,), name="score")}\n'
        "joined = keras.layers.Concatenate()([named['age'], named['score']])\n"
        "two_in = keras.Model(named, keras.layers.Dense(1)(joined))",
    )
    text = failing(kernel, 'pred = two_in.predict({"age": 30.0, "score": 0.5}, verbose=0)')[
        "explanation"
    ]
    assert "gives each named input one Python value: one example" in text
    fix = fix_of(text)
    assert fix == (
        'pred = two_in.predict({"age": np.array([30.0]), "score": np.array([0.5])}, verbose=0)'
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(pred.shape)") == [1, 1]


def test_a_partial_restore_asserted_complete(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(
        kernel,
        "class Lin(tf.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w = tf.Variable(tf.ones((3, 1)))\n"
        "lin = Lin()\nlin_opt = keras.optimizers.Adam(0.1)\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = tf.reduce_sum(tf.ones((2, 3)) @ lin.w)\n"
        "lin_opt.apply_gradients(zip(tape.gradient(loss, [lin.w]), [lin.w]))\n"
        "saved_at = tf.train.Checkpoint(model=lin, optimizer=lin_opt)"
        f".save({str(tmp_path / 'ck')!r})",
    )
    cell = (
        "fresh = Lin()\nstatus = tf.train.Checkpoint(model=fresh).restore(saved_at)\n"
        "status.assert_consumed()"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "training-loop"
    text = error["explanation"]
    assert "The checkpoint holds `optimizer." in text
    fix = fix_of(text)
    assert fix == "status.assert_existing_objects_matched()"
    runs_cleanly(kernel, cell.replace("status.assert_consumed()", fix))
    # A checkpoint object of the learner's is named as the one restored into.
    named = (
        "model_only = tf.train.Checkpoint(model=Lin())\nstatus = model_only.restore(saved_at)\n"
        "status.assert_consumed()"
    )
    text = failing(kernel, named)["explanation"]
    assert "`model_only`, the checkpoint you restored into, has no object for it" in text
    runs_cleanly(kernel, named.replace("status.assert_consumed()", fix_of(text)))


TRAIN_STEP_ONLY = """class Pair(keras.Model):
    def __init__(self):
        super().__init__()
        self.squash = keras.layers.Dense(2)
        self.unsquash = keras.layers.Dense(4)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def step_loss(self, x):
        return tf.reduce_mean((self.unsquash(self.squash(x)) - x) ** 2)

    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = self.step_loss(data)
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}
{test_step}
pair = Pair()
pair.compile(optimizer="adam")
pair.fit(xs, epochs=1, batch_size=8, verbose=0)
"""
TEST_STEP = """
    def test_step(self, data):
        self.loss_tracker.update_state(self.step_loss(data))
        return {"loss": self.loss_tracker.result()}
"""


def test_evaluate_on_a_model_that_overrides_train_step_only(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(kernel, TRAIN_STEP_ONLY.replace("{test_step}", ""))
    error = failing(kernel, "pair_scores = pair.evaluate(xs, verbose=0)")
    text = error["explanation"]
    assert "`Pair` overrides `train_step` (what fit runs) but not `test_step`" in text
    assert "`pair.evaluate(...)` runs Keras's own `test_step`" in text
    assert "Define `test_step(self, data)` in `Pair`" in text
    # No call() is proposed that chains a metric tracker as if it were a layer.
    assert "loss_tracker(x)" not in text and "Fix:" not in text
    # The advice applied: with its own test_step, evaluate runs.
    runs_cleanly(kernel, TRAIN_STEP_ONLY.replace("{test_step}", TEST_STEP))
    runs_cleanly(kernel, "pair_scores = pair.evaluate(xs, verbose=0)")


TWO_HEADS = """
patients = np.random.rand(30, 5).astype("float32")
stay_days = np.random.rand(30).astype("float32")
risk_class = np.random.randint(0, 3, 30)
record_in = keras.Input(shape=(5,))
shared = keras.layers.Dense(8, activation="relu")(record_in)
two_heads = keras.Model(record_in, [
    keras.layers.Dense(1, name="days")(shared),
    keras.layers.Dense(3, activation="softmax", name="risk")(shared),
])
two_heads.compile("adam", ["mse", "sparse_categorical_crossentropy"])
risk_weights = {0: 1.0, 1: 4.0, 2: 2.0}
"""


def test_class_weight_given_to_a_model_of_two_outputs(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TWO_HEADS)
    cell = (
        "two_heads.fit(patients, [stay_days, risk_class], class_weight=risk_weights, "
        "epochs=1, verbose=0)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "labels-and-loss"
    assert "`two_heads` has several outputs" in text
    fix = fix_of(text)
    assert fix == (
        "two_heads.fit(patients, [stay_days, risk_class], sample_weight=[np.ones(len(risk_class)), "
        "np.array([risk_weights[c] for c in risk_class])], epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, fix)
    # One output: class_weight is what it is for, and no entry.
    runs_cleanly(
        kernel,
        "one_head = keras.Sequential([keras.Input((5,)), "
        "keras.layers.Dense(3, activation='softmax')])\n"
        "one_head.compile('adam', 'sparse_categorical_crossentropy')\n"
        "one_head.fit(patients, risk_class, class_weight=risk_weights, epochs=1, verbose=0)",
    )
