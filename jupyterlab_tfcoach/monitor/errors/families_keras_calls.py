"""What Keras's training calls need that the learner's call or class left out (issue #25):
``fit(dataset, y)`` with a dataset that already yields its targets, a subclassed
``keras.Model`` with no ``call`` method, and ``class_weight`` given to a model of several
outputs (per-example weights, one array per output, are what it takes).

Read from the failing call (the dataset's ``element_spec``: no element is produced) and
from the class's own source in the cells (``inspect``: no user code runs).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    instance_attribute,
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
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

KERAS_SECTION = "keras-model-api"

# ------------------------------------------------------------------ a dataset and y
_DATASET_WITH_Y = re.compile(r"When providing `x` as a tf\.data\.Dataset, `y` should not be passed")


def _read_dataset_with_y(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error
    call = line.call
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args):
        return None
    found, dataset = value_of(call.args[0], line.frame, context)
    if not found or value_kind(dataset) != "dataset":
        return None
    y_node: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    keyword = next((k for k in call.keywords if k.arg == "y"), None)
    if y_node is None and keyword is not None:
        y_node = keyword.value
    written = line.frame.segment(call.args[0]) or "the dataset"
    y_written = line.frame.segment(y_node) if y_node is not None else "y"
    spec = library_attribute(dataset, "element_spec", None)
    pairs = isinstance(spec, tuple) and len(spec) >= 2
    if not pairs:
        rule = (
            f"A dataset given to `{call.func.attr}` must yield the targets too, as "
            f"(inputs, targets) pairs, and `{y_written}` cannot be given beside it: "
            f"{code(written)} yields inputs only. Build it from both (`from_tensor_slices("
            "(inputs, targets))`), or zip it with a dataset of the targets batched the same way"
        )
        return Finding(rule + ".", None)
    rule = (
        f"{code(written)} already yields (inputs, targets) pairs, and `{call.func.attr}` takes "
        f"the targets from it: a dataset is given alone, so {code(y_written or 'y')} is one "
        "argument too many"
    )
    statement = line.statement
    whole = line.frame.segment(call) or ""
    if keyword is not None:
        dropped = line.frame.segment(keyword) or ""
        fixed_call = whole.replace(f", {dropped}", "", 1) if dropped else ""
    elif y_node is not None and y_written:
        fixed_call = whole.replace(f"{written}, {y_written}", written, 1)
    else:
        fixed_call = ""
    fixed = (
        rewrite(line.frame, statement, call, fixed_call)
        if statement and fixed_call and fixed_call != whole
        else None
    )
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


DATASET_WITH_Y = ErrorFamily(
    "targets given beside a dataset",
    messages=(Message(_DATASET_WITH_Y),),
    read=_read_dataset_with_y,
    section="tf-data",
)


# ------------------------------------------------------------------ a model with no call
_NO_CALL = re.compile(r"Model (?P<cls>\w+) does not have a `call\(\)` method implemented")


def _layers_made_in_init(cls: type) -> list[str]:
    """``self.<name> = <...>(...)`` in the class's ``__init__``, in order (the layers the
    class makes), read from its source."""
    try:
        init = type.__dict__["__dict__"].__get__(cls).get("__init__")
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except Exception:
        return []
    names = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == "self"
            and isinstance(node.value, ast.Call)
        ):
            names.append(node.targets[0].attr)
    return names


# The step method each Keras call runs: a class overriding ``train_step`` alone still runs
# Keras's own step (which calls the model) for the others.
_STEP_OF_CALL = {"evaluate": "test_step", "predict": "predict_step", "fit": "train_step"}


def _read_no_call(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    name = error.group("cls")
    cls: Any = context.namespace.get(name)
    if not isinstance(cls, type):
        return None
    own = type.__dict__["__dict__"].__get__(cls)
    call = line.call
    method = (
        call.func.attr
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        else None
    )
    step = _STEP_OF_CALL.get(method or "")
    if step and step != "train_step" and "train_step" in own and step not in own:
        # The learner wrote the training step only: the other call runs Keras's own step.
        receiver = line.frame.segment(call.func.value) if isinstance(call, ast.Call) else None
        shown = code(f"{receiver}.{method}(...)") if receiver else f"`{method}`"
        doing = (
            "computing the same losses as `train_step` without the tape and the optimizer "
            "update, and returning the dict of their values"
            if step == "test_step"
            else "returning what the model's parts produce for the batch"
        )
        return Finding(
            f"`{name}` overrides `train_step` (what fit runs) but not `{step}`: {shown} runs "
            f"Keras's own `{step}`, which calls the model itself (`self(x)`, its `call`, which "
            f"`{name}` does not define). Define `{step}(self, data)` in `{name}`, {doing}; or "
            "compute those values by hand with the model's parts.",
            None,
        )
    rule = (
        f"`{name}` extends `keras.Model` but defines no `call(self, inputs)`: `call` is where "
        "a subclassed model says how its layers turn the inputs into the outputs, and fit, "
        "evaluate, predict and `model(x)` all run it"
    )
    layers = _layers_of(_layers_made_in_init(cls), call, line, context)
    if not layers or len(layers) > 6:
        return Finding(rule + ".", None)
    steps = "; ".join(f"x = self.{layer}(x)" for layer in layers)
    fix = f"def call(self, inputs): x = inputs; {steps}; return x"
    rule += (
        f". If the layers made in `__init__` ({', '.join(f'`self.{n}`' for n in layers)}) "
        "apply one after the other, add to the class"
    )
    return Finding(rule + ".", code(fix))


def _layers_of(
    names: list[str], call: ast.expr | None, line: FailingLine, context: ErrorContext
) -> list[str]:
    """Of the attributes ``__init__`` sets, those the model object of the failing call
    holds as Keras layers (a metric tracker is not a step of ``call``); all of them when
    the object is not known."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return names
    found, model = value_of(call.func.value, line.frame, context)
    if not found or value_kind(model) != "model":
        return names
    kept = []
    for name in names:
        held, layer = instance_attribute(model, name)
        if held and value_kind(layer) in ("layer", "model"):
            kept.append(name)
    return kept


