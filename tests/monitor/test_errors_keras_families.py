"""Keras's model API misused, as learners do in their first months (issue #25): each
error gets an entry naming the user's class, model, dataset or path, links the section
that teaches it, and prints a fix that runs in the kernel; the correct cell beside it
gets no error entry. Our own cells (``errors/families_keras_api.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """feats = np.random.rand(24, 5).astype("float32")
targets = feats.sum(axis=1, keepdims=True)
"""


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_a_layer_whose_init_never_calls_super(kernel: KernelSession) -> None:
    cell = """class Jitter(keras.layers.Layer):
    def __init__(self, scale, **options):
        self.scale = scale

    def call(self, x):
        return x + self.scale

jit = Jitter(0.1)
jit(np.ones((3, 2)))
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "custom-layers"
    text = error["explanation"]
    assert "`Jitter`" in text and "line 2 of this cell" in text
    fix = fix_of(text)
    assert fix == "super().__init__(**options)"
    fixed = cell.replace(
        "        self.scale = scale\n", f"        {fix}\n        self.scale = scale\n"
    )
    runs_cleanly(kernel, fixed)
    # Keras 3 accepts attributes set before the call: no entry.
    before = cell.replace(
        "        self.scale = scale\n", f"        self.scale = scale\n        {fix}\n"
    )
    runs_cleanly(kernel, before)


def test_a_module_whose_init_never_calls_super(kernel: KernelSession) -> None:
    cell = """class Affine(tf.Module):
    def __init__(self):
        self.slope = tf.Variable(2.0)

aff = Affine()
print(aff.name)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "custom-layers"
    assert "`Affine`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "super().__init__()"
    runs_cleanly(kernel, cell.replace("        self.slope", f"        {fix}\n        self.slope"))


HALF_MADE = """class Blend(keras.Model):
    def __init__(self, left, right, **options):
        self.left = left
        self.right = right

    def call(self, x):
        return 0.5 * (self.left(x) + self.right(x))

base = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
blend = Blend(base, base)
"""


@pytest.mark.parametrize(
    "use",
    ['blend.compile(optimizer="adam", loss="mse")', "blend.summary()"],
    ids=["compile", "summary"],
)
def test_a_model_whose_init_never_calls_super_fails_later(kernel: KernelSession, use: str) -> None:
    # Keras 3 lets the object be made; the first method that needs the base's state then
    # fails on a private attribute (`_dtype_policy`, `_trainable`), far from the cause.
    cell = HALF_MADE + use + "\n"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "custom-layers"
    assert "`Blend`" in text and "never calls `super().__init__()`" in text
    assert "Compare these shapes" not in text
    fix = fix_of(text)
    assert fix == "super().__init__(**options)"
    runs_cleanly(
        kernel,
        cell.replace("        self.left = left\n", f"        {fix}\n        self.left = left\n"),
    )


def test_a_private_attribute_missing_for_another_reason_is_not_blamed_on_init(
    kernel: KernelSession,
) -> None:
    cell = """class Counter(keras.layers.Layer):
    def __init__(self, **options):
        super().__init__(**options)

    def call(self, x):
        return x + self._offset

count = Counter()
count(np.ones((2, 3), "float32"))
"""
    error = failing(kernel, cell)
    assert "never calls `super().__init__()`" not in error["explanation"]


def test_fit_before_compile(kernel: KernelSession) -> None:
    cell = DATA + "reg = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])\n"
    error = failing(kernel, cell + "reg.fit(feats, targets, epochs=1, verbose=0)")
    assert error["course"]["section"] == "keras-model-api"
    assert "`reg` was never compiled" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == 'reg.compile(optimizer="adam", loss="mse")'
    runs_cleanly(kernel, f"{fix}\nreg.fit(feats, targets, epochs=1, verbose=0)")


def test_fit_on_a_model_rebuilt_after_its_compile(kernel: KernelSession) -> None:
    build = DATA + "ranker = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])"
    runs_cleanly(kernel, build)
    runs_cleanly(kernel, 'ranker.compile(optimizer="sgd", loss="mae")')
    runs_cleanly(kernel, build)  # the build cell run again: a new, uncompiled model
    train = "ranker.train_on_batch(feats, targets)"
    error = failing(kernel, train)
    text = error["explanation"]
    assert "`ranker` now holds a model object that was not compiled" in text
    fix = fix_of(text)
    assert fix == 'ranker.compile(optimizer="sgd", loss="mae")'
    runs_cleanly(kernel, f"{fix}\n{train}")


def test_compile_written_after_fit_in_the_same_cell(kernel: KernelSession) -> None:
    cell = (
        DATA
        + """grader = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
