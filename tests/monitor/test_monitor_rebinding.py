"""Variables replaced by tensors, wherever they were created: each bad cell as learners write
it, then the same cell with the fix the report gives, which must train and stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, note_texts, run, run_quiet, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

_FIX = re.compile(r"instead: `([^`]+)`")


def _only_entry(report: dict, change: str) -> dict:
    assert [entry["change"] for entry in report["variables"]] == [change], report["variables"]
    entry = report["variables"][0]
    assert entry["course"]["section"] == "rebinding-variables"
    assert "0x" not in entry["text"]
    return entry


def _fixed(cell: str, bad_line: str, entry: dict) -> str:
    """The cell with the bad statement replaced by the fix the report printed."""
    [fix] = _FIX.findall(entry["text"])
    assert bad_line in cell
    return cell.replace(bad_line, fix)


SAME_CELL_LOOP = """w = tf.Variable(0.5)
x = tf.constant([1.0, 2.0])
y = tf.constant([2.0, 4.0])
lr = 0.1
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((w * x - y) ** 2)
    g = tape.gradient(loss, w)
    w = w - lr * g
"""


def test_variable_created_and_rebound_in_one_cell(kernel: KernelSession) -> None:
    execution = run(kernel, SAME_CELL_LOOP, ok=False)
    # The second step's gradient is None: `lr * None` fails, as learners see it.
    assert execution.reply["ename"] == "TypeError"
    entry = _only_entry(execution.report, "rebound_to_tensor")
    assert entry["name"] == "w" and entry["before"] == "tf.Variable"
    assert entry["text"].startswith("Line 9: `w = w - lr * g` replaced the tf.Variable `w`")
    # The cause is told once: no "call tape.watch" note about the same tensor.
    assert not any("tape.watch" in text for text in note_texts(execution.report))
    fixed = _fixed(SAME_CELL_LOOP, "w = w - lr * g", entry)
    assert "w.assign_sub(lr * g)" in fixed
    report = run_quiet(kernel, fixed)
    assert report["variables"] == [] and report["error"] is None
    assert value_of(kernel, "[type(w).__name__, round(float(w), 3) != 0.5]") == [
        "ResourceVariable",
        True,
    ]


def test_rebinding_in_a_time_cell_next_to_colab_lines(kernel: KernelSession) -> None:
    cell = (
        "%%time\n"
        "w2 = tf.Variable(1.0)\n"
        "opt = keras.optimizers.SGD(0.1)\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = (w2 * 3.0) ** 2\n"
        "opt.apply_gradients([(tape.gradient(loss, w2), w2)])\n"
        "w2 = w2 * (1 - 1e-3)\n"
    )
    execution = run(kernel, cell)
    entry = _only_entry(execution.report, "rebound_to_tensor")
    assert entry["name"] == "w2" and "Line 7: `w2 = w2 * (1 - 1e-3)`" in entry["text"]
    fixed = _fixed(cell, "w2 = w2 * (1 - 1e-3)", entry)
    assert "w2.assign(w2 * (1 - 1e-3))" in fixed
    execution = run(kernel, fixed)
    assert execution.report["variables"] == []
    assert value_of(kernel, "type(w2).__name__") == "ResourceVariable"

    # A Colab-style shell command continued with a backslash (echo: no network here).
    colab = (
        "!echo pip install --quiet \\\n    tensorflow-datasets\nv = tf.Variable(1.0)\nv = v + 1.0\n"
    )
    execution = run(kernel, colab)
    assert "pip install --quiet tensorflow-datasets" in execution.stdout
    assert [e["name"] for e in execution.report["variables"]] == ["v"]
    assert "Line 4: `v = v + 1.0`" in execution.report["variables"][0]["text"]


KERAS_LAYER = """class Linear(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 1), initializer="ones")

    def call(self, x):
        return x @ self.w