NO_CALL = ErrorFamily(
    "a subclassed model with no call method",
    messages=(Message(_NO_CALL),),
    read=_read_no_call,
    section=KERAS_SECTION,
)


# ------------------------------------------------------------------ one example as a dict
_DICT_DATA = re.compile(r"Unrecognized data type: x=\{")


def _read_dict_of_values(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``model.predict({"age": 30.0, "score": 0.5})``: one example's values by input
    name, each a Python number or string, where the model takes a batch of each."""
    del error
    call = line.call
    if not (isinstance(call, ast.Call) and call.args):
        return None
    x_node = call.args[0]
    found, x = value_of(x_node, line.frame, context)
    if isinstance(x_node, ast.Dict):
        values = list(x_node.values)
        if not values or not all(isinstance(v, ast.Constant) for v in values):
            return None
    elif not (found and type(x) is dict and x):
        return None
    elif not all(type(v) in (int, float, str, bool) for v in list(x.values())[:50]):
        return None
    numpy = context.module_alias("numpy", "np")
    written = line.frame.segment(x_node) or "the inputs"
    rule = (
        f"{code(written)} gives each named input one Python value: one example, while the "
        "model takes a batch for every input (an array whose first axis counts the "
        "examples). Wrap each value in a batch of one"
    )
    if isinstance(x_node, ast.Dict):
        parts = []
        for key, value in zip(x_node.keys, x_node.values, strict=True):
            key_source = line.frame.segment(key) if key is not None else None
            value_source = line.frame.segment(value)
            if not key_source or not value_source:
                return Finding(rule + ".", None)
            # NumPy makes a string a fixed-width unicode array, a dtype Keras refuses;
            # ``dtype=object`` keeps Python strings, which Keras reads as tf.string.
            text = isinstance(value, ast.Constant) and type(value.value) is str
            made = f"{numpy}.array([{value_source}]{', dtype=object' if text else ''})"
            parts.append(f"{key_source}: {made}")
        replacement = "{" + ", ".join(parts) + "}"
    elif any(type(v) is str for v in list(x.values())[:50]):
        replacement = (
            f"{{name: {numpy}.array([value], dtype=object if isinstance(value, str) else None) "
            f"for name, value in {written}.items()}}"
        )
    else:
        replacement = f"{{name: {numpy}.array([value]) for name, value in {written}.items()}}"
    statement = line.statement
    fixed = rewrite(line.frame, statement, x_node, replacement) if statement else None
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


DICT_OF_VALUES = ErrorFamily(
    "one example's values by input name given as the data",
    messages=(Message(_DICT_DATA),),
    read=_read_dict_of_values,
    section=KERAS_SECTION,
)


# ------------------------------------------------------------------ a partial restore
_UNRESOLVED = re.compile(r"Unresolved object in checkpoint \(root\)\.(?P<path>[\w.]+)")


def _restored_into(status: ast.expr, line: FailingLine) -> str | None:
    """``weights_only`` of ``status = weights_only.restore(...)`` before the failing line
    in its cell (or on it: ``ckpt.restore(path).assert_consumed()``)."""
    if isinstance(status, ast.Call) and isinstance(status.func, ast.Attribute):
        return line.frame.segment(status.func.value) if status.func.attr == "restore" else None
    tree = line.frame.tree()
    if not isinstance(status, ast.Name) or tree is None:
        return None
    for node in reversed(tree.body):
        if (
            isinstance(node, ast.Assign)
            and node.lineno < line.frame.position.line
            and any(isinstance(t, ast.Name) and t.id == status.id for t in node.targets)
        ):
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "restore"
            ):
                return line.frame.segment(value.func.value)
            return None
    return None


def _saved_roots(status: ast.expr, line: FailingLine, context: ErrorContext) -> list[str]:
    """The names the checkpoint's root saved its objects under (``model``, ``optimizer``,
    ``step``), read from the restore status's object graph (never from the disk); empty
    when the status is not a plain name holding TensorFlow's load status."""
    if not isinstance(status, ast.Name):
        return []
    found, held = context.lookup(status.id, line.frame)
    if not found or type(held).__name__ != "CheckpointLoadStatus":
        return []
    try:
        coordinator = vars(held).get("_checkpoint")
        proto = vars(coordinator).get("object_graph_proto") if coordinator is not None else None
        names = [child.local_name for child in proto.nodes[0].children] if proto else []
    except Exception:
        return []
    # save_counter is Checkpoint's own, restored into any Checkpoint.
    return [n for n in names[:50] if type(n) is str and n != "save_counter"]


