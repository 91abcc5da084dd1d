"""Silent bugs around Keras 3 ``fit``, found by their symptom: nothing learned (every layer
frozen, gradients never applied), weights stuck at a zeros initializer, a custom train_step
whose loss never reaches fit's logs, a softmax over one unit, and ``training=True`` written
in ``call``. Each mistake next to its fix, run as the report prints it, and a correct
look-alike that stays silent."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from tests.harness import (
    IMPORTS,
    KernelSession,
    KernelSetup,
    changes_of,
    checked_report,
    note_texts,
    run,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "keras.utils.set_random_seed(7)\n"
    "feats = np.random.rand(80, 5).astype('float32')\n"
    "flags = (feats[:, 0] > 0.5).astype('float32')\n"
    "target = (feats @ np.arange(1, 6, dtype='float32')[:, None]).astype('float32')"
)


FIT_SECTIONS = {
    "trainable-weights",
    "custom-train-step",
    "zero-initialization",
    "output-activation",
    "training-argument",
}


def report_of(kernel: KernelSession, code: str) -> dict:
    report = checked_report(run(kernel, code))
    for entry in [*report["variables"], *report["notes"]]:
        if (entry["course"] or {}).get("section") in FIT_SECTIONS:
            assert_code_is_python(entry["text"])
    return report


def assert_code_is_python(text: str) -> None:
    """Everything a fit entry prints as code (quotes of the user's code, names to type,
    fixes) is valid Python as printed: a learner can paste it."""
    for span in code_spans(text):
        try:
            ast.parse(span)
        except SyntaxError as error:
            raise AssertionError(f"not Python: `{span}` in {text!r}") from error


def fit_notes(report: dict, section: str) -> list[str]:
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


# ------------------------------------------------------------ shared model set-up
def trained(
    model: str, compiled: str, *, labels: str = "target", epochs: int, log: str = ""
) -> str:
    """How the cells here train ``model``: ``<model>.compile(<compiled>)``, then
    ``<model>.fit(feats, <labels>, epochs=<epochs>, verbose=0)`` (its History bound to
    ``log`` when given)."""
    fit = f"{model}.fit(feats, {labels}, epochs={epochs}, verbose=0)"
    return f"{model}.compile({compiled})\n{f'{log} = ' if log else ''}{fit}\n"


def custom_step_model(cls: str, loss: str, after_tape: str, *, more_init: str = "") -> str:
    """``class <cls>(keras.Model)`` as the custom ``train_step`` cells here write it: one
    ``Dense(1)`` layer ``lin`` that ``call`` applies (``more_init``: more lines of
    ``__init__``), and a ``train_step`` that unpacks ``xs, ys = batch`` and, under a tape,
    predicts ``guess`` and runs the statement ``loss``; ``after_tape``: the rest of its
    body. Lines are given unindented."""
    return (
        f"class {cls}(keras.Model):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = keras.layers.Dense(1)\n"
        f"{textwrap.indent(more_init, ' ' * 8)}"
        "\n"
        "    def call(self, inputs):\n"
        "        return self.lin(inputs)\n"
        "\n"
        "    def train_step(self, batch):\n"
        "        xs, ys = batch\n"
        "        with tf.GradientTape() as tape:\n"
        "            guess = self(xs, training=True)\n"
        f"            {loss}\n"
        f"{textwrap.indent(after_tape, ' ' * 8)}"
        "\n"
    )


FROZEN = """pretrained = keras.Sequential([
    keras.Input((5,)),
    keras.layers.Dense(6, activation="relu", name="trunk"),
    keras.layers.Dense(1, activation="sigmoid", name="verdict"),
])
for lyr in pretrained.layers:
    lyr.trainable = False
