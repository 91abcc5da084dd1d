"""A Keras object's life (issue #25): a model asked for its weights before it was built,
a saved model whose own layer class Keras does not know by name when loading it, and the
entry for an error no family knows, which must not blame shapes when the message is not
about them. Our own cells (``errors/families_keras_lifecycle.py``, ``errors/families.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_parameters_counted_before_the_model_is_built(kernel: KernelSession) -> None:
    cell = (
        "scorer = keras.Sequential([keras.layers.Dense(6), keras.layers.Dense(1)])\n"
        "print(scorer.count_params())\n"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    assert "`count_params()`" in text and "`scorer` has none yet" in text
    assert "keras.Input(shape=(features,))" in text
    # What the entry says to do: the input shape where the model is made.
    runs_cleanly(
        kernel,
        cell.replace("Sequential([", "Sequential([keras.Input(shape=(3,)), "),
    )
    assert value_of(kernel, "scorer.count_params()") == 3 * 6 + 6 + 6 + 1


def test_a_layer_weight_read_before_the_layer_is_built(kernel: KernelSession) -> None:
    error = failing(kernel, "head = keras.layers.Dense(2)\nprint(head.kernel.shape)\n")
    assert error["course"]["section"] == "keras-model-api"
    assert "`kernel`" in error["explanation"] and "`head` has none yet" in error["explanation"]


def test_loading_a_model_with_an_unregistered_layer(kernel: KernelSession, tmp_path: Path) -> None:
    saved = tmp_path / "tripled.keras"
    setup = f"""class Tripler(keras.layers.Layer):
    def call(self, x):
        return 3.0 * x

tripled = keras.Sequential([keras.Input((2,)), Tripler(), keras.layers.Dense(1)])
tripled.save({str(saved)!r})
saved_at = {str(saved)!r}
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, "restored = keras.models.load_model(saved_at)\n")
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "`Tripler`" in text and "register_keras_serializable" in text
    fix = fix_of(text)
    assert (
        fix == 'restored = keras.models.load_model(saved_at, custom_objects={"Tripler": Tripler})'
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "type(restored.layers[0]).__name__") == "Tripler"


def test_a_registered_layer_loads_without_an_entry(kernel: KernelSession, tmp_path: Path) -> None:
    saved = tmp_path / "halved.keras"
    cell = f"""@keras.saving.register_keras_serializable(package="lifecycle_test")
class Halver(keras.layers.Layer):
    def call(self, x):
        return 0.5 * x

halved = keras.Sequential([keras.Input((2,)), Halver(), keras.layers.Dense(1)])
halved.save({str(saved)!r})
again = keras.models.load_model({str(saved)!r})
"""
    runs_cleanly(kernel, cell)
    assert value_of(kernel, "type(again.layers[0]).__name__") == "Halver"