def _given_roots(restored: str | None, line: FailingLine, context: ErrorContext) -> set[str] | None:
    """The names the Checkpoint restored into was given: its keywords when the call is
    written there (``tf.train.Checkpoint(model=net)``), its attributes when it is a name."""
    if not restored:
        return None
    try:
        node = ast.parse(restored, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call):
        return {k.arg for k in node.keywords if k.arg}
    if isinstance(node, ast.Name):
        found, held = context.lookup(node.id, line.frame)
        if found and type(held).__name__ == "Checkpoint":
            try:
                return {k for k in vars(held) if type(k) is str and not k.startswith("_")}
            except TypeError:
                return None
    return None


def _read_unresolved(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "assert_consumed"
    ):
        return None
    path = error.group("path")
    root = path.split(".", 1)[0]
    restored = _restored_into(call.func.value, line)
    into = (
        f"{code(restored)}, the checkpoint you restored into,"
        if restored
        else ("the checkpoint you restored into")
    )
    # Every saved object the restore left out, not only the first the error names: a
    # teacher says the optimizer is in there too.
    given = _given_roots(restored, line, context)
    saved = _saved_roots(call.func.value, line, context)
    missing = [n for n in saved if given is not None and n not in given]
    if len(missing) > 1 and root in missing:
        held = " and ".join(f"`{n}`" for n in missing)
        under = ", ".join(f"`{n}=`" for n in missing)
        rule = (
            f"The checkpoint holds {held} (saved under {under}), and {into} has no object "
            f"for them: `assert_consumed()` demands that every saved value find its object. "
            f"Restore into a `tf.train.Checkpoint` with the same objects ({under} too), or, "
            "to check only the objects you gave, use `assert_existing_objects_matched()`"
        )
    else:
        rule = (
            f"The checkpoint holds `{path}` (saved under `{root}=`), and {into} "
            f"has no object for it: `assert_consumed()` demands that every saved "
            f"value find its object. Restore into a `tf.train.Checkpoint` with the same "
            f"objects (`{root}=` too), or, to check only the objects you gave, use "
            "`assert_existing_objects_matched()`"
        )
    owner = line.frame.segment(call.func.value)
    statement = line.statement
    fixed = (
        rewrite(line.frame, statement, call, f"{owner}.assert_existing_objects_matched()")
        if owner and statement
        else None
    )
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