pretrained.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy")
verdict_before = pretrained.get_layer("verdict").kernel.numpy().copy()
pretrained.fit(feats, flags, epochs=2, verbose=0)
"""
VERDICT_MOVED = "bool(np.any(pretrained.get_layer('verdict').kernel.numpy() != verdict_before))"


def test_every_layer_frozen_including_the_head(kernel: KernelSession) -> None:
    report = report_of(kernel, FROZEN)
    [entry] = changes_of(report, "stopped_learning")
    assert entry["name"] == "pretrained"
    assert entry["course"]["section"] == "trainable-weights"
    text = entry["text"]
    assert "`for lyr in pretrained.layers: lyr.trainable = False` (line 6 of this cell)" in text
    assert "including `pretrained.get_layer('verdict')`, the last layer" in text
    assert value_of(kernel, VERDICT_MOVED) is False
    # The fix, as printed: freeze all but the last layer.
    fix = "for lyr in pretrained.layers[:-1]: lyr.trainable = False"
    assert f"`{fix}`" in text
    report = report_of(
        kernel, FROZEN.replace("for lyr in pretrained.layers:\n    lyr.trainable = False", fix)
    )
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, VERDICT_MOVED) is True
    # A look-alike: only the trunk frozen by name, the head trains.
    partial = FROZEN.replace(
        "for lyr in pretrained.layers:\n    lyr.trainable = False\n",
        'pretrained.get_layer("trunk").trainable = False\n',
    )
    report = report_of(kernel, partial)
    assert report["variables"] == [] and report["notes"] == []


def test_a_frozen_model_is_named_as_written(kernel: KernelSession) -> None:
    code = """gate = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")]
)
gate.trainable = False
""" + trained(
        "gate",
        'optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy"',
        labels="flags",
        epochs=1,
    )
    [entry] = changes_of(report_of(kernel, code), "stopped_learning")
    text = entry["text"]
    assert "`gate.trainable = False` froze the whole model" in text
    # Its only layer frozen: the layer as the learner can type it (no name was passed,
    # so its position; never Keras's dense_<n>).
    layer_frozen = code.replace("gate.trainable = False", "gate.layers[0].trainable = False")
    [entry] = changes_of(report_of(kernel, layer_frozen), "stopped_learning")
    assert "including `gate.layers[0]`, the last layer" in entry["text"]
    assert "dense" not in entry["text"]
    report = report_of(kernel, code.replace("gate.trainable = False\n", ""))
    assert report["variables"] == [] and report["notes"] == []


NOT_APPLIED = (
    custom_step_model(
        "Fitter",
        "loss_value = self.compute_loss(y=ys, y_pred=guess)",
        """gradients = tape.gradient(loss_value, self.trainable_variables)
for metric in self.metrics:
    if metric.name == "loss":
        metric.update_state(loss_value)
    else:
        metric.update_state(ys, guess)
return {m.name: m.result() for m in self.metrics}
""",
    )
    + "fitter = Fitter()\n"
    + trained(
        "fitter", 'optimizer=keras.optimizers.SGD(0.05), loss="mse"', epochs=3, log="fitter_log"
    )
)
LOSS_MOVED = "fitter_log.history['loss'][0] != fitter_log.history['loss'][-1]"


def test_train_step_that_never_applies_its_gradients(kernel: KernelSession) -> None:
    report = report_of(kernel, NOT_APPLIED)
    [entry] = changes_of(report, "stopped_learning")
    assert entry["name"] == "fitter" and entry["course"]["section"] == "custom-train-step"
    text = entry["text"]
    assert "`Fitter.train_step`" in text
    assert "`gradients = tape.gradient(loss_value, self.trainable_variables)`" in text
    assert value_of(kernel, LOSS_MOVED) is False
    # Built before fit, its weights are compared: the same cause, told the same way.
    built = NOT_APPLIED.replace(
        "fitter = Fitter()\n", "fitter = Fitter()\nfitter.build((None, 5))\n"
    )
    [entry] = changes_of(report_of(kernel, built), "stopped_learning")
    assert "`gradients = tape.gradient(loss_value, self.trainable_variables)`" in entry["text"]
    fix = "self.optimizer.apply(gradients, self.trainable_variables)"
    assert f"`{fix}`" in text
    fixed = NOT_APPLIED.replace(
        "        for metric in self.metrics:\n",
        f"        {fix}\n        for metric in self.metrics:\n",
        1,
    )
    # The fixed class is also the Keras 3 guide's train_step: a correct look-alike.
    report = report_of(kernel, fixed)
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, LOSS_MOVED) is True


# A layer whose kernel initializer is an argument (the zeros cells below pass "zeros").
AFFINE = """class Affine(keras.layers.Layer):
    def __init__(self, width, w_init="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.width = width
        self.w_init = w_init

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.width), initializer=self.w_init)
        self.b = self.add_weight(shape=(self.width,), initializer="zeros")

    def call(self, inputs):
        return inputs @ self.w + self.b