def test_an_error_no_family_knows_is_not_blamed_on_shapes(
    kernel: KernelSession, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-labels.txt"
    error = failing(kernel, f"raw_labels = tf.io.read_file({str(missing)!r})\n")
    text = error["explanation"]
    assert "Compare these shapes and dtypes" not in text
    assert "says what TensorFlow refused" in text and "`tf.io.read_file" in text


def test_loading_a_layer_whose_init_takes_no_keras_keywords(
    kernel: KernelSession, tmp_path: Path
) -> None:
    define = """class Doubler(keras.layers.Layer):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
    def call(self, x):
        return x * self.factor
    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor})
        return config
"""
    saved = str(tmp_path / "doubled.keras")
    save = f"dm = keras.Sequential([keras.Input((2,)), Doubler(2.0)])\ndm.save({saved!r})\n"
    load = f'back = keras.models.load_model({saved!r}, custom_objects={{"Doubler": Doubler}})'
    runs_cleanly(kernel, define + save)
    error = failing(kernel, load)
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    # The cause is the innermost of Keras's wrapped errors, named in the learner's class.
    assert "`def __init__(self, factor)` takes no `name`" in text
    spans = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert spans == ["def __init__(self, factor, **kwargs):", "super().__init__(**kwargs)"]
    fixed = define.replace("def __init__(self, factor):", spans[0]).replace(
        "super().__init__()", spans[1]
    )
    runs_cleanly(kernel, fixed + save + load)
    assert value_of(kernel, "float(back.layers[-1].factor)") == 2.0


def test_loading_a_layer_whose_get_config_lacks_an_argument(
    kernel: KernelSession, tmp_path: Path
) -> None:
    define = """class Shift(keras.layers.Layer):
    def __init__(self, by, **kwargs):
        super().__init__(**kwargs)
        self.offset = by
    def call(self, x):
        return x + self.offset
    def get_config(self):
        return super().get_config()
"""
    saved = str(tmp_path / "shifted.keras")
    save = f"sh = keras.Sequential([keras.Input((2,)), Shift(1.5)])\nsh.save({saved!r})\n"
    load = f'back = keras.models.load_model({saved!r}, custom_objects={{"Shift": Shift}})'
    runs_cleanly(kernel, define + save)
    error = failing(kernel, load)
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "has no `by`, which `Shift.__init__` requires" in text
    fix = fix_of(text)
    assert fix == 'return {**super().get_config(), "by": self.offset}'
    runs_cleanly(kernel, define.replace("return super().get_config()", fix) + save + load)
    assert value_of(kernel, "float(back.layers[-1].offset)") == 1.5


def test_loading_a_model_compiled_with_an_unregistered_loss(
    kernel: KernelSession, tmp_path: Path
) -> None:
    saved = str(tmp_path / "smooth.keras")
    setup = f"""def smooth_mse(y, p):
    return tf.reduce_mean(tf.square(y - p))
sm = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
sm.compile(loss=smooth_mse)
sm.save({saved!r})
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, f"back = keras.models.load_model({saved!r})")
    text = error["explanation"]
    assert "the function `smooth_mse`" in text and "register_keras_serializable" in text
    fix = fix_of(text)
    assert (
        fix
        == f'back = keras.models.load_model({saved!r}, custom_objects={{"smooth_mse": smooth_mse}})'
    )
    runs_cleanly(kernel, fix)
    # The look-alike: a model saved with a built-in loss loads, and nothing is said.
    runs_cleanly(
        kernel,
        setup.replace("loss=smooth_mse", 'loss="mse"')
        + f"again = keras.models.load_model({saved!r})",
    )


def test_set_weights_from_a_model_of_another_architecture(
    kernel: KernelSession, tmp_path: Path
) -> None:
    setup = """teacher = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)]
)
student = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(8), keras.layers.Dense(1)]
)
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, "student.set_weights(teacher.get_weights())")
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    assert "4 arrays for 6 weights" in text
    assert "((8, 8), (8,)) against `teacher`'s" in text and "((8, 1), (1,))" in text
    fix = fix_of(text)
    assert fix == (
        "for mine, theirs in zip(student.layers[:1], teacher.layers[:1]): "
        "mine.set_weights(theirs.get_weights())"
    )
    runs_cleanly(kernel, fix)
    assert value_of(
        kernel, "bool(np.array_equal(student.layers[0].kernel, teacher.layers[0].kernel))"
    )
    # The same two models through a weights file: the file's writer is found in the cells.
    saved = str(tmp_path / "teacher.weights.h5")
    runs_cleanly(kernel, f"teacher.save_weights({saved!r})")
    error = failing(kernel, f"student.load_weights({saved!r})")
    text = error["explanation"]
    assert "the file `teacher.save_weights` wrote comes from another architecture" in text
    assert fix_of(text) == fix
    # The look-alike: the same architecture copies whole, quietly.
    runs_cleanly(
        kernel,
        "twin = keras.models.clone_model(teacher)\ntwin.set_weights(teacher.get_weights())",
    )


FOCAL = """class BinaryFocalLoss(keras.losses.Loss):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def call(self, y_true, y_pred):
        return tf.reduce_mean((1.0 - y_pred) ** self.gamma)

    def get_config(self):
        return {**super().get_config(), "gamma": self.gamma}

focal = BinaryFocalLoss(3.0)
focal_copy = BinaryFocalLoss.from_config(focal.get_config())
"""


def test_from_config_on_an_init_without_kwargs(kernel: KernelSession) -> None:
    error = failing(kernel, FOCAL)
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "`def __init__(self, gamma=2.0):` takes no `name`" in text
    spans = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert spans == ["def __init__(self, gamma=2.0, **kwargs):", "super().__init__(**kwargs)"]
    fixed = FOCAL.replace("def __init__(self, gamma=2.0):", spans[0]).replace(
        "super().__init__()", spans[1]
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "focal_copy.gamma") == 3.0


