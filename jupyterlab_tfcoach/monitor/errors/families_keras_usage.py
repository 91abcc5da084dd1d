"""Keras 3 used as older tutorials wrote it (issue #25): a callback class where fit needs
an instance, a model method Keras removed (``predict_classes``, ``fit_generator``), a
weights file loaded as a whole model.

Each is read from the failing call as written and what its names hold (a class by its
MRO, a model by what Keras stores, a path literal found again in the cells' own
``save_weights`` call); the fix is the call rewritten in the learner's names.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells, string_literal
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import (
    keras_sublayers,
    module_of_class,
    mro_of_class,
    stored,
)
from jupyterlab_tfcoach.monitor.training.loss_agreement import activation_name

_type_name = type.__dict__["__name__"].__get__
# Keras's model API: what a Keras 2 name is now.
KERAS_SECTION = "keras-model-api"
_FIT_METHODS = ("fit", "evaluate", "predict")


# ------------------------------------------------------------------ a callback class
def _read_callback_class(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``callbacks=[keras.callbacks.EarlyStopping]``: the class itself, which Keras calls
    methods on as if it were an object (``set_model() missing ... 'model'``)."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _FIT_METHODS
    ):
        return None
    given = next((k.value for k in call.keywords if k.arg == "callbacks"), None)
    if not isinstance(given, (ast.List, ast.Tuple)):
        return None
    classes = []
    for element in given.elts:
        found, value = _static_value(element, line, context)
        if found and isinstance(value, type) and _is_callback_class(value):
            classes.append(element)
    if len(classes) != 1:
        return None
    element = classes[0]
    written = line.frame.segment(element) or ""
    rule = (
        f"`callbacks=` takes callback objects, and {code(written)} is the class itself: "
        "Keras calls each callback's methods (`set_model`, `on_epoch_end`) on an object "
        "made from the class, with its settings"
    )
    fixed = rewrite(line.frame, call, element, f"{written}()")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _static_value(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[bool, object]:
    """What a name or a dotted name from a library module holds (``keras.callbacks.X``),
    walked with ``inspect.getattr_static``: no module ``__getattr__`` runs."""
    import inspect
    import types

    chain: list[str] = []
    root = node
    while isinstance(root, ast.Attribute):
        chain.append(root.attr)
        root = root.value
    if not isinstance(root, ast.Name):
        return False, None
    found, value = value_of(root, line.frame, context)
    if not found:
        return False, None
    for name in reversed(chain):
        if not isinstance(value, (types.ModuleType, type)):
            return False, None
        try:
            value = inspect.getattr_static(value, name)
        except AttributeError:
            return False, None
    return True, value


def _is_callback_class(cls: type) -> bool:
    try:
        mro = mro_of_class(cls)
        return any(
            _type_name(base) == "Callback" and str(module_of_class(base)).startswith("keras")
            for base in mro
        )
    except Exception:
        return False


CALLBACK_CLASS = ErrorFamily(
    "a callback class given where fit needs a callback object",
    messages=(),
    read=_read_callback_class,
    section="callback-mode",
)


# ------------------------------------------------------------------ removed model methods
_NO_ATTRIBUTE = re.compile(r"'(?P<owner>\w+)' object has no attribute '(?P<name>\w+)'")
# Model methods Keras removed (2.6 / 3.0) -> the method that replaces them.
_RENAMED = {
    "fit_generator": "fit",
    "evaluate_generator": "evaluate",
    "predict_generator": "predict",
    "predict_proba": "predict",
}


def _read_removed_method(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    name = error.group("name")
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == name
        and (name in _RENAMED or name == "predict_classes")
    ):
        return None
    found, model = value_of(call.func.value, line.frame, context)
    if not found or value_kind(model) != "model":
        return None
    owner = line.frame.segment(call.func.value) or ""
    written = line.frame.segment(call) or ""
    if not owner or not written or "\n" in written:
        return None
    if name in _RENAMED:
        new = _RENAMED[name]
        does = (
            "it takes generators and datasets"
            if name.endswith("generator")
            else "it returns the probabilities"
        )
        rule = f"Keras removed `{name}`: `{new}` does its work ({does})"
        fixed = rewrite(line.frame, call, call.func, f"{owner}.{new}")
        fix = code(fixed) if fixed and "\n" not in fixed else None
        return Finding(rule + ".", fix)
    arguments = written[written.index("(") :]
    units, activation = _output_head(model)
    numpy = context.module_alias("numpy", "np")
    if activation == "sigmoid" or (units == 1 and activation != "softmax"):
        # Sigmoid units are independent yes/no answers (one, or one per label): each is
        # thresholded on its own; argmax would keep only one label of a multi-label model.
        cut = "0" if activation == "linear" else "0.5"
        which = (
            "each sigmoid unit answers yes where its probability passes 0.5"
            if activation == "sigmoid"
            else f"one output unit: class 1 where it passes {cut}"
        )
        rule = (
            "Keras removed `predict_classes`: `predict` gives the scores, and the classes "
            f"are read from them; {which}"
        )
        fixed = f'({owner}.predict{arguments} > {cut}).astype("int32")'
    else:
        rule = (
            "Keras removed `predict_classes`: `predict` gives one score per class, and the "
            "class is the one with the highest score (`argmax` over the last axis)"
        )
        fixed = f"{numpy}.argmax({owner}.predict{arguments}, axis=-1)"
    whole = rewrite(line.frame, call, call, fixed)
    fix = code(whole) if whole and "\n" not in whole else None
    return Finding(rule + ".", fix)


def _output_head(model: object) -> tuple[int | None, str | None]:
    """The last layer's units and activation name (None where unknown)."""
    layers = list(keras_sublayers(model))
    if not layers:
        return None, None
    units = stored(layers[-1], "units")
    activation = activation_name(stored(layers[-1], "activation"))
    return (units if type(units) is int else None), activation