"""
ADAM_MSE = 'optimizer=keras.optimizers.Adam(0.01), loss="mse"'
ZEROS = (
    AFFINE
    + """stack = keras.Sequential([
    keras.Input((5,)),
    Affine(8, w_init="zeros", name="inner"),
    keras.layers.ReLU(),
    Affine(1, w_init="zeros", name="outer"),
])
"""
    + trained("stack", ADAM_MSE, epochs=2)
)
INNER_MOVED = "bool(np.any(stack.get_layer('inner').w.numpy() != 0))"


def test_kernels_that_start_at_zero_never_move(kernel: KernelSession) -> None:
    report = report_of(kernel, ZEROS)
    [entry] = changes_of(report, "stopped_learning")
    assert entry["course"]["section"] == "zero-initialization"
    text = entry["text"]
    assert "`stack.get_layer('inner').w`" in text and "`stack.get_layer('outer').w`" in text
    assert '`w_init="zeros"`' in text
    assert value_of(kernel, INNER_MOVED) is False
    fix = 'w_init="glorot_uniform"'
    assert f"`{fix}`" in text
    report = report_of(kernel, ZEROS.replace('w_init="zeros"', fix))
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, INNER_MOVED) is True
    # A look-alike: one linear layer from zeros learns (its gradient is not zero).
    single = (
        AFFINE
        + 'line = keras.Sequential([keras.Input((5,)), Affine(1, w_init="zeros")])\n'
        + trained("line", ADAM_MSE, epochs=2)
    )
    report = report_of(kernel, single)
    assert report["variables"] == [] and report["notes"] == []


def test_zero_kernels_are_named_as_the_learner_can_type_them(kernel: KernelSession) -> None:
    # No names passed: Keras calls the layers affine_<n> (a session counter): the entry
    # names them by position in a Sequential and by attribute in a model class.
    ladder = (
        AFFINE
        + (
            "ladder = keras.Sequential([\n"
            '    keras.Input((5,)), Affine(8, w_init="zeros"), keras.layers.ReLU(),\n'
            '    Affine(1, w_init="zeros"),\n])\n'
        )
        + trained("ladder", ADAM_MSE, epochs=2)
    )
    tower = (
        AFFINE
        + (
            "class Tower(keras.Model):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            '        self.lower = Affine(8, w_init="zeros")\n'
            '        self.upper = Affine(1, w_init="zeros")\n\n'
            "    def call(self, inputs):\n"
            "        return self.upper(keras.ops.relu(self.lower(inputs)))\n\n"
            "tower = Tower()\ntower(feats[:1])\n"
        )
        + trained("tower", ADAM_MSE, epochs=2)
    )
    for code, expected in (
        (ladder, ["ladder.layers[0].w", "ladder.layers[2].w"]),
        (tower, ["tower.lower.w", "tower.upper.w"]),
    ):
        [entry] = changes_of(report_of(kernel, code), "stopped_learning")
        spans = code_spans(entry["text"])
        assert set(expected) <= set(spans), entry["text"]
        assert not re.search(r"affine(_\d+)?\b", entry["text"]), entry["text"]
        for reference in expected:  # what the entry names is the stuck weight
            assert value_of(kernel, f"bool(np.all({reference}.numpy() == 0))") is True


def test_a_zero_weight_without_gradient_is_told_once(kernel: KernelSession) -> None:
    code = """class Shifted(keras.layers.Layer):
    def build(self, input_shape):
        self.k = self.add_weight(shape=(input_shape[-1], 1))
        self.shift = self.add_weight(shape=(input_shape[-1], 1), initializer="zeros")

    def call(self, inputs):
        return inputs @ self.k