lin = Linear()
xb = tf.ones((4, 3))
yb = tf.zeros((4, 1))
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((lin(xb) - yb) ** 2)
    grad_w = tape.gradient(loss, lin.w)
    if grad_w is None:
        break
    lin.w -= 0.1 * grad_w
"""


def test_keras_variable_minus_equals_in_the_same_cell(kernel: KernelSession) -> None:
    report = run_quiet(kernel, KERAS_LAYER)
    entry = _only_entry(report, "attribute_rebound")
    assert entry["name"] == "lin.w" and entry["before"] == "keras.Variable"
    assert "Line 17: `lin.w -= 0.1 * grad_w`" in entry["text"]
    assert "no in-place `-=`" in entry["text"]
    assert not note_texts(report)  # the None gradient at step 2 is the same cause
    report = run_quiet(kernel, _fixed(KERAS_LAYER, "lin.w -= 0.1 * grad_w", entry))
    assert report["variables"] == [] and note_texts(report) == []
    assert value_of(kernel, "[type(lin.w).__name__, float(tf.reduce_sum(lin.w)) < 3.0]") == [
        "Variable",
        True,
    ]


MODULE = """class LinearModel(tf.Module):
    def __init__(self):
        self.w = tf.Variable([[3.0], [4.0]])

lm = LinearModel()
lm.w = tf.clip_by_norm(lm.w, 3.0)
"""


def test_module_attribute_clipped_in_the_same_cell(kernel: KernelSession) -> None:
    report = run_quiet(kernel, MODULE)
    entry = _only_entry(report, "attribute_rebound")
    assert entry["name"] == "lm.w" and "trainable_variables" in entry["text"]
    report = run_quiet(kernel, _fixed(MODULE, "lm.w = tf.clip_by_norm(lm.w, 3.0)", entry))
    assert report["variables"] == []
    assert value_of(kernel, "[len(lm.trainable_variables), round(float(tf.norm(lm.w)), 3)]") == [
        1,
        3.0,
    ]


RUNNING_MEAN = """class RunningMean(keras.layers.Layer):
    def build(self, input_shape):
        self.mean = self.add_weight(
            shape=(input_shape[-1],), initializer="zeros", trainable=False
        )

    def call(self, x):
        self.mean = 0.9 * self.mean + 0.1 * tf.reduce_mean(x, axis=0)
        return x - self.mean

norm = RunningMean()
out = norm(tf.ones((2, 3)))
out = norm(tf.ones((2, 3)))
"""


def test_layer_replacing_its_state_in_call(kernel: KernelSession) -> None:
    report = run_quiet(kernel, RUNNING_MEAN)
    entry = _only_entry(report, "attribute_rebound")
    assert entry["name"] == "self.mean"
    assert "`RunningMean.call()`" in entry["text"] and "Line 8" in entry["text"]
    bad = "self.mean = 0.9 * self.mean + 0.1 * tf.reduce_mean(x, axis=0)"
    report = run_quiet(kernel, _fixed(RUNNING_MEAN, bad, entry))
    assert report["variables"] == []
    assert value_of(kernel, "[round(float(v), 3) for v in norm.mean.numpy()]") == [0.19] * 3
    # A later cell reports nothing more.
    assert run_quiet(kernel, "out = norm(tf.ones((2, 3)))")["variables"] == []


PLAIN_CLASS = """class Model:
    def __init__(self):
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

model = Model()
for epoch in range(3):
    with tf.GradientTape() as tape:
        loss = (model.w * 2.0 + model.b - 1.0) ** 2
    dw, db = tape.gradient(loss, [model.w, model.b])
    model.w = model.w - 0.01 * dw
    model.b = model.b - 0.01 * db