grader.evaluate(feats, targets, verbose=0)
grader.compile(optimizer="rmsprop", loss="mse")"""
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "(line 5 of this cell) only runs after it" in text
    fix = fix_of(text)
    assert fix == 'grader.compile(optimizer="rmsprop", loss="mse")'
    runs_cleanly(kernel, f"{fix}\ngrader.evaluate(feats, targets, verbose=0)")


def test_validation_split_with_a_dataset(kernel: KernelSession) -> None:
    setup = (
        DATA
        + """scorer = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
scorer.compile(optimizer="adam", loss="mse")
"""
    )
    runs_cleanly(kernel, setup)
    cell = """batches = tf.data.Dataset.from_tensor_slices((feats, targets)).batch(4)
log = scorer.fit(batches, validation_split=0.25, epochs=1, verbose=0)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "keras-validation-data"
    text = error["explanation"]
    assert "`batches` is a tf.data.Dataset" in text
    # 24 rows in batches of 4: 6 batches, a quarter of them (1) for validation.
    assert "`batches` has 6 elements (batches, once batched)" in text
    (fit,) = spans(text)
    assert fit == (
        "log = scorer.fit(batches.skip(1), validation_data=batches.take(1), epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, fit)
    assert value_of(kernel, "sorted(log.history)") == ["loss", "val_loss"]
    # A dataset the notebook keeps for validation is given as it is.
    cell = """val_batches = tf.data.Dataset.from_tensor_slices((feats[:8], targets[:8])).batch(4)
log = scorer.fit(batches, validation_split=0.25, epochs=1, verbose=0)"""
    text = failing(kernel, cell)["explanation"]
    assert "`val_batches` in your notebook is a tf.data.Dataset kept for validation" in text
    fit = fix_of(text)
    assert fit == "log = scorer.fit(batches, validation_data=val_batches, epochs=1, verbose=0)"
    runs_cleanly(kernel, f"{fit}\ndel val_batches")
    assert value_of(kernel, "sorted(log.history)") == ["loss", "val_loss"]
    # Reshuffled each epoch, or of unknown size: no take/skip split of it is offered.
    for made, why in (
        ("batches.unbatch().shuffle(24).batch(4)", "is shuffled again every epoch"),
        ("batches.filter(lambda x, y: True)", "cardinality is -2"),
    ):
        cell = f"""mixed = {made}
log = scorer.fit(mixed, validation_split=0.25, epochs=1, verbose=0)"""
        text = failing(kernel, cell)["explanation"]
        assert why in text and "Fix:" not in text and "validation_data=mixed" not in text
    # Arrays may be split by Keras: no entry.
    runs_cleanly(kernel, "scorer.fit(feats, targets, validation_split=0.25, verbose=0)")


def test_weights_assigned_to_a_model(kernel: KernelSession) -> None:
    build = """teacher = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
student = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])"""
    runs_cleanly(kernel, build)
    error = failing(kernel, "student.weights = teacher.weights")
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    # Keras tracked teacher's variables in student before the assignment failed.
    assert "re-run the cell that builds it (cell In[" in text and "line 2)" in text
    fix = fix_of(text)
    assert fix == "student.set_weights(teacher.get_weights())"
    runs_cleanly(kernel, build)
    runs_cleanly(kernel, fix)
    same = "all(bool(np.all(a == b)) for a, b in zip(student.get_weights(), teacher.get_weights()))"
    assert value_of(kernel, same) is True
    error = failing(
        kernel, "student.trainable_weights = [w * 0 for w in student.trainable_weights]"
    )
    assert "re-run" not in error["explanation"]  # new tensors: the model is untouched
    fix = fix_of(error["explanation"])
    assert fix == (
        "for variable, new in zip(student.trainable_weights, [w * 0 for w in "
        "student.trainable_weights]): variable.assign(new)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(np.abs(student.get_weights()[0]).sum())") == 0.0


def test_weights_assigned_to_a_built_layer(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """donor = keras.layers.Dense(3)
donor.build((None, 4))
taker = keras.layers.Dense(3)
taker.build((None, 4))""",
    )
    # A built layer refuses the donor's variables (Keras's "cannot add new elements of
    # state"): the entry is about the read-only list, not about state added after build.
    error = failing(kernel, "taker.trainable_weights = donor.trainable_weights")
    text = error["explanation"]
    assert error["course"]["section"] == "keras-model-api"
    assert "`taker.trainable_weights` is a list Keras computes" in text
    assert "re-run" not in text
    fix = fix_of(text)
    assert fix == (
        "for variable, new in zip(taker.trainable_weights, donor.trainable_weights): "
        "variable.assign(new)"
    )
    runs_cleanly(kernel, fix)
    same = "bool(np.allclose(taker.get_weights()[0], donor.get_weights()[0]))"
    assert value_of(kernel, same) is True
    assert value_of(kernel, "len(taker.weights)") == 2


def test_layers_assigned_to_a_model(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """chain = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(4), keras.layers.Dense(2)]
)""",
    )
    error = failing(kernel, "chain.layers = chain.layers[:1]")
    fix = fix_of(error["explanation"])
    assert fix == "chain = keras.Sequential(chain.layers[:1])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "len(chain.layers)") == 1
    tower = """class Tower(keras.Model):
    def __init__(self):
        super().__init__()
        self.layers = [keras.layers.Dense(4), keras.layers.Dense(1)]

    def call(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

tower = Tower()
tower(np.ones((2, 5)))
"""
    error = failing(kernel, tower)
    fix = fix_of(error["explanation"])
    assert fix == "self.layer_stack = [keras.layers.Dense(4), keras.layers.Dense(1)]"
    runs_cleanly(kernel, tower.replace("self.layers", "self.layer_stack"))


def test_get_layer_with_a_name_the_model_lacks(kernel: KernelSession) -> None:
    build = """enc = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(4, name="encoder"), keras.layers.Dense(2, name="logits")]
)"""
    runs_cleanly(kernel, build)
    error = failing(kernel, 'hidden = enc.get_layer("encode")')
    text = error["explanation"]
    assert error["course"]["section"] == "keras-model-api"
    assert '"encoder", "logits"' in text and "`enc`" in text
    fix = fix_of(text)
    assert fix == 'enc.get_layer("encoder")'
    runs_cleanly(kernel, f"hidden = {fix}")
    # No close name: the names only, no fix.
    error = failing(kernel, 'enc.get_layer("projection")')
    assert "Fix:" not in error["explanation"]


STEP = """class Fitter(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss_value = tf.reduce_mean(tf.abs(self(x, training=True) - y))
        grads = tape.gradient(loss_value, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        return loss_value

inp = keras.Input((5,))
fitter = Fitter(inp, keras.layers.Dense(1)(inp))
fitter.compile(optimizer="sgd")
"""


def test_a_train_step_returning_a_tensor(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = STEP + "fitter.fit(feats, targets, epochs=1, verbose=0)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "custom-train-step"
    text = error["explanation"]
    assert "`Fitter.train_step` must return a dict" in text
    assert "`return loss_value`, line 8 of this cell" in text
    fix = fix_of(text)
    assert fix == 'return {"loss": loss_value}'
    runs_cleanly(kernel, cell.replace("return loss_value", fix))


def test_save_paths_keras_3_refuses(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(
        kernel,
        f"""import os
os.chdir({str(tmp_path)!r})
rec = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
rec.compile(optimizer="adam", loss="mse")""",
    )
    error = failing(
        kernel, 'keeper = keras.callbacks.ModelCheckpoint("best.h5", save_weights_only=True)'
    )
    assert error["course"]["section"] == "keras-saving"
    # The argument is named as the API names it.
    assert "ending in `.weights.h5`, and its `filepath` is `best.h5`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert (
        fix == 'keeper = keras.callbacks.ModelCheckpoint("best.weights.h5", save_weights_only=True)'
    )
    runs_cleanly(kernel, fix)
    error = failing(kernel, "rec.save_weights('rec.h5')")
    fix = fix_of(error["explanation"])
    assert fix == "rec.save_weights('rec.weights.h5')"
    runs_cleanly(kernel, fix)
    error = failing(kernel, 'rec.save("rec_export")')
    fix = fix_of(error["explanation"])
    assert fix == 'rec.save("rec_export.keras")'
    runs_cleanly(kernel, fix)
    assert {"rec.weights.h5", "rec_export.keras"} <= {p.name for p in tmp_path.iterdir()}
    runs_cleanly(kernel, 'rec.save("again.keras")')
    # A load of the same path later in the cell is named: it needs the new name too.
    cell = "rec.save_weights('pair.h5')\nrec.load_weights('pair.h5')"
    text = failing(kernel, cell)["explanation"]
    assert "`rec.load_weights('pair.h5')` on line 2 reads the same path" in text
    assert "give it `pair.weights.h5` too" in text
    runs_cleanly(kernel, cell.replace("'pair.h5'", "'pair.weights.h5'"))


def test_a_save_path_name_read_again_is_fixed_where_it_is_made(
    kernel: KernelSession, tmp_path: Path
) -> None:
    """A refused save path held by a name the cell reads again below: the fix rewrites the
    name's assignment (in this cell or an earlier one), so the later reads get it too."""
    runs_cleanly(
        kernel,
        f"""import os
out_dir = {str(tmp_path)!r}
ranker = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])""",
    )
    cell = """export_file = os.path.join(out_dir, "ranker_v1")
ranker.save(export_file)
back = keras.models.load_model(export_file)
print(back.count_params())"""
    text = failing(kernel, cell)["explanation"]
    assert "`export_file` is read again on line 3" in text
    fix = fix_of(text)
    assert fix == 'export_file = os.path.join(out_dir, "ranker_v1.keras")'
    fixed = cell.replace(cell.splitlines()[0], fix)
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "back.count_params()") == 8
    # Variant: the name made in an earlier cell by concatenation, weights only.
    runs_cleanly(kernel, 'ckpt_file = out_dir + "/enc_weights.h5"')
    cell = "ranker.save_weights(ckpt_file)\nranker.load_weights(ckpt_file)"
    text = failing(kernel, cell)["explanation"]
    assert "`ckpt_file` is read again on line 2" in text
    fix = fix_of(text)
    assert fix == 'ckpt_file = out_dir + "/enc_weights.weights.h5"'
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, cell)
    assert (tmp_path / "enc_weights.weights.h5").exists()
    # A name read only by the failing call is fixed where it is made too: its value
    # written out in the call would be a literal the notebook never had.
    runs_cleanly(kernel, 'single = out_dir + "/solo.h5"')
    fix = fix_of(failing(kernel, "ranker.save_weights(single)")["explanation"])
    assert fix == 'single = out_dir + "/solo.weights.h5"'
    runs_cleanly(kernel, f"{fix}\nranker.save_weights(single)")
    assert (tmp_path / "solo.weights.h5").exists()