# TensorFlow 1 names a TensorFlow 2 tutorial no longer has: moved ones (their new
# place), and the graph-and-session ones eager execution replaced.
_TF1_MOVED = {
    "random_normal": "random.normal",
    "random_uniform": "random.uniform",
    "truncated_normal": "random.truncated_normal",
    "log": "math.log",
    "to_float": None,
    "set_random_seed": "random.set_seed",
}
_TF1_GRAPH = (
    "placeholder",
    "Session",
    "InteractiveSession",
    "global_variables_initializer",
    "get_variable",
    "variable_scope",
    "reset_default_graph",
    "ConfigProto",
)
_NO_MODULE_ATTRIBUTE = re.compile(
    r"module '(?P<module>tensorflow|keras[\w.]*)' has no attribute '(?P<name>\w+)'"
)
# Keras 2 image tools Keras 3 dropped: the rule says what replaces them.
_KERAS2_IMAGE = ("ImageDataGenerator",)


def _read_tf1_name(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    name = error.group("name")
    node = next(
        (
            found
            for part in line.frame.header()
            for found in ast.walk(part)
            if isinstance(found, ast.Attribute) and found.attr == name
        ),
        None,
    )
    if node is None:
        return None
    if error.group("module").startswith("keras"):
        if name not in _KERAS2_IMAGE:
            return None
        written = line.frame.segment(node) or name
        keras = context.module_alias("keras", "keras")
        rule = (
            f"Keras 3 has no `{name}` ({code(written)} is Keras 2): images are read with "
            f"`{keras}.utils.image_dataset_from_directory(...)` (a tf.data dataset of batches), "
            f"and scaling and augmentation are layers, `{keras}.layers.Rescaling(1 / 255)`, "
            f"`{keras}.layers.RandomFlip(...)`, put first in the model or mapped over the "
            "dataset"
        )
        return Finding(rule + ".", None, section=KERAS_SECTION)
    if error.group("module") != "tensorflow" or not isinstance(node.value, ast.Name):
        return None
    alias = node.value.id
    if name in _TF1_GRAPH:
        rule = (
            f"`{alias}.{name}` is TensorFlow 1 (graphs built first, then run in a session); "
            "TensorFlow 2 runs operations at once (eagerly): data goes straight into the "
            "functions or the Keras model (`keras.Input(shape=...)` declares a model's "
            "input; `tf.Variable` creates and initialises a variable; `tf.function` makes a "
            "graph from a Python function). Follow a TensorFlow 2 tutorial for this part "
            "(`tf.compat.v1` keeps the old names for old code)"
        )
        return Finding(rule + ".", None)
    if name not in _TF1_MOVED:
        return None
    moved = _TF1_MOVED[name]
    if moved is None:
        rule = f"TensorFlow 2 removed `{alias}.{name}`: `{alias}.cast(x, {alias}.float32)` does it"
        return Finding(rule + ".", None)
    rule = f"TensorFlow 2 moved `{alias}.{name}` to `{alias}.{moved}`"
    statement = line.statement
    fixed = rewrite(line.frame, statement, node, f"{alias}.{moved}") if statement else None
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


TF1_NAME = ErrorFamily(
    "a TensorFlow 1 name",
    messages=(Message(_NO_MODULE_ATTRIBUTE),),
    read=_read_tf1_name,
    section="eager-vs-graph",
    exception_type="AttributeError",
    without_library=True,
)


REMOVED_METHOD = ErrorFamily(
    "a model method Keras removed",
    messages=(Message(_NO_ATTRIBUTE),),
    read=_read_removed_method,
    section="keras-model-api",
    exception_type="AttributeError",
    # Python raises it at the attribute, before any Keras code runs.
    without_library=True,
)


# ------------------------------------------------------------------ weights loaded as a model
_NO_CONFIG = re.compile(r"No model config found in the file at (?P<path>.+?)\.?$", re.M)


def _read_weights_file(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``keras.models.load_model("w.weights.h5")``: a file ``save_weights`` wrote holds
    the weights alone, no architecture; the model whose ``save_weights`` wrote that path
    (in the cells) loads them back."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, (ast.Attribute, ast.Name))
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and type(call.args[0].value) is str
    ):
        return None
    path = call.args[0].value
    written_path = line.frame.segment(call.args[0])
    rule = (
        f"{code(written_path or path)} holds weights only (what `save_weights` writes), not a "
        "model: `load_model` needs a `.keras` file from `model.save`. Weights go back into "
        "a model built like the one that saved them, with `load_weights`"
    )
    saver = saved_by(path, context)
    if saver is None:
        return Finding(rule + ".", None)
    # ``load_weights`` fills the model in place and returns nothing: a statement, no name.
    fixed = f"{saver}.load_weights({string_literal(written_path, path)})"
    return Finding(rule + f" ({code(saver)} saved them).", code(fixed))


def saved_by(path: str, context: ErrorContext) -> str | None:
    """The model of the namespace whose ``save_weights(path)`` (that literal path) is in
    the cells: the source of a weights file."""
    for _, node in nodes_in_cells(context):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "save_weights"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == path
            and isinstance(node.func.value, ast.Name)
        ):
            found, model = context.lookup(node.func.value.id, None)
            if found and value_kind(model) == "model":
                return node.func.value.id
    return None


WEIGHTS_AS_MODEL = ErrorFamily(
    "a weights file loaded as a whole model",
    messages=(Message(_NO_CONFIG),),
    read=_read_weights_file,
    section="keras-saving",
    exception_type="ValueError",
)