"""


def test_plain_python_model_object(kernel: KernelSession) -> None:
    execution = run(kernel, PLAIN_CLASS, ok=False)
    assert execution.reply["ename"] == "TypeError"
    report = execution.report
    names = [(e["name"], e["change"]) for e in report["variables"]]
    assert names == [("model.w", "attribute_rebound"), ("model.b", "attribute_rebound")]
    # The None gradients of step 2 have this cause: no "call tape.watch" note besides.
    assert note_texts(report) == []
    fixed = _fixed(PLAIN_CLASS, "model.w = model.w - 0.01 * dw", report["variables"][0])
    fixed = _fixed(fixed, "model.b = model.b - 0.01 * db", report["variables"][1])
    report = run_quiet(kernel, fixed)
    assert report["variables"] == []
    assert value_of(kernel, "type(model.w).__name__") == "ResourceVariable"


def test_method_of_a_plain_class_defined_earlier(kernel: KernelSession) -> None:
    define = """class Regressor:
    def __init__(self):
        self.w = tf.Variable(1.0)

    def step(self, x, y, lr=0.01):
        with tf.GradientTape() as tape:
            loss = (self.w * x - y) ** 2
        self.w = self.w - lr * tape.gradient(loss, self.w)
"""
    assert run_quiet(kernel, define)["variables"] == []
    report = run_quiet(kernel, "reg = Regressor()\nreg.step(1.0, 2.0)")
    [entry] = report["variables"]
    assert entry["name"] == "reg.w" and "`Regressor.step()`" in entry["text"]
    assert "`self.w.assign_sub(lr * tape.gradient(loss, self.w))`" in entry["text"]
    # Told once, not again on the next cell.
    assert run_quiet(kernel, "x_ = 1")["variables"] == []
    fixed = define.replace(
        "self.w = self.w - lr * tape.gradient(loss, self.w)",
        "self.w.assign_sub(lr * tape.gradient(loss, self.w))",
    )
    run_quiet(kernel, fixed)
    report = run_quiet(kernel, "reg = Regressor()\nreg.step(1.0, 2.0)\nreg.step(1.0, 2.0)")
    assert report["variables"] == []


def test_cross_cell_rebinding_names_the_line(kernel: KernelSession) -> None:
    run_quiet(kernel, "v = tf.Variable(1.0)\ngrad = tf.constant(0.5)")
    report = run_quiet(kernel, "lr = 0.1\nv = v - lr * grad")
    entry = _only_entry(report, "rebound_to_tensor")
    assert "Line 2: `v = v - lr * grad`" in entry["text"]
    assert "`v.assign_sub(lr * grad)`, after creating `v` again as a variable" in entry["text"]


def test_two_variables_rebound_in_one_loop_one_cause(kernel: KernelSession) -> None:
    cell = """wa = tf.Variable(0.5)
wb = tf.Variable(0.0)
for step in range(3):
    with tf.GradientTape() as tape:
        loss = (wa * 2.0 + wb - 1.0) ** 2
    dwa, dwb = tape.gradient(loss, [wa, wb])
    wa = wa - 0.1 * dwa
    wb = wb - 0.1 * dwb
"""
    execution = run(kernel, cell, ok=False)
    report = execution.report
    assert [e["name"] for e in report["variables"]] == ["wa", "wb"]
    assert note_texts(report) == []


VECTOR_BIAS_LOOP = """x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
y = tf.constant([[1.0, 0.0], [2.0, 1.0], [3.0, 1.0]])
w = tf.Variable(tf.zeros((2, 2)))
b = tf.Variable(tf.zeros((2,)))
lr = 0.01
for step in range(3):
    with tf.GradientTape() as tape:
        error = x @ w + b - y
        loss = tf.reduce_mean(error**2)
    w.assign_sub(lr * tape.gradient(loss, w))
    b = b - lr * tf.reduce_mean(error)