def test_a_loss_name_keras_does_not_know(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        DATA
        + """est = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
est.compile(optimizer="adam", loss="mean_squared_eror")""",
    )
    train = "est.fit(feats, targets, epochs=1, verbose=0)"
    error = failing(kernel, train)
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    assert '"mean_squared_eror" is not a loss' in text
    fix = fix_of(text)
    assert fix == 'est.compile(optimizer="adam", loss="mean_squared_error")'
    runs_cleanly(kernel, f"{fix}\n{train}")
    error = failing(kernel, 'squash = keras.layers.Dense(3, activation="tanhh")')
    fix = fix_of(error["explanation"])
    assert fix == 'squash = keras.layers.Dense(3, activation="tanh")'
    runs_cleanly(kernel, fix)


def test_an_input_shape_that_counts_the_examples(kernel: KernelSession) -> None:
    build = """readings = np.random.rand(30, 7).astype("float32")
levels = readings.mean(axis=1)
gauge = keras.Sequential([keras.Input(shape=readings.shape), keras.layers.Dense(1)])
gauge.compile(optimizer="adam", loss="mse")"""
    runs_cleanly(kernel, build)
    train = "gauge.fit(readings, levels, epochs=1, verbose=0)"
    error = failing(kernel, train)
    assert error["course"]["section"] == "batch-dimension"
    text = error["explanation"]
    assert "`gauge` declares one example as (30, 7)" in text
    assert "batch axis is missing" not in text  # not the missing-axis reading
    fix = fix_of(text)
    assert fix == "keras.Input(shape=readings.shape[1:])"
    runs_cleanly(kernel, build.replace("keras.Input(shape=readings.shape)", fix) + "\n" + train)
    runs_cleanly(kernel, "gauge.predict(readings, verbose=0)")
    # Literal shape, labels with as many rows: the same reading, the shape without its first axis.
    literal = """meter = keras.Sequential([keras.Input(shape=(30, 7)), keras.layers.Dense(1)])
meter.compile(optimizer="adam", loss="mse")
meter.fit(readings, levels, epochs=1, verbose=0)"""
    error = failing(kernel, literal)
    fix = fix_of(error["explanation"])
    assert fix == "keras.Input(shape=(7,))"
    runs_cleanly(kernel, literal.replace("keras.Input(shape=(30, 7))", fix))
    # One sequence given to a sequence model: its batch axis is what is missing.
    single = """track = keras.Sequential([keras.Input(shape=(30, 7)), keras.layers.LSTM(2)])
track.predict(readings, verbose=0)"""
    error = failing(kernel, single)
    assert "declares one example" not in error["explanation"]
    assert error["course"]["section"] == "batch-dimension"