def test_a_saved_lambda_layer_is_replaced_by_rescaling(
    kernel: KernelSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "halved.keras")
    cell = (
        "half_in = keras.Input(shape=(4,))\n"
        "halved = keras.layers.Lambda(lambda t: t * 0.5)(half_in)\n"
        "half_model = keras.Model(half_in, keras.layers.Dense(1)(halved))\n"
        f"half_model.save({path!r})\n"
        f"half_loaded = keras.models.load_model({path!r})"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "keras-saving"
    assert (
        "`half_model` (saved to that path) holds `keras.layers.Lambda(lambda t: t * 0.5)`" in text
    )
    assert "unless given `safe_mode=False`" in text
    fix = fix_of(text)
    assert fix == "keras.layers.Rescaling(0.5)"
    runs_cleanly(kernel, cell.replace("keras.layers.Lambda(lambda t: t * 0.5)", fix))
    assert value_of(kernel, "float(half_loaded.layers[1].scale)") == 0.5
    # The look-alike: a model without a Lambda saves and loads quietly.
    runs_cleanly(kernel, f"keras.models.load_model({path!r})")


WEIGHTS_OF_A_CLASS = """
import numpy as np, keras, os, tempfile
class PriceNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.price = keras.layers.Dense(1)
    def call(self, rows):
        return self.price(self.hidden(rows))
rooms = np.random.rand(30, 5).astype("float32")
trained_net = PriceNet()
trained_net.compile("adam", "mse")
trained_net.fit(rooms, rooms[:, :1], epochs=1, verbose=0)
price_file = os.path.join(tempfile.mkdtemp(), "price.weights.h5")
trained_net.save_weights(price_file)
"""


def test_weights_loaded_into_a_new_model_of_a_class_never_called(kernel: KernelSession) -> None:
    runs_cleanly(kernel, WEIGHTS_OF_A_CLASS)
    error = failing(kernel, "again = PriceNet()\nagain.load_weights(price_file)")
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "`again` has no weights yet" in text and "(`PriceNet`)" in text
    fix = fix_of(text)
    assert fix == "again(np.zeros((1, 5)))"
    runs_cleanly(
        kernel,
        f"again = PriceNet()\n{fix}\nagain.load_weights(price_file)\n"
        "assert np.allclose(again.predict(rooms, verbose=0), "
        "trained_net.predict(rooms, verbose=0))",
    )
    # The look-alike that is right: the model called on data before loading.
    runs_cleanly(kernel, "third = PriceNet()\nthird(rooms[:2])\nthird.load_weights(price_file)")


CLASS_WITH_ARGUMENTS = """
class ScaledHead(keras.Model):
    def __init__(self, classes, scale=2.0):
        super().__init__()
        self.classes = classes
        self.scale = scale
        self.head = keras.layers.Dense(classes)
    def call(self, x):
        return self.head(x) * self.scale
"""


def test_a_model_class_saved_without_get_config(kernel: KernelSession, tmp_path: Path) -> None:
    target = str(tmp_path / "head.keras")
    setup = f"import numpy as np\nimport keras\n{CLASS_WITH_ARGUMENTS}"
    runs_cleanly(kernel, setup + "head = ScaledHead(4)\nhead(np.ones((2, 3), 'float32'))")
    error = failing(kernel, f"head.save({target!r})")
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "`ScaledHead` must say them in a `get_config` method" in text
    fix = fix_of(text)
    assert fix == 'def get_config(self): return {"classes": self.classes, "scale": self.scale}'
    fixed_class = CLASS_WITH_ARGUMENTS.rstrip() + "\n    " + fix + "\n"
    runs_cleanly(
        kernel,
        f"{fixed_class}head = ScaledHead(4, scale=3.0)\nhead(np.ones((2, 3), 'float32'))\n"
        f"head.save({target!r})\n"
        f"back = keras.models.load_model({target!r}, custom_objects={{'ScaledHead': ScaledHead}})\n"
        "assert back.scale == 3.0 and back.classes == 4",
    )