"""


def test_single_number_step_on_a_vector_gets_assign(kernel: KernelSession) -> None:
    """``b.assign_sub(lr * tf.reduce_mean(error))`` would fail (a step of shape () for a
    variable of shape (2,)): the report offers ``assign``, and the fixed cell trains."""
    entry = _only_entry(run_quiet(kernel, VECTOR_BIAS_LOOP), "rebound_to_tensor")
    fixed = _fixed(VECTOR_BIAS_LOOP, "b = b - lr * tf.reduce_mean(error)", entry)
    assert "b.assign(b - lr * tf.reduce_mean(error))" in fixed
    report = run_quiet(kernel, fixed)
    assert report["variables"] == [] and report["error"] is None
    assert value_of(kernel, "[type(b).__name__, b.shape.as_list(), float(b[0]) > 0.0]") == [
        "ResourceVariable",
        [2],
        True,
    ]
    naive = fixed.replace(
        "b.assign(b - lr * tf.reduce_mean(error))", "b.assign_sub(lr * tf.reduce_mean(error))"
    )
    assert run(kernel, naive, ok=False).reply["ename"] == "InvalidArgumentError"


VECTOR_MODULE_SHIFT = """class Shift(tf.Module):
    def __init__(self):
        self.offset = tf.Variable([1.0, 2.0])

    def nudge(self, lr):
        self.offset = self.offset - lr

shift = Shift()
shift.nudge(0.5)
"""


def test_python_number_step_in_a_method_gets_assign(kernel: KernelSession) -> None:
    entry = _only_entry(run_quiet(kernel, VECTOR_MODULE_SHIFT), "attribute_rebound")
    fixed = _fixed(VECTOR_MODULE_SHIFT, "self.offset = self.offset - lr", entry)
    assert "self.offset.assign(self.offset - lr)" in fixed  # ``lr`` held 0.5 when it ran
    report = run_quiet(kernel, fixed)
    assert report["variables"] == [] and report["error"] is None
    assert value_of(kernel, "[len(shift.trainable_variables), shift.offset.numpy().tolist()]") == [
        1,
        [0.5, 1.5],
    ]


LOOP_NAME_MODULE = """class Line(tf.Module):
    def __init__(self):
        super().__init__()
        self.slope = tf.Variable(0.0)
        self.offset = tf.Variable(0.0)

    def __call__(self, x):
        return self.slope * x + self.offset


xs = tf.constant([0.0, 1.0, 2.0, 3.0])
ys = 2.0 * xs + 1.0
line = Line()
"""

ONE_STEP = """with tf.GradientTape() as tape:
    err = tf.reduce_mean(tf.square(line(xs) - ys))
grads = tape.gradient(err, line.trainable_variables)
for param, grad in zip(line.trainable_variables, grads):
    param = param - 0.05 * grad
"""


def test_rebinding_the_loop_name_changes_no_variable(kernel: KernelSession) -> None:
    """One step of ``for param, grad in zip(m.trainable_variables, grads): param = param -
    lr * grad`` (too short for the nothing-trained symptom): the entry says the loop name is
    all that changed (not 'create it again as a variable'), and its fix moves the module."""
    run_quiet(kernel, LOOP_NAME_MODULE)
    entry = _only_entry(run_quiet(kernel, ONE_STEP), "rebound_to_tensor")
    text = entry["text"]
    assert entry["name"] == "param"
    assert "only rebinds the loop name `param`" in text
    assert "`for ... in zip(line.trainable_variables, grads)`" in text
    assert "nothing trained" in text and "again as a variable" not in text
    fixed = _fixed(ONE_STEP, "param = param - 0.05 * grad", entry)
    assert "param.assign_sub(0.05 * grad)" in fixed
    run_quiet(kernel, LOOP_NAME_MODULE)
    assert run_quiet(kernel, fixed)["variables"] == []
    assert value_of(kernel, "float(line.slope) > 0.0") is True


def test_rebinding_a_loop_name_over_tensors_is_quiet(kernel: KernelSession) -> None:
    """The look-alike: a loop over data tensors that rebinds its name is ordinary code."""
    cell = (
        "batches = [tf.ones((2, 3)), tf.zeros((2, 3))]\n"
        "centred = []\n"
        "for batch in batches:\n"
        "    batch = batch - tf.reduce_mean(batch)\n"
        "    centred.append(batch)\n"
    )
    assert run_quiet(kernel, cell)["variables"] == []