def test_a_whole_input_shape_given_as_one_size_of_a_weight(kernel: KernelSession) -> None:
    define = """class Scale(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape, self.units))
    def call(self, x):
        return x @ self.w
"""
    use = "scaled = Scale(4)(np.zeros((2, 3), 'float32'))"
    error = failing(kernel, define + use)
    assert error["course"]["section"] == "keras-weights-in-build"
    text = error["explanation"]
    assert "`input_shape` is a whole shape, (2, 3)" in text
    assert "`input_shape[-1]` (3 here)" in text
    fix = fix_of(text)
    assert fix == "self.w = self.add_weight(shape=(input_shape[-1], self.units))"
    runs_cleanly(
        kernel,
        define.replace("self.w = self.add_weight(shape=(input_shape, self.units))", fix) + use,
    )
    assert value_of(kernel, "list(scaled.shape)") == [2, 4]
    # The look-alike: sizes read from the shape already, no entry.
    runs_cleanly(
        kernel,
        define.replace("shape=(input_shape, self.units)", "shape=(input_shape[-1], self.units)")
        + use,
    )


def test_a_sequence_layer_on_an_input_declared_without_its_features_axis(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        'readings = np.random.rand(16, 20).astype("float32")\n'
        'levels = np.random.rand(16, 1).astype("float32")',
    )
    cell = """series_in = keras.Input(shape=(20,))
hidden = keras.layers.Conv1D(4, 3)(series_in)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "batch-dimension"
    text = error["explanation"]
    assert "`keras.Input(shape=(20,))` declares each example as (20,)" in text
    assert "`Conv1D` gets (None, 20) but reads (batch, steps, features)" in text
    # The learner's data (the one (N, 20) array) and the layer alternative are named.
    assert "`readings[..., None]`" in text and "`keras.layers.Reshape((20, 1))`" in text
    fix = fix_of(text)
    assert fix == "series_in = keras.Input(shape=(20, 1))"
    model = """pooled = keras.layers.GlobalAveragePooling1D()(hidden)