UNRESOLVED_CHECKPOINT = ErrorFamily(
    "a partial checkpoint restore asserted to be complete",
    messages=(Message(_UNRESOLVED),),
    exception_type="AssertionError",
    read=_read_unresolved,
    section="training-loop",
)


# ------------------------------------------------- class_weight with several outputs
_CLASS_WEIGHT_OUTPUTS = re.compile(
    r"`class_weight` is only supported for Models with a single output"
)


def _integer_labels(node: ast.expr, line: FailingLine) -> bool:
    """Whether ``node`` names an array or tensor of integers (class labels), as the
    failing line's operands describe it."""
    source = line.frame.segment(node)
    operand = next((o for o in line.operands if o.source == source), None)
    dtype = operand.dtype if operand is not None else None
    return (
        operand is not None
        and operand.kind in ("array", "tensor")
        and bool(dtype and dtype.startswith(("int", "uint")))
    )


def _read_class_weight_outputs(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``fit(x, [y_a, y_b], class_weight=cw)`` on a model of several outputs: the class
    weights turned into per-example weights for the output whose targets are class ids
    (``np.array([cw[c] for c in y_b])``) and ones for the others, as ``sample_weight``."""
    del error
    call = line.call
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    weights = next((k for k in call.keywords if k.arg == "class_weight"), None)
    targets = call.args[1] if len(call.args) > 1 else None
    if targets is None:
        targets = next((k.value for k in call.keywords if k.arg == "y"), None)
    if weights is None:
        return None
    weights_source = line.frame.segment(weights.value) or ""
    rule = (
        f"`class_weight` weighs the examples of ONE output by their class, and "
        f"{code(line.frame.segment(call.func.value) or 'the model')} has several outputs, "
        "so Keras cannot tell which output's classes it means. Give per-example weights "
        "instead, one array per output (`sample_weight`, in the order of the targets): "
        f"each example's class weight for the classifying output, ones for the others"
    )
    if not isinstance(targets, (ast.List, ast.Tuple)) or not weights_source:
        return Finding(rule + ".", None)
    classifying = [
        element
        for element in targets.elts
        if isinstance(element, (ast.Name, ast.Attribute)) and _integer_labels(element, line)
    ]
    if len(classifying) != 1 or "\n" in weights_source:
        return Finding(rule + ".", None)
    labels = line.frame.segment(classifying[0]) or ""
    np = context.module_alias("numpy", "np")
    per_output = [
        f"{np}.array([{weights_source}[c] for c in {labels}])"
        if element is classifying[0]
        else f"{np}.ones(len({labels}))"
        for element in targets.elts
    ]
    replacement = f"sample_weight=[{', '.join(per_output)}]"
    fixed = rewrite(line.frame, line.statement or call, weights, replacement)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


CLASS_WEIGHT_OUTPUTS = ErrorFamily(
    "class_weight given to a model of several outputs",
    messages=(Message(_CLASS_WEIGHT_OUTPUTS),),
    exception_type="ValueError",
    read=_read_class_weight_outputs,
    section="labels-and-loss",
)