shifted = keras.Sequential([keras.Input((5,)), Shifted(name="shifted_layer")])
""" + trained("shifted", 'optimizer="adam", loss="mse"', epochs=1)
    report = checked_report(run(kernel, code))
    entries = [e for e in report["variables"] if "shift" in e["name"] or "shift" in e["text"]]
    # The optimizer's hook tells it (no gradient); the zeros check does not repeat it.
    assert len(entries) == 1 and entries[0]["course"]["section"] == "stopped-learning"


def test_zero_biases_of_a_layer_no_gradient_reaches_stay_quiet(kernel: KernelSession) -> None:
    # Attention over a single key: the softmax is 1 whatever the query and key say, so
    # their kernels (random) and biases (zeros, two-dimensional) get a zero gradient. The
    # zeros are not why they stay put, so the zeros initializer is not blamed.
    code = """tok = keras.Input((5,))
seq = keras.layers.Reshape((1, 5))(tok)
attended = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, name="attend")(seq, seq)
pooled = keras.layers.Flatten()(attended)
one_token = keras.Model(tok, keras.layers.Dense(1)(pooled))
q_before = one_token.get_layer("attend").get_weights()
""" + trained("one_token", ADAM_MSE, epochs=2)
    report = report_of(kernel, code)
    assert changes_of(report, "stopped_learning") == [], report["variables"]
    assert not any(
        (e["course"] or {}).get("section") == "zero-initialization"
        for e in [*report["variables"], *report["notes"]]
    )
    # The premise: the attention's query weights (kernel random, bias zeros) never moved.
    moved = (
        "[bool(np.any(a != b)) for a, b in "
        "zip(q_before, one_token.get_layer('attend').get_weights())]"
    )
    assert value_of(kernel, moved)[:2] == [False, False]


NO_LOSS = (
    custom_step_model(
        "Scorer",
        "cost = self.sq_err(ys, guess)",
        """grads = tape.gradient(cost, self.trainable_variables)
self.optimizer.apply(grads, self.trainable_variables)
self.abs_err.update_state(ys, guess)
return {"abs_err": self.abs_err.result()}
""",
        more_init="""self.sq_err = keras.losses.MeanSquaredError()
self.abs_err = keras.metrics.MeanAbsoluteError(name="abs_err")
""",
    )
    + "scorer = Scorer()\n"
    + trained("scorer", "optimizer=keras.optimizers.SGD(0.01)", epochs=2, log="scorer_log")
)


def test_train_step_whose_loss_never_reaches_the_logs(kernel: KernelSession) -> None:
    report = report_of(kernel, NO_LOSS)
    [text] = fit_notes(report, "custom-train-step")
    assert "`scorer_log.history` holds only ['abs_err']" in text
    assert "`Scorer.train_step`" in text and "`cost`" in text
    assert value_of(kernel, "list(scorer_log.history)") == ["abs_err"]
    spans = code_spans(text)
    tracker = 'self.loss_tracker = keras.metrics.Mean(name="loss")'
    update = "self.loss_tracker.update_state(cost)"
    returned = 'return {"loss": self.loss_tracker.result(), "abs_err": self.abs_err.result()}'
    listed = "return [self.loss_tracker, self.abs_err]"
    assert {tracker, update, returned, listed} <= set(spans)
    fixed = (
        NO_LOSS.replace(
            '        self.abs_err = keras.metrics.MeanAbsoluteError(name="abs_err")\n',
            '        self.abs_err = keras.metrics.MeanAbsoluteError(name="abs_err")\n'
            f"        {tracker}\n\n"
            f"    @property\n    def metrics(self):\n        {listed}\n",
        )
        .replace(
            "        self.abs_err.update_state(ys, guess)\n",
            f"        self.abs_err.update_state(ys, guess)\n        {update}\n",
        )
        .replace('        return {"abs_err": self.abs_err.result()}', f"        {returned}")
    )
    report = report_of(kernel, fixed)
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, "sorted(scorer_log.history)") == ["abs_err", "loss"]
    assert value_of(kernel, "scorer_log.history['loss'][-1] > 0")


ZERO_LOSS = (
    custom_step_model(
        "Helper",
        "err = self.compute_loss(y=ys, y_pred=guess)",
        """grads = tape.gradient(err, self.trainable_variables)