series_net = keras.Model(series_in, keras.layers.Dense(1)(pooled))
series_net.compile(optimizer="adam", loss="mse")
series_net.fit(readings[..., None], levels, epochs=1, verbose=0)
"""
    runs_cleanly(kernel, cell.replace("series_in = keras.Input(shape=(20,))", fix) + model)
    # A Sequential GRU declared on (20,): the same cause, the Input written in the list.
    stacked = "gru_net = keras.Sequential([keras.Input((20,)), keras.layers.GRU(4)])"
    error = failing(kernel, stacked)
    fix = fix_of(error["explanation"])
    assert fix == "keras.Input((20, 1))"
    runs_cleanly(kernel, stacked.replace("keras.Input((20,))", fix))
    runs_cleanly(kernel, "print(gru_net.predict(readings[..., None], verbose=0).shape)")
    # The look-alike: a GRU on a declared (steps, features) input is quiet.
    runs_cleanly(kernel, "ok_net = keras.Sequential([keras.Input((20, 1)), keras.layers.GRU(4)])")


def test_a_sequence_layer_on_an_input_declared_as_one_step_of_the_data(
    kernel: KernelSession,
) -> None:
    """The data says an example is (steps, features): the Input declared one step of it.
    The fix declares the whole example, read from the arrays or a dataset's element_spec;
    a table of rows of the same width brings back the unit-axis reading."""
    runs_cleanly(
        kernel,
        "tracks = np.random.rand(30, 12, 2).astype('float32')\n"
        "moved = np.random.rand(30, 1).astype('float32')\n"
        "first_track = tracks[0]",
    )
    cell = """step_in = keras.Input(shape=(2,))