self.optimizer.apply(grads, self.trainable_variables)
return self.compute_metrics(xs, ys, guess, sample_weight=None)
""",
    )
    + "helper = Helper()\n"
    + trained(
        "helper",
        'optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"]',
        epochs=2,
        log="helper_log",
    )
)


def test_compute_loss_and_compute_metrics_leave_loss_at_zero(kernel: KernelSession) -> None:
    report = report_of(kernel, ZERO_LOSS)
    [text] = fit_notes(report, "custom-train-step")
    assert "loss 0.0 every epoch" in text and "`helper_log.history`" in text
    assert "`self.compute_loss(...)`" in text and "`self.compute_metrics(...)`" in text
    assert value_of(kernel, "helper_log.history['loss']") == [0.0, 0.0]
    # One line, valid Python, in the names train_step uses (err, ys, guess).
    loop = (
        'for m in self.metrics: m.update_state(err) if m.name == "loss" '
        "else m.update_state(ys, guess)"
    )
    returned = "return {m.name: m.result() for m in self.metrics}"
    assert f"`{loop}`" in text and f"`{returned}`" in text
    fixed = ZERO_LOSS.replace(
        "        return self.compute_metrics(xs, ys, guess, sample_weight=None)\n",
        f"        {loop}\n        {returned}\n",
    )
    report = report_of(kernel, fixed)
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, "helper_log.history['loss'][-1] > 0")


def test_loss_at_zero_with_a_loss_written_by_hand(kernel: KernelSession) -> None:
    # No compute_loss/compute_metrics: the note says nothing about them, and the fix takes
    # the target and prediction names from `xs, ys = batch` and `guess = self(xs, ...)`.
    code = (
        ZERO_LOSS.replace(
            "err = self.compute_loss(y=ys, y_pred=guess)",
            "err = keras.ops.mean(keras.ops.square(ys - guess))",
        )
        .replace(
            "return self.compute_metrics(xs, ys, guess, sample_weight=None)",
            "return {m.name: m.result() for m in self.metrics}",
        )
        .replace(', metrics=["mae"]', "")
    )  # a compiled metric never updated cannot give result()
    [text] = fit_notes(report_of(kernel, code), "custom-train-step")
    assert "loss 0.0 every epoch" in text and "compute_" not in text
    loop = (
        'for m in self.metrics: m.update_state(err) if m.name == "loss" '
        "else m.update_state(ys, guess)"
    )
    assert f"`{loop}`" in text
    fixed = code.replace(
        "        return {m.name: m.result()",
        f"        {loop}\n        return {{m.name: m.result()",
    )
    report = report_of(kernel, fixed)
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, "helper_log.history['loss'][-1] > 0")


OWN_TRACKERS = custom_step_model(
    "Tracked",
    "err = keras.ops.mean(keras.ops.square(ys - guess))",
    "grads = tape.gradient(err, self.trainable_variables)\n"
    "self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
    "self.err_tracker.update_state(err)\n"
    "return {m.name: m.result() for m in self.metrics}",
    more_init='self.err_tracker = keras.metrics.Mean(name="total")',
) + (
    "tracked = Tracked()\ntracked.compile(optimizer=keras.optimizers.SGD(0.05))\n"
    "tracked_log = tracked.fit(feats, target, epochs=2, verbose=0)\n"
)


def test_loss_tracked_by_the_steps_own_metric_is_not_rewritten(kernel: KernelSession) -> None:
    # A correct step: its loss is tracked and logged as 'total'; Keras's own 'loss'
    # tracker stays 0.0 beside it. The note says where the loss is and rewrites nothing
    # (updating every metric again would count the loss twice).
    [text] = fit_notes(report_of(kernel, OWN_TRACKERS), "custom-train-step")
    assert "logged as 'total'" in text and "nothing needs to change" in text
    assert "update_state" not in text
    assert value_of(kernel, "tracked_log.history['total'][-1] > 0")
    # Returned under its own key with no 'loss' at all: quiet.
    own_key = OWN_TRACKERS.replace(
        "return {m.name: m.result() for m in self.metrics}",
        'return {"total": self.err_tracker.result()}',
    )
    assert fit_notes(report_of(kernel, own_key), "custom-train-step") == []


def test_a_metric_returned_but_never_updated(kernel: KernelSession) -> None:
    code = NO_LOSS.replace(
        '        return {"abs_err": self.abs_err.result()}',
        '        return {"cost": cost, "abs_err": self.abs_err.result()}',
    ).replace("        self.abs_err.update_state(ys, guess)\n", "")
    report = report_of(kernel, code)
    texts = fit_notes(report, "custom-train-step")
    [text] = [t for t in texts if "`abs_err` is 0.0 every epoch" in t]
    update = "self.abs_err.update_state(ys, guess)"  # the metric and the names train_step uses
    assert f"`{update}`" in text
    fixed = code.replace(
        '        return {"cost": cost',
        f'        {update}\n        return {{"cost": cost',
    )
    report = report_of(kernel, fixed)
    assert report["variables"] == [] and report["notes"] == []
    assert value_of(kernel, "scorer_log.history['abs_err'][-1] > 0")


SOFTMAX = """yes_no = keras.Sequential([
    keras.Input((5,)),
    keras.layers.Dense(4, activation="relu"),
    keras.layers.Dense(1, activation="softmax", name="answer"),
])
""" + trained("yes_no", 'optimizer="adam", loss="binary_crossentropy"', labels="flags", epochs=1)
ALL_ONES = "bool(np.all(yes_no.predict(feats[:4], verbose=0) == 1.0))"


def test_softmax_over_one_unit(kernel: KernelSession) -> None:
    report = report_of(kernel, SOFTMAX)
    [text] = fit_notes(report, "output-activation")
    assert "`yes_no`'s layer `yes_no.get_layer('answer')`" in text and "always 1.0" in text
    assert value_of(kernel, ALL_ONES) is True
    fix = 'keras.layers.Dense(1, activation="sigmoid", name="answer")'
    assert f"`{fix}`" in text
    report = report_of(kernel, SOFTMAX.replace('activation="softmax"', 'activation="sigmoid"'))
    assert report["notes"] == [] and report["variables"] == []
    assert value_of(kernel, ALL_ONES) is False
    # Unnamed, the layer is named by its position (never Keras's dense_<n>).
    report = report_of(kernel, SOFTMAX.replace(', name="answer"', ""))
    [text] = fit_notes(report, "output-activation")
    assert "`yes_no`'s layer `yes_no.layers[1]`" in text and "dense" not in text
    assert value_of(kernel, "yes_no.layers[1].units") == 1
    # A look-alike: softmax over three classes.
    three = SOFTMAX.replace("Dense(1, ", "Dense(3, ").replace(
        "binary_crossentropy", "sparse_categorical_crossentropy"
    )
    report = report_of(kernel, three)
    assert report["notes"] == [] and report["variables"] == []


NOISY = """class Noisy(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(16, activation="relu")
        self.drop = keras.layers.Dropout(0.5)
        self.out = keras.layers.Dense(1)

    def call(self, inputs, training=False):
        z = self.body(inputs)
        z = self.drop(z, training=True)
        return self.out(z)

noisy = Noisy()
""" + trained("noisy", 'optimizer="adam", loss="mse"', epochs=1)
SAME_TWICE = (
    "bool(np.array_equal(noisy.predict(feats[:8], verbose=0), noisy.predict(feats[:8], verbose=0)))"
)


def test_training_true_written_in_call(kernel: KernelSession) -> None:
    # fit alone says nothing: training mode is right there.
    report = report_of(kernel, NOISY)
    assert report["notes"] == [] and report["variables"] == []
    noisy_cell = report["execution_count"]
    report = report_of(kernel, "first_pass = noisy.predict(feats[:8], verbose=0)")
    [text] = fit_notes(report, "training-argument")
    # The class is in the cell before: its line is placed there, as Jupyter numbers it.
    assert (
        f"`Noisy.call` passes `training=True` to `self.drop` (cell In[{noisy_cell}], line 10: "
        "`z = self.drop(z, training=True)`)"
    ) in text
    # Only what this model has: a Dropout, no batch normalization.
    assert "`Dropout` drops units at random" in text and "batch" not in text
    assert value_of(kernel, SAME_TWICE) is False
    fix = "z = self.drop(z, training=training)"
    assert f"`{fix}`" in text
    run(kernel, NOISY.replace("z = self.drop(z, training=True)", fix))
    report = report_of(kernel, "first_pass = noisy.predict(feats[:8], verbose=0)")
    assert report["notes"] == [] and report["variables"] == []
    assert value_of(kernel, SAME_TWICE) is True


def test_fit_output_is_untouched_and_correct_training_is_silent(kernel: KernelSession) -> None:
    code = """plain = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(3), keras.layers.Dense(1)]
)
plain.compile(optimizer="adam", loss="mse", metrics=["mae"])
plain_log = plain.fit(feats, target, epochs=2, verbose=2)
"""
    execution = run(kernel, code)
    report = checked_report(execution)
    assert report["variables"] == [] and report["notes"] == []
    assert "Epoch 1/2" in execution.stdout and "Epoch 2/2" in execution.stdout
    assert not any("tfcoach" in t for t in note_texts(report))
    # No epoch run, nothing learned, nothing to say.
    report = report_of(kernel, "plain.fit(feats, target, epochs=0, verbose=0)\npass")
    assert report["variables"] == [] and report["notes"] == []


NORMED = """class Normed(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(8)
        self.norm = keras.layers.BatchNormalization()
        self.out = keras.layers.Dense(1)

    def call(self, inputs, training=False):
        return self.out(self.norm(self.body(inputs),
                                  training=True))

normed = Normed()
""" + trained("normed", 'optimizer="adam", loss="mse"', epochs=1)
# The first four inputs, predicted next to two different sets of four (same batch size,
# so predict does not retrace): equal only when a prediction does not use its batch.
BATCH_FREE = (
    "bool(np.allclose(normed.predict(feats[:8], verbose=0)[:4],"
    " normed.predict(np.concatenate([feats[:4], feats[40:44]]), verbose=0)[:4], atol=1e-5))"
)


def test_training_true_to_batch_normalization(kernel: KernelSession) -> None:
    run(kernel, NORMED)
    report = report_of(kernel, "normed_pred = normed.predict(feats[:8], verbose=0)")
    [text] = fit_notes(report, "training-argument")
    # The whole statement (written over two lines), and what BatchNormalization does.
    statement = "return self.out(self.norm(self.body(inputs), training=True))"
    assert f"`{statement}`" in text
    assert "`BatchNormalization` normalizes with each batch's own mean" in text
    assert "drop" not in text.lower() and "noise" not in text
    assert value_of(kernel, BATCH_FREE) is False
    fix = statement.replace("training=True", "training=training")
    assert f"`{fix}`" in text
    fixed = NORMED.replace(
        "        return self.out(self.norm(self.body(inputs),\n"
        "                                  training=True))",
        f"        {fix}",
    )
    run(kernel, fixed)
    report = report_of(kernel, "normed_pred = normed.predict(feats[:8], verbose=0)")
    assert report["notes"] == [] and report["variables"] == []
    assert value_of(kernel, BATCH_FREE) is True