conv = keras.layers.Conv1D(8, 3, activation="relu")(step_in)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "batch-dimension"
    text = error["explanation"]
    assert "`keras.Input(shape=(2,))` declares each example as (2,)" in text
    assert "`tracks` is (30, 12, 2), 12 steps of 2 features each" in text
    assert "(2, 1)" not in text
    fix = fix_of(text)
    assert fix == "step_in = keras.Input(shape=(12, 2))"
    model = """pooled = keras.layers.GlobalMaxPooling1D()(conv)
track_net = keras.Model(step_in, keras.layers.Dense(1)(pooled))
track_net.compile(optimizer="adam", loss="mse")
track_net.fit(tracks, moved, epochs=1, verbose=0)
"""
    runs_cleanly(kernel, cell.replace("step_in = keras.Input(shape=(2,))", fix) + model)
    # Only a dataset says it: batches of (None, 7, 11) inputs, an LSTM in a Sequential.
    runs_cleanly(
        kernel,
        "walk_ds = tf.data.Dataset.from_tensor_slices(\n"
        "    (np.random.rand(10, 7, 11).astype('float32'), np.zeros((10, 1), 'float32'))\n"
        ").batch(4)",
    )
    stacked = "walk_net = keras.Sequential([keras.Input((11,)), keras.layers.LSTM(3)])"
    error = failing(kernel, stacked)
    assert "`walk_ds` is (None, 7, 11)" in error["explanation"], error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "keras.Input((7, 11))"
    runs_cleanly(
        kernel,
        stacked.replace("keras.Input((11,))", fix)
        + "\nwalk_net.add(keras.layers.Dense(1))\nwalk_net.compile('adam', 'mse')"
        + "\nwalk_net.fit(walk_ds, epochs=1, verbose=0)",
    )
    # A table of rows 2 wide beside the tracks: each row could be a sequence of 2 values,
    # so the unit-axis reading comes back.
    runs_cleanly(kernel, "waypoints = np.random.rand(40, 2).astype('float32')")
    error = failing(kernel, cell)
    assert fix_of(error["explanation"]) == "step_in = keras.Input(shape=(2, 1))"


def test_a_functional_models_layer_index_off_by_one(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """feat_in = keras.Input((8,))
hid = keras.layers.Dense(16, activation="relu", name="hidden")(feat_in)
scorer = keras.Model(feat_in, keras.layers.Dense(3, name="head")(hid))
hidden_out = np.random.rand(2, 16).astype("float32")
""",
    )
    cell = "head_scores = scorer.layers[1](hidden_out)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`scorer.layers[1]` is layer 'hidden', which takes 8 features" in text
    assert "the index is off by one" in text and "lists its `InputLayer` first" in text
    fix = fix_of(text)
    assert fix == 'head_scores = scorer.get_layer("head")(hidden_out)'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(head_scores.shape)") == [2, 3]
    # The layer taken out under a name in an earlier cell: that assignment is the fix.
    runs_cleanly(kernel, "head_layer = scorer.layers[1]")
    error = failing(kernel, "head_scores = head_layer(hidden_out)")
    fix = fix_of(error["explanation"])
    assert fix == 'head_layer = scorer.get_layer("head")'
    runs_cleanly(kernel, f"{fix}\nhead_scores = head_layer(hidden_out)")
    # The look-alike: a Sequential model's layers[1] on data of its own size is quiet,
    # and data of a size no neighbour takes is not called an index mistake.
    runs_cleanly(
        kernel,
        "seq = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), "
        "keras.layers.Dense(3)])\nout = seq.layers[1](hidden_out)",
    )
    other = failing(kernel, "scorer.layers[1](np.zeros((2, 5), 'float32'))")
    assert "off by one" not in other["explanation"]


SPARSE_CLASSIFIER = """keras.utils.set_random_seed(4)
colour_x = np.random.rand(30, 5).astype("float32")
colour_y = np.random.randint(0, 3, size=30)
colour_net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
colour_net.compile(
    optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
)
colour_net.fit(colour_x, colour_y, epochs=1, verbose=0)
"""


def test_one_hot_labels_name_the_sparse_loss_class_compiled(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SPARSE_CLASSIFIER)
    cell = (
        "colour_onehot = keras.utils.to_categorical(colour_y, num_classes=3)\n"
        "print(colour_net.evaluate(colour_x, colour_onehot, verbose=0))"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`colour_onehot` look one-hot" in text
    assert (
        "`colour_net` was compiled with "
        "`loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)`"
    ) in text
    fix = fix_of(text)
    assert fix == "colour_net.evaluate(colour_x, np.argmax(colour_onehot, axis=-1), verbose=0)"
    runs_cleanly(kernel, cell.splitlines()[0] + "\n" + fix)
    # The look-alike: the class numbers themselves are quiet.
    runs_cleanly(kernel, "colour_net.evaluate(colour_x, colour_y, verbose=0)")
