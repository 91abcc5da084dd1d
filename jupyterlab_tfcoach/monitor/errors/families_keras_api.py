"""Error families from using Keras's model API in the wrong order or with the wrong
values (see ``family_record.py`` for a family's shape): mistakes learners make in their
first months that Keras 3 reports with a message of its own, not a shape.

- a Layer, Model or ``tf.Module`` subclass whose ``__init__`` never calls
  ``super().__init__()`` (Keras 3 accepts attributes set *before* the call; it refuses
  the layer at its first call when the call is missing);
- ``fit``/``evaluate``/``train_on_batch`` before ``compile`` (or on a model rebuilt after
  its ``compile`` ran, or compiled under another name);
- ``fit(ds, validation_split=...)`` with a dataset or a generator;
- assigning to a read-only property (``model.weights = ...``, ``model.layers = ...``);
- ``get_layer`` with a name the model does not have;
- a custom ``train_step``/``test_step`` that returns a tensor or a list, not a dict;
- a save path whose extension Keras 3 refuses (``ModelCheckpoint``, ``save_weights``,
  ``save``);
- a string Keras cannot interpret as a loss, metric, optimizer, activation, initializer,
  regularizer or constraint;
- a ``keras.Input(shape=...)`` that counts the examples (``shape=x_train.shape``): the
  missing-axis explainer (``shapes.py``) asks ``input_counts_examples`` first and leaves
  such an error to this family, whose fix is the Input's shape without its first axis.

Everything is read from the message, the failing line and the cells' source (``ast``),
and from what Keras itself holds (the names in its registries, the class dictionaries
of the user's class, read through ``type``'s own slots): no user code runs.
"""

from __future__ import annotations

import abc
import ast
import difflib
import dis
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    SourceCell,
    assignments_in_cells,
    cell_frame,
    error_cells,
    string_literal,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    class_mro,
    code,
    library_class,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
)
from jupyterlab_tfcoach.monitor.errors.origins import assigned_string_fix, string_part
from jupyterlab_tfcoach.monitor.stored_state import (
    is_library_class,
    keras_sublayers,
    library_attribute,
    stored,
)
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import reshuffled_each_epoch

_type_name = type.__dict__["__name__"].__get__
_type_mro = type.__dict__["__mro__"].__get__
_class_namespace = type.__dict__["__dict__"].__get__

_MAX_NAMES_SHOWN = 12


# ------------------------------------------------------------------ shared reading
def method_call_on_line(line: FailingLine, methods: tuple[str, ...]) -> ast.Call | None:
    """The ``<x>.<method>(...)`` call on the failing statement, for one of ``methods``."""
    parts: list[ast.AST] = list(line.frame.header())
    if line.call is not None:
        parts.insert(0, line.call)
    for part in parts:
        for node in ast.walk(part):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in methods
            ):
                return node
    return None


def call_argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    if len(call.args) > position and not any(
        isinstance(arg, ast.Starred) for arg in call.args[: position + 1]
    ):
        return call.args[position]
    return None


def one_line(text: str | None) -> str | None:
    return text if text and "\n" not in text else None


def _user_class(value: Any) -> type | None:
    """``type(value)`` when it is a class the user wrote (not TensorFlow's or Keras's)."""
    if not class_mro(value):
        return None
    cls = type(value)
    return None if is_library_class(cls) else cls


def _class_def(name: str, context: ErrorContext) -> tuple[SourceCell, ast.ClassDef] | None:
    """The newest ``class <name>(...):`` in the cells."""
    for cell in error_cells(context):
        if f"class {name}" not in cell.source:
            continue
        tree = cell.tree()
        if tree is None:
            continue
        found = [
            node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == name
        ]
        if found:
            return cell, found[-1]
    return None


def _method_def(class_def: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next(
        (
            node
            for node in class_def.body
            if isinstance(node, ast.FunctionDef) and node.name == name
        ),
        None,
    )


# ------------------------------------------------------------------ super().__init__()
_FORGOT_SUPER = re.compile(
    r"In layer '(?P<cls>\w+)', you forgot to call `super\(\)\.__init__\(\)` as the first "
    r"statement in the `__init__\(\)` method"
)
# ``tf.Module.__init__`` sets the name and name scope; without it they are missing.
_MODULE_NAME = re.compile(
    r"'(?P<cls>\w+)' object has no attribute '(?P<attribute>_name|_scope_name|_name_scope)'"
)


# Keras 3 makes a model or layer whose ``__init__`` skipped the base's: the first method
# that needs the base's state then fails on one of its private attributes
# (``compile``: ``_dtype_policy``, ``summary``: ``_trainable``), far from the cause. Told
# only when the class's own ``__init__`` is found and calls no base ``__init__``.
_HALF_MADE = re.compile(r"'(?P<cls>\w+)' object has no attribute '(?P<attribute>_\w+)'")
# Any other attribute (``name`` of a ``keras.losses.Loss``, ``params`` of a Callback):
# told only when a TensorFlow/Keras base class of the user's class sets it in its own
# ``__init__``, which the class's ``__init__`` never calls.
_UNSET_ATTRIBUTE = re.compile(
    r"'(?P<cls>\w+)' object has no attribute '(?P<attribute>[A-Za-z]\w*)'"
)
_MAX_CLASSES_READ = 5000
# Keras's own message for a metric (or another tracked object) whose ``__init__`` uses
# the base's state first: it names no class, the failing line's enclosing class is it.
_NO_SUPER_CALL = re.compile(
    r"You forgot to call `super\(\)\.__init__\(\)` in the `__init__\(\)` method"
)


def _enclosing_class(line: FailingLine) -> str | None:
    """The class whose method holds the failing line, in the failing cell."""
    tree = line.frame.tree()
    at = line.frame.position.line
    if tree is None:
        return None
    found = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.lineno <= at <= (node.end_lineno or 0)
    ]
    return found[-1] if found else None


def _user_class_named(name: str, context: ErrorContext) -> type | None:
    """The class named ``name`` in the user's namespace that derives from a TensorFlow or
    Keras class (its metaclass ``type``, ``abc.ABCMeta`` or the library's own)."""
    for count, value in enumerate(context.namespace.values()):
        if count > _MAX_CLASSES_READ:
            break
        metaclass = type(value)
        if metaclass not in (type, abc.ABCMeta) and not is_library_class(metaclass):
            continue
        if not issubclass(metaclass, type):
            continue
        try:
            if _type_name(value) != name or is_library_class(value):
                continue
            if any(is_library_class(base) for base in _type_mro(value)[1:]):
                return value
        except Exception:
            continue
    return None


def _base_setting(cls: type, attribute: str) -> type | None:
    """The first TensorFlow/Keras class of ``cls``'s MRO whose own ``__init__`` stores
    ``self.<attribute>`` (read from its bytecode, never run)."""
    for klass in _type_mro(cls)[1:]:
        if not is_library_class(klass):
            continue
        init = _class_namespace(klass).get("__init__")
        code = getattr(init, "__code__", None) if type(init).__name__ == "function" else None
        if code is None:
            continue
        try:
            stores = any(
                instruction.opname == "STORE_ATTR" and instruction.argval == attribute
                for instruction in dis.get_instructions(code)
            )
        except Exception:
            continue
        if stores:
            return klass
    return None


def _library_name(cls: type) -> str:
    """``Keras's `Loss``` for a Keras class, ``TensorFlow's `Module``` for TensorFlow's."""
    module = getattr(cls, "__module__", "")
    owner = "Keras's" if type(module) is str and module.startswith("keras") else "TensorFlow's"
    return f"{owner} `{_type_name(cls)}`"


def _calls_super_init(function: ast.FunctionDef) -> bool:
    """``super().__init__(...)`` or ``Base.__init__(self, ...)`` anywhere in ``function``."""
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
        ):
            owner = node.func.value
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name):
                if owner.func.id == "super":
                    return True
            if isinstance(owner, (ast.Name, ast.Attribute)) and node.args:
                return True
    return False


def class_in_namespace(name: str, context: ErrorContext, kinds: tuple[str, ...]) -> bool:
    """Whether a class named ``name`` in the user's namespace derives from one of the
    library classes ``kinds`` (``layer``, ``module``)."""
    bases = [library_class(kind) for kind in kinds]
    for count, value in enumerate(context.namespace.values()):
        if count > 5000:
            break
        metaclass = type(value)
        if metaclass not in (type, abc.ABCMeta) and not is_library_class(metaclass):
            continue
        if not issubclass(metaclass, type):
            continue
        try:
            if _type_name(value) != name:
                continue
            mro = _type_mro(value)
        except Exception:
            continue
        if any(base is not None and base in mro for base in bases):
            return True
    return False


def _read_forgot_super(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.matched(_NO_SUPER_CALL):
        enclosing = _enclosing_class(line)
        return _unset_attribute(enclosing, None, context) if enclosing else None
    name = error.group("cls")
    if error.matched(_UNSET_ATTRIBUTE):
        return _unset_attribute(name, error.group("attribute"), context)
    half_made = error.matched(_HALF_MADE)
    if half_made:
        kinds: tuple[str, ...] = ("layer", "module")
    else:
        kinds = ("module",) if error.matched(_MODULE_NAME) else ("layer",)
    if not class_in_namespace(name, context, kinds):
        # A loss, metric or callback: no layer, but a library class all the same.
        return _unset_attribute(name, error.group("attribute"), context) if half_made else None
    if half_made:
        found_def = _class_def(name, context)
        init_def = _method_def(found_def[1], "__init__") if found_def else None
        if init_def is None or _calls_super_init(init_def):
            return None  # the attribute is missing for another reason
        kinds = ("module",) if class_in_namespace(name, context, ("module",)) else ("layer",)
    base = "tf.Module" if kinds == ("module",) else "Keras layer or model"
    rule = (
        f"`{name}` is a {base} subclass whose `__init__` never calls `super().__init__()`: "
        "the base class sets up its own state there (its name and, for a Keras layer, its "
        "dtype and the state every call checks), so the object is only half made"
    )
    found = _class_def(name, context)
    if found is None:
        return Finding(rule + ".", None)
    cell, class_def = found
    init = _method_def(class_def, "__init__")
    if init is None or _calls_super_init(init):
        return Finding(rule + ".", None)
    where = f"line {init.lineno} of {cell.label}"
    keywords = init.args.kwarg.arg if init.args.kwarg is not None else None
    call = f"super().__init__(**{keywords})" if keywords else "super().__init__()"
    rule += f" (`def __init__` of `{name}`, {where})"
    fix = (
        f"as the first statement of `{name}.__init__`, before its attributes (then re-run "
        f"the cell defining `{name}` and make the object again), {code(call)}"
    )
    return Finding(rule + ".", fix)


def _unset_attribute(name: str, attribute: str | None, context: ErrorContext) -> Finding | None:
    """A user subclass of any TensorFlow/Keras class (a loss, a metric, a callback...)
    lacking an attribute its library base sets in the ``__init__`` the subclass's own
    ``__init__`` never calls (``attribute`` None: Keras said so, naming no attribute)."""
    cls = _user_class_named(name, context)
    base: type | None = None
    if cls is not None and attribute is not None:
        base = _base_setting(cls, attribute)
    elif cls is not None:
        base = next((klass for klass in _type_mro(cls)[1:] if is_library_class(klass)), None)
    found = _class_def(name, context)
    init = _method_def(found[1], "__init__") if found is not None else None
    if cls is None or base is None or found is None or init is None or _calls_super_init(init):
        return None
    cell, _ = found
    base_name = _library_name(base)
    keywords = init.args.kwarg.arg if init.args.kwarg is not None else None
    call = f"super().__init__(**{keywords})" if keywords else "super().__init__()"
    rule = (
        f"`{name}` is a subclass of {base_name}, and its `__init__` (line {init.lineno} of "
        f"{cell.label}) never calls `super().__init__()`: "
    )
    if attribute is not None:
        rule += (
            f"`{_type_name(base)}.__init__` is where `{attribute}` is set (with the rest of "
            f"the state the library reads), so the object has no `{attribute}` and the "
            "library fails when it reads it, far from the class."
        )
    else:
        rule += (
            f"`{_type_name(base)}.__init__` sets up the state Keras keeps for the object "
            "(its name, the tracking of its weights), which the method called here needs."
        )
    fix = (
        f"as the first statement of `{name}.__init__`, before its attributes (then re-run "
        f"the cell defining `{name}` and make the object again), {code(call)}"
    )
    return Finding(rule, fix)


FORGOT_SUPER = ErrorFamily(
    "a subclass whose init never calls the base class init",
    messages=(
        Message(_FORGOT_SUPER),
        Message(_MODULE_NAME),
        Message(_HALF_MADE),
        Message(_UNSET_ATTRIBUTE),
        Message(_NO_SUPER_CALL),
    ),
    read=_read_forgot_super,
    section="custom-layers",
)


# ------------------------------------------------------------------ fit before compile
_NOT_COMPILED = re.compile(r"You must call `compile\(\)` before using the model")
TRAINING_METHODS = ("fit", "evaluate", "train_on_batch", "test_on_batch")


def compile_calls(context: ErrorContext) -> list[tuple[SourceCell, ast.Call, str]]:
    """``<name>.compile(...)`` calls in the cells (newest first), with their receiver."""
    found = []
    for cell in error_cells(context):
        if ".compile(" not in cell.source:
            continue
        tree = cell.tree()
        if tree is None:
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
        ]
        for node in sorted(calls, key=lambda n: (n.lineno, n.col_offset), reverse=True):
            receiver = cell.segment(node.func.value)  # type: ignore[attr-defined]
            if receiver:
                found.append((cell, node, receiver))
    return found


def training_call_on_line(line: FailingLine) -> tuple[ast.Call, str, str] | None:
    """The ``<model>.fit/evaluate/train_on_batch/test_on_batch(...)`` call on the failing
    statement, with the model (on one line) and the method as written."""
    call = method_call_on_line(line, TRAINING_METHODS)
    if call is None:
        return None
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    method = call.func.attr  # type: ignore[attr-defined]
    if not model or "\n" in model:
        return None
    return call, model, method


def default_loss_for(call: ast.Call, line: FailingLine, context: ErrorContext) -> str | None:
    """A loss for the labels the call got: float labels -> ``mse``, one integer class
    number per example -> ``sparse_categorical_crossentropy``; None otherwise."""
    labels = call_argument(call, 1, "y")
    if labels is None:
        return None
    found, value = value_of(labels, line.frame, context)
    if not found or value_kind(value) not in ("array", "tensor", "variable"):
        return None
    from jupyterlab_tfcoach.monitor.errors.failing_line import describe

    described = describe("y", value)
    if described is None or described.dtype is None or described.shape is None:
        return None
    if described.dtype.startswith("float"):
        return "mse"
    if described.dtype.startswith(("int", "uint")) and len(described.shape) == 1:
        return "sparse_categorical_crossentropy"
    return None


def _read_not_compiled(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    training = training_call_on_line(line)
    if training is None:
        return None
    call, model, method = training
    rule = (
        f"`{model}.{method}` needs the optimizer and the loss `{model}.compile(...)` gives "
        f"the model, and `{model}` was never compiled"
    )
    compiled = compile_calls(context)
    same = [found for found in compiled if found[2] == model]
    if same:
        cell, node, _ = same[0]
        shown = one_line(cell.segment(node))
        running = context.frames()[-1]
        if shown and cell.source == running.source() and node.lineno > running.position.line:
            rule = (
                f"`{model}.{method}` needs a compiled model, and {code(shown)} (line "
                f"{node.lineno} of this cell) only runs after it: compile before training"
            )
            return Finding(rule + ".", f"compile first, then train, {code(shown)}")
        if shown:
            rule = (
                f"`{model}.{method}` needs a compiled model: {code(shown)} in {cell.label} "
                f"compiled the model `{model}` named then, and `{model}` now holds a model "
                "object that was not compiled (the cell that builds it ran again after that "
                "compile, or the compile did not run)"
            )
            return Finding(rule + ".", f"compile the new model again, {code(shown)}")
    loaded = _loaded_without_compile(model, context)
    if loaded is not None:
        rule += (
            f": {code(loaded)} loaded it with `compile=False`, which leaves the saved "
            "optimizer and loss behind; load it without that argument to get them back"
        )
        restored = re.sub(r",\s*compile\s*=\s*False", "", loaded, count=1)
        return Finding(rule + ".", code(restored) if restored != loaded else None)
    # Another model's compile at the top of a cell (not ``self.compile`` in a method, whose
    # arguments may be the method's own names).
    # Only a compile that gives what this call needs is copied: a loss (a distiller
    # compiled with an optimizer alone computes its loss in its own train_step), and, when
    # the result is unpacked (``loss, acc = m.evaluate(...)``), as many metrics as names.
    wanted = _unpacked_names(line)
    others = [
        found
        for found in compiled
        if found[2] not in (model, "self")
        and found[2].isidentifier()
        and _gives_results(found[1], wanted)
    ]
    if others:
        cell, node, other = others[0]
        shown = _compile_on_one_line(cell, node, other)
        fixed = _compile_on_one_line(cell, node, model)
        if shown and fixed:
            rule += f"; {code(shown)} in {cell.label} compiled `{other}`, another object"
            return Finding(rule + ".", f"compile `{model}` itself, {code(fixed)}")
    loss = default_loss_for(call, line, context)
    metrics = ""
    if wanted == 2 and loss == "sparse_categorical_crossentropy":
        metrics = ', metrics=["accuracy"]'
    elif wanted is not None and wanted != 1:
        loss = None  # which metrics the names stand for is the learner's to say
    if loss is None:
        return Finding(
            rule
            + ": call it first with an optimizer, a loss for your labels"
            + (" and the metrics the call's results are unpacked into" if wanted else "")
            + ".",
            None,
        )
    fix = f'{model}.compile(optimizer="adam", loss="{loss}"{metrics})'
    return Finding(rule + ".", f"compile it first (then run this line again), {code(fix)}")


def _compile_on_one_line(cell: SourceCell, node: ast.Call, receiver: str) -> str | None:
    """``<receiver>.compile(<the call's arguments as written>)`` on one line, whatever
    lines the call was written over."""
    parts: list[str] = []
    for argument in node.args:
        parts.append(_joined(cell.segment(argument)) or "")
    for keyword in node.keywords:
        value = _joined(cell.segment(keyword.value)) or ""
        parts.append(f"{keyword.arg}={value}" if keyword.arg else f"**{value}")
    if not all(parts) and parts:
        return None
    return f"{receiver}.compile({', '.join(parts)})"


def _joined(text: str | None) -> str | None:
    """A call written over several lines, on one (its arguments' line breaks and
    indentation become spaces); None when a comment or a multi-line string is in it."""
    if not text or "#" in text or '"""' in text or "'''" in text:
        return None
    joined = re.sub(r"([(\[{])\s*\n\s*", r"\1", text)
    joined = re.sub(r"\s*\n\s*([)\]}])", r"\1", joined)
    joined = re.sub(r"\s*\n\s*", " ", joined)
    try:
        ast.parse(joined)
    except SyntaxError:
        return None
    return joined


def _unpacked_names(line: FailingLine) -> int | None:
    """How many names the failing statement unpacks the call's result into (``loss, acc =
    m.evaluate(...)`` -> 2); None when it is not unpacked."""
    statement = line.statement
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            return len(target.elts)
    return None


def _gives_results(compile_call: ast.AST, wanted: int | None) -> bool:
    """Whether a ``compile(...)`` gives a loss, and the metrics ``wanted`` names need."""
    if not isinstance(compile_call, ast.Call):
        return False
    keywords = {keyword.arg: keyword.value for keyword in compile_call.keywords}
    if "loss" not in keywords and len(compile_call.args) < 2:
        return False
    if wanted is None or wanted == 1:
        return True
    metrics = keywords.get("metrics", compile_call.args[2] if len(compile_call.args) > 2 else None)
    return isinstance(metrics, (ast.List, ast.Tuple)) and len(metrics.elts) + 1 == wanted


def _loaded_without_compile(model: str, context: ErrorContext) -> str | None:
    """``m = keras.models.load_model(path, compile=False)``, the newest assignment of the
    model's name in the cells, as written."""
    if not model.isidentifier():
        return None
    for cell, statement in assignments_in_cells(model, context):
        value = statement.value
        if (
            isinstance(value, ast.Call)
            and (getattr(value.func, "attr", None) or getattr(value.func, "id", None))
            == "load_model"
            and any(
                k.arg == "compile" and isinstance(k.value, ast.Constant) and k.value.value is False
                for k in value.keywords
            )
        ):
            return one_line(cell.segment(statement))
        break
    return None


NOT_COMPILED = ErrorFamily(
    "training or evaluating a model that was never compiled",
    messages=(Message(_NOT_COMPILED),),
    read=_read_not_compiled,
    section="keras-model-api",
)


# ------------------------------------------------------------------ validation_split
_VALIDATION_SPLIT = re.compile(
    r"Argument `validation_split` is only supported for tensors or NumPy arrays"
)


def _read_validation_split(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = method_call_on_line(line, ("fit",))
    if call is None:
        return None
    data = call_argument(call, 0, "x")
    split = next((k.value for k in call.keywords if k.arg == "validation_split"), None)
    if data is None or split is None:
        return None
    data_source = segment_of(line, data)
    found, value = value_of(data, line.frame, context)
    dataset = found and value_kind(value) == "dataset"
    rule = (
        f"`validation_split` cuts the last part off arrays; {code(data_source)} is "
        f"{'a tf.data.Dataset' if dataset else 'not an array (a generator or a dataset)'}, "
        "which Keras cannot cut. Give `fit` a separate validation set with "
        "`validation_data=`"
    )
    fraction = split.value if isinstance(split, ast.Constant) else None
    if not (
        dataset and isinstance(data, ast.Name) and type(fraction) is float and 0.0 < fraction < 1.0
    ):
        return Finding(rule + ".", None)
    name = data.id
    statement = line.statement if line.statement is not None else call
    validation = _validation_dataset(value, context)
    if validation is not None:
        rule += (
            f": {code(validation)} in your notebook is a tf.data.Dataset kept for validation; "
            "give it to fit in place of the split"
        )
        fixed = _fit_without_split(call, line, statement, name, f"validation_data={validation}")
        return Finding(rule + ".", code(fixed) if fixed else None)
    if reshuffled_each_epoch(value):
        return Finding(
            rule + f". {code(name)} is shuffled again every epoch (`shuffle` reshuffles each "
            f"iteration by default), so `{name}.take(n)` and `{name}.skip(n)` would hold "
            "different elements each epoch: validation data would be trained on. Split "
            "where the dataset is made, before its `shuffle` (or split the arrays first), "
            "and give the validation part to `validation_data=`.",
            None,
        )
    batches = _int_of(library_attribute(value, "cardinality"))
    if batches is None or batches <= 0:
        return Finding(
            rule + f". The number of elements of {code(name)} is unknown to tf.data (its "
            "cardinality is -2 after a `filter` or a generator, -1 when it repeats forever), "
            "so a split by `take`/`skip` cannot be sized from it: keep a validation set "
            "apart where the data is made.",
            None,
        )
    held_out = max(1, int(fraction * batches))
    if held_out >= batches:
        return Finding(rule + ".", None)
    rule += (
        f": {code(name)} has {batches} elements (batches, once batched); `{name}.take("
        f"{held_out})` keeps the first {held_out} ({fraction} of them) for validation and "
        f"`{name}.skip({held_out})` the rest for training"
    )
    fixed = _fit_without_split(
        call,
        line,
        statement,
        f"{name}.skip({held_out})",
        f"validation_data={name}.take({held_out})",
    )
    return Finding(rule + ".", code(fixed) if fixed else None)


def _fit_without_split(
    call: ast.Call, line: FailingLine, statement: ast.AST, data: str, validation: str
) -> str | None:
    """The fit call with ``data`` first and ``validation`` in place of validation_split."""
    keywords = [k for k in call.keywords if k.arg not in ("validation_split", "x")]
    pieces = [data, *(segment_of(line, arg) for arg in call.args[1:]), validation]
    pieces += [segment_of(line, k) for k in keywords]
    if not all(pieces):
        return None
    new_call = f"{segment_of(line, call.func)}({', '.join(pieces)})"
    return one_line(rewrite(line.frame, statement, call, new_call))


def _validation_dataset(training: Any, context: ErrorContext) -> str | None:
    """A name of the notebook holding another tf.data dataset, named for validation."""
    for name, held in list(context.namespace.items())[:_MAX_NAMESPACE]:
        if (
            type(name) is str
            and "val" in name.lower()
            and not name.startswith("_")
            and name.isidentifier()
            and held is not training
            and value_kind(held) == "dataset"
        ):
            return name
    return None


def _int_of(method: Any) -> int | None:
    """A dataset's ``cardinality()`` as an int (a tf.data op on the dataset's graph, no trace)."""
    if method is None:
        return None
    try:
        value = method().numpy()
        return int(value) if getattr(value, "shape", None) == () else None
    except Exception:
        return None


_MAX_NAMESPACE = 5000


VALIDATION_SPLIT = ErrorFamily(
    "validation_split with a dataset or a generator",
    messages=(Message(_VALIDATION_SPLIT),),
    read=_read_validation_split,
    section="keras-validation-data",
)


# ------------------------------------------------------------------ read-only properties
# The lists of variables a Keras layer or model computes when read (one string, split:
# no constant here spells a course section id).
_WEIGHT_LISTS = tuple(
    f"{prefix}{kind}"
    for kind in "weights variables".split()
    for prefix in ("", "trainable_", "non_trainable_")
)
_NO_SETTER = re.compile(
    r"property '(?P<attribute>" + "|".join(_WEIGHT_LISTS) + r"|layers|metrics|losses)' of "
    r"'(?P<cls>\w+)' object has no setter"
)
_RESERVED_LAYERS = re.compile(r"`(?P<cls>\w+)\.layers` attribute is reserved")
# A built layer refuses the variables of the assigned list before the property would.
_STATE_LOCKED = re.compile(r"You cannot add new elements of state")


def assigns_weight_list(context: ErrorContext) -> bool:
    """Whether the failing statement assigns to a layer's list of weights
    (``dense.trainable_weights = ...``): the state-after-build explainer (``keras.py``)
    leaves that error to this family."""
    try:
        frames = context.frames()
        statement = frames[0].statement() if frames else None
    except Exception:
        return False
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Attribute)
        and statement.targets[0].attr in _WEIGHT_LISTS
    )


def _assigned(line: FailingLine) -> tuple[ast.Assign, ast.Attribute] | None:
    statement = line.statement
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Attribute)
    ):
        return statement, statement.targets[0]
    return None


def _read_read_only(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    found = _assigned(line)
    if found is None:
        return None
    statement, target = found
    if error.matched(_STATE_LOCKED):
        attribute = target.attr
        if attribute not in _WEIGHT_LISTS:
            return None
    elif error.matched(_RESERVED_LAYERS):
        attribute = "layers"
    else:
        attribute = error.group("attribute")
    if target.attr != attribute:
        return None
    owner = segment_of(line, target.value)
    value = segment_of(line, statement.value)
    if not owner or not value or "\n" in value:
        return None
    keras_name = context.module_alias("keras", "keras")
    if attribute in _WEIGHT_LISTS:
        rule = (
            f"`{owner}.{attribute}` is a list Keras computes from the layers' variables each "
            "time it is read; it cannot be replaced. Change the variables' values instead: "
            f"`{owner}.set_weights(arrays)` takes one array per entry of `{owner}.weights`, "
            "in that order, and each variable has `assign`"
        )
        rhs = statement.value
        empty = isinstance(rhs, (ast.List, ast.Tuple)) and not rhs.elts
        if empty or isinstance(rhs, ast.Constant):
            return Finding(rule + ".", None)
        # A built layer refused the variables: it is as it was.
        locked = error.matched(_STATE_LOCKED)
        first = "" if locked else _rebuild_first(owner, rhs, line, context)
        if first is None:
            return Finding(rule + ".", None)
        if (
            attribute == "weights"
            and isinstance(rhs, ast.Call)
            and isinstance(rhs.func, ast.Attribute)
            and rhs.func.attr == "get_weights"
        ):
            return Finding(rule + ".", first + code(f"{owner}.set_weights({value})"))
        if (
            isinstance(rhs, ast.Attribute)
            and rhs.attr == "weights"
            and attribute == "weights"
            and (source := segment_of(line, rhs.value))
        ):
            fix = code(f"{owner}.set_weights({source}.get_weights())")
            return Finding(rule + ".", first + fix)
        loop = f"for variable, new in zip({owner}.{attribute}, {value}): variable.assign(new)"
        return Finding(rule + ".", f"{first}assign each variable its new value, {code(loop)}")
    if attribute == "layers":
        rule = f"`{owner}.layers` is the list Keras keeps of the model's layers; it is not assigned"
        if not isinstance(target.value, ast.Name) or target.value.id == "self":
            rule += (
                ": inside a subclass, keep your own list under another name (Keras tracks "
                "layers in any list attribute)"
            )
            fixed = one_line(rewrite(line.frame, statement, target, f"{owner}.layer_stack"))
            fix = (
                f"keep the list under another name, and read that name where the class "
                f"read `{owner}.layers`: {code(fixed)}"
                if fixed
                else None
            )
            return Finding(rule + ".", fix)
        rule += (
            f": `{owner}.add(layer)` and `{owner}.pop()` change a Sequential model, or build "
            "a new model from the layers you want"
        )
        rhs = statement.value
        empty = isinstance(rhs, (ast.List, ast.Tuple)) and not rhs.elts
        fix = None if empty else code(f"{owner} = {keras_name}.Sequential({value})")
        return Finding(rule + ".", fix)
    rule = (
        f"`{owner}.{attribute}` is computed by Keras from the model's parts; it is not "
        "assigned (metrics and losses are given to `compile`)"
    )
    return Finding(rule + ".", None)


def _rebuild_first(
    owner: str, rhs: ast.expr, line: FailingLine, context: ErrorContext
) -> str | None:
    """ "" when the failed assignment left the model as it was; when its value held
    variables, Keras had already tracked them as the model's own before the assignment
    failed, so the model is rebuilt first: which cell builds it (None when none does)."""
    found, value = value_of(rhs, line.frame, context)
    items = list(value)[:1000] if found and type(value) in (list, tuple) else []
    if not any(value_kind(item) in ("variable", "keras_variable") for item in items):
        return ""
    for cell in error_cells(context):
        tree = cell.tree() if f"{owner} =" in cell.source else None
        builds = [
            node
            for node in (ast.walk(tree) if tree is not None else ())
            if isinstance(node, ast.Assign)
            and any(cell.segment(target) == owner for target in node.targets)
        ]
        if builds:
            return (
                f"the failed assignment left `{owner}` tracking those variables as its own: "
                f"re-run the cell that builds it ({cell.label}, line {builds[-1].lineno}) "
                "first, then "
            )
    return None


READ_ONLY_PROPERTY = ErrorFamily(
    "assigning to a model's weights or layers list",
    messages=(Message(_NO_SETTER), Message(_RESERVED_LAYERS), Message(_STATE_LOCKED)),
    read=_read_read_only,
    section="keras-model-api",
)


# ------------------------------------------------------------------ get_layer
_NO_SUCH_LAYER = re.compile(
    r"No such layer: (?P<name>.*?)\. Existing layers are: \[(?P<names>[^\]]*)\]"
)
_NO_LAYER_INDEX = re.compile(
    r"Was asked to retrieve layer at index (?P<index>-?\d+) but model only has "
    r"(?P<count>\d+) layers"
)
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _read_no_such_layer(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = method_call_on_line(line, ("get_layer",))
    if call is None:
        return None
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    if error.matched(_NO_LAYER_INDEX):
        count = int(error.group("count"))
        rule = (
            f"`{model}` has {count} layers, indexed 0 to {count - 1} in "
            f"`{model}.layers` (a Sequential model's `keras.Input` is not one of them)"
        )
        return Finding(rule + ".", None)
    # The names Keras holds, as its message lists them (every layer, in order).
    names = _QUOTED.findall(error.group("names"))
    wanted = error.group("name")
    nested = _nested_layer(call, wanted, line, context)
    if nested is not None:
        return nested
    shown = ", ".join(f'"{name}"' for name in names[:_MAX_NAMES_SHOWN])
    more = f" and {len(names) - _MAX_NAMES_SHOWN} more" if len(names) > _MAX_NAMES_SHOWN else ""
    rule = (
        f'`{model}` has no layer named "{wanted}": its layers are named {shown}{more} '
        "(Keras names a layer when it is made, `dense`, `dense_1`, ..., unless it is given "
        '`name="..."`)'
    )
    argument = call_argument(call, 0, "name")
    close = difflib.get_close_matches(wanted, names, n=2, cutoff=0.6)
    if not names:
        rule = f"`{model}` has no layers yet"
    if (
        len(close) == 1
        and isinstance(argument, ast.Constant)
        and type(argument.value) is str
        and argument.value == wanted
    ):
        fixed = one_line(
            rewrite(
                line.frame, call, argument, string_literal(segment_of(line, argument), close[0])
            )
        )
        if fixed:
            return Finding(rule + ".", code(fixed))
    return Finding(rule + ".", None)


_MAX_NESTING = 4


def _nested_path(root: Any, wanted: str, depth: int) -> list[str] | None:
    """The names of the nested models leading to the layer named ``wanted`` under
    ``root`` (not at its top level), then ``wanted``: ``["block", "dense_in"]``."""
    if depth > _MAX_NESTING:
        return None
    for layer in keras_sublayers(root):
        name = stored(layer, "name")
        if type(name) is not str or not keras_sublayers(layer):
            continue
        inner = [stored(sub, "name") for sub in keras_sublayers(layer)]
        if wanted in inner:
            return [name, wanted]
        deeper = _nested_path(layer, wanted, depth + 1)
        if deeper is not None:
            return [name, *deeper]
    return None


def _nested_layer(
    call: ast.Call, wanted: str, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``model.get_layer("dense_in")`` for a layer inside a nested model: get_layer looks
    at the model's own layers only; the fix goes through each nested model by name."""
    found, model_value = value_of(call.func.value, line.frame, context)  # type: ignore[attr-defined]
    argument = call_argument(call, 0, "name")
    if not found or not isinstance(argument, ast.Constant) or argument.value != wanted:
        return None
    try:
        path = _nested_path(model_value, wanted, 0)
    except Exception:
        return None
    if path is None:
        return None
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    chain = model + "".join(f'.get_layer("{name}")' for name in path)
    owner = path[-2]
    rule = (
        f'"{wanted}" is not one of `{model}`\'s own layers: it is inside the nested model '
        f'"{owner}", and `get_layer` looks only at the model\'s top level. Reach it through '
        f"the nested model{'s' if len(path) > 2 else ''}, `{chain}`"
    )
    fixed = one_line(rewrite(line.frame, line.statement, call, chain)) if line.statement else None
    return Finding(rule + ".", code(fixed) if fixed else None)


NO_SUCH_LAYER = ErrorFamily(
    "get_layer with a name or index the model does not have",
    messages=(Message(_NO_SUCH_LAYER), Message(_NO_LAYER_INDEX)),
    exception_type="ValueError",
    read=_read_no_such_layer,
    section="keras-model-api",
)


# ------------------------------------------------------------------ train_step's result
_SCALAR_RESULT = re.compile(r"Cannot iterate over a scalar tensor")
_NO_ITEMS = re.compile(r"'[\w.]+' object has no attribute 'items'")
_STEP_OF = {
    "fit": "train_step",
    "train_on_batch": "train_step",
    "evaluate": "test_step",
    "test_on_batch": "test_step",
}


def _user_step_class(model: Any, step: str) -> type | None:
    """The user's class (in the model's MRO, before Keras's) that defines ``step``."""
    if _user_class(model) is None:
        return None
    for cls in class_mro(model):
        if is_library_class(cls):
            return None
        if step in _class_namespace(cls):
            return cls
    return None


def _returned(function: ast.FunctionDef) -> list[ast.Return]:
    """The ``return`` statements of ``function`` itself (not of nested functions)."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda node: node.lineno)


def _read_step_result(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = method_call_on_line(line, tuple(_STEP_OF))
    if call is None:
        return None
    step = _STEP_OF[call.func.attr]  # type: ignore[attr-defined]
    found, model = value_of(call.func.value, line.frame, context)  # type: ignore[attr-defined]
    cls = _user_step_class(model, step) if found else None
    if cls is None:
        return None
    name = _type_name(cls)
    rule = (
        f"`{name}.{step}` must return a dict of metric results (name -> value), which "
        f"`{call.func.attr}` logs; it returned "  # type: ignore[attr-defined]
        f"{'a single tensor' if error.matched(_SCALAR_RESULT) else 'something else'}. "
        "The Keras 3 way: update the metrics, then "
        "`return {m.name: m.result() for m in self.metrics}`"
    )
    located = _class_def(name, context)
    method = _method_def(located[1], step) if located else None
    returns = [r for r in _returned(method) if r.value is not None] if method else []
    wrong = [r for r in returns if not isinstance(r.value, (ast.Dict, ast.DictComp, ast.Call))]
    if located is None or len(wrong) != 1:
        return Finding(rule + ".", None)
    cell, statement = located[0], wrong[0]
    value = statement.value
    shown = one_line(cell.segment(statement))
    if isinstance(value, ast.Name):
        fixed = f'return {{"loss": {value.id}}}'
    elif isinstance(value, (ast.List, ast.Tuple)) and all(
        isinstance(item, ast.Name) for item in value.elts
    ):
        items = ", ".join(f'"{item.id}": {item.id}' for item in value.elts)  # type: ignore[attr-defined]
        fixed = f"return {{{items}}}"
    else:
        fixed = "return {m.name: m.result() for m in self.metrics}"
    if not shown:
        return Finding(rule + ".", None)
    rule += f" ({code(shown)}, line {statement.lineno} of {cell.label})"
    return Finding(rule + ".", f"replace it by {code(fixed)}")


STEP_RESULT = ErrorFamily(
    "a custom train_step or test_step that does not return a dict",
    messages=(Message(_SCALAR_RESULT), Message(_NO_ITEMS)),
    read=_read_step_result,
    section="custom-train-step",
)


# ------------------------------------------------------------------ save paths
_CHECKPOINT_WEIGHTS = re.compile(
    r"When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must "
    r"end in `\.weights\.h5`.*?Received: filepath=(?P<path>.*)$",
    re.S,
)
_CHECKPOINT_MODEL = re.compile(
    r"The filepath provided must end in `\.keras`.*?Received: filepath=(?P<path>.*)$", re.S
)
_WEIGHTS_FILE = re.compile(
    r"The filename must end in `\.weights\.h5`\. Received: filepath=(?P<path>.*)$", re.S
)
_MODEL_FILE = re.compile(
    r"Invalid filepath extension for saving\..*?Received: filepath=(?P<path>.*)\.$", re.S
)
_OLD_EXTENSIONS = (".weights.h5", ".keras", ".h5", ".hdf5", ".ckpt", ".tf", ".pb")


def _with_extension(path: str, extension: str) -> str:
    base = path.rstrip("/\\")
    for old in _OLD_EXTENSIONS:
        if base.endswith(old):
            base = base[: -len(old)]
            break
    return (base or "model") + extension


def _read_save_path(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    weights = not error.matched(_CHECKPOINT_MODEL) and not error.matched(_MODEL_FILE)
    extension = ".weights.h5" if weights else ".keras"
    methods = (
        ("ModelCheckpoint", "save_weights")
        if weights
        else ("ModelCheckpoint", "save", "save_model")
    )
    call = None
    for part in [line.call, *line.frame.header()]:
        for node in ast.walk(part) if part is not None else ():
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in methods:
                    call = node
                    break
        if call is not None:
            break
    path = error.group("path").strip()
    if weights and error.matched(_CHECKPOINT_WEIGHTS):
        what = "with `save_weights_only=True`, ModelCheckpoint writes weights only"
    elif weights:
        what = "`save_weights` writes the weights only"
    else:
        what = "a whole model (architecture, weights, optimizer) is saved"
    rule = (
        f"Keras 3 picks the file format from the path's extension: {what}, to a file "
        f"ending in `{extension}`, and its `filepath` is `{path}` (the TensorFlow 2 "
        "SavedModel directories and checkpoint prefixes are gone: `model.export(...)` "
        "writes a SavedModel)"
    )
    if call is None:
        return Finding(rule + ".", None)
    argument = call_argument(call, 1 if _is_module_function(call) else 0, "filepath")
    if argument is None:
        return Finding(rule + ".", None)
    new_path = _with_extension(path, extension)
    # A path held by a name is fixed where the name is made (``load_model(save_path)``
    # below may read it too): its value written out here would be a literal the notebook
    # never had, wrong as soon as the folder it was made in changes.
    assigned = assigned_string_fix(argument, line.frame, context, new_path, read_only_here=True)
    if assigned is not None:
        if assigned.read_again is not None:
            rule += f"; `{assigned.name}` is read again on line {assigned.read_again}, so"
        else:
            rule += f"; the path is `{assigned.name}`:"
        rule += f" give it the new name where it is made ({assigned.where}) and run the cell again"
        return Finding(rule + ".", code(assigned.fixed))
    statement = line.statement if line.statement is not None else call
    # A path made on the line (``os.path.join(run_dir, "m.h5")``): only its last string
    # literal changes, so the folder stays the expression the learner wrote.
    part = None if isinstance(argument, ast.Constant) else string_part(argument, path, new_path)
    replaced, text = part if part is not None else (argument, new_path)
    written = string_literal(segment_of(line, replaced), text)
    fixed = one_line(rewrite(line.frame, statement, replaced, written))
    below, loaded = _loaded_below(path, new_path, extension, line)
    rule += below
    if fixed and loaded is not None:
        # The load below fails next with the old path: its line is part of the fix.
        return Finding(rule + ".", f"{code(fixed)} and, on line {loaded[0]}, {code(loaded[1])}")
    return Finding(rule + ".", code(fixed) if fixed else None)


# The calls that read back what a save wrote, by the extension of the file.
_LOADERS = {".weights.h5": ("load_weights",), ".keras": ("load_model",)}


def _loaded_below(
    path: str, new_path: str, extension: str, line: FailingLine
) -> tuple[str, tuple[int, str] | None]:
    """``transfer.load_weights("/tmp/x.h5")`` later in the cell, reading the same path:
    it needs the new name too (the next error otherwise). The sentence, and (line, its
    statement with the new path) when that statement is one line."""
    tree = line.frame.tree()
    if tree is None:
        return "", None
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and node.lineno > line.frame.position.line
        ):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id
        given = node.args[0] if node.args else None
        if (
            called in _LOADERS.get(extension, ())
            and isinstance(given, ast.Constant)
            and given.value == path
        ):
            shown = line.frame.segment(node) or called
            said = (
                f"; {code(shown)} on line {node.lineno} reads the same path: give it "
                f"`{new_path}` too"
            )
            statement = next(
                (
                    s
                    for s in ast.walk(tree)
                    if isinstance(s, ast.stmt)
                    and not hasattr(s, "body")
                    and any(child is node for child in ast.walk(s))
                ),
                None,
            )
            literal = string_literal(line.frame.segment(given), new_path)
            fixed = one_line(rewrite(line.frame, statement, given, literal)) if statement else None
            return said, ((statement.lineno, fixed) if statement and fixed else None)
    return "", None


def _is_module_function(call: ast.Call) -> bool:
    """``keras.models.save_model(model, path)``: the path is the second argument."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "save_model"


SAVE_PATH = ErrorFamily(
    "a save path whose extension Keras 3 refuses",
    messages=(
        Message(_CHECKPOINT_WEIGHTS),
        Message(_CHECKPOINT_MODEL),
        Message(_WEIGHTS_FILE),
        Message(_MODEL_FILE),
    ),
    exception_type="ValueError",
    read=_read_save_path,
    section="keras-saving",
)


# ------------------------------------------------------------------ unknown identifiers
_UNKNOWN_IDENTIFIER = re.compile(
    r"Could not interpret (?P<kind>loss|metric|optimizer|activation function|initializer"
    r"|regularizer|constraint) identifier: "
    r"(?P<name>[^\n]*)$"
)
_REGISTRIES = {
    "loss": "keras.src.losses",
    "metric": "keras.src.metrics",
    "optimizer": "keras.src.optimizers",
    "activation function": "keras.src.activations",
    "initializer": "keras.src.initializers",
    "regularizer": "keras.src.regularizers",
    "constraint": "keras.src.constraints",
}
# Strings ``compile`` maps itself before asking the metrics registry.
_METRIC_SHORTHANDS = ("accuracy", "acc", "crossentropy", "ce")
_ABSTRACT = frozenset(
    {
        "loss",
        "metric",
        "optimizer",
        "lossfunctionwrapper",
        "optimizermap",
        "initializer",
        "regularizer",
        "constraint",
    }
)
_KEYWORD_OF = {
    "loss": "loss",
    "metric": "metrics",
    "optimizer": "optimizer",
    "activation function": "activation",
}
# Kinds a layer takes under several keywords (``kernel_initializer``, ``bias_initializer``).
_KEYWORD_SUFFIX = ("initializer", "regularizer", "constraint")


def _registered_names(kind: str) -> list[str]:
    """The lower-case names Keras's registry for ``kind`` holds (strings only)."""
    module = sys.modules.get(_REGISTRIES[kind])
    table = vars(module).get("ALL_OBJECTS_DICT") if module is not None else None
    if type(table) is not dict:
        return []
    names = [
        name
        for name in list(table)[:1000]
        if type(name) is str and name == name.lower() and name not in _ABSTRACT
    ]
    if kind == "metric":
        names += [name for name in _METRIC_SHORTHANDS if name not in names]
    return names


def literal_in_cells(
    text: str, line: FailingLine, context: ErrorContext
) -> tuple[CellFrame, ast.Call, ast.Constant, str] | None:
    """The string constant ``text`` in a call: on the failing line first, then in the
    cells (a ``compile`` whose loss only fails at ``fit``)."""
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.Call):
                constant = _constant_in(node, text)
                if constant is not None:
                    return line.frame, node, constant, "this line"
    for cell in error_cells(context):
        if repr(text)[1:-1] not in cell.source:
            continue
        tree = cell.tree()
        if tree is None:
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _constant_in(node, text) is not None
        ]
        if calls:
            node = max(calls, key=lambda n: (n.lineno, n.col_offset))
            constant = _constant_in(node, text)
            if constant is not None:
                return cell_frame(cell), node, constant, cell.label
    return None


def _constant_in(call: ast.Call, text: str) -> ast.Constant | None:
    """The constant ``text`` as a keyword value of ``call`` (or an item of its list)."""
    for keyword in call.keywords:
        values = (
            keyword.value.elts
            if isinstance(keyword.value, (ast.List, ast.Tuple))
            else [keyword.value]
        )
        for value in values:
            if isinstance(value, ast.Constant) and value.value == text:
                return value
    return None


def _read_unknown_identifier(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    kind, name = error.group("kind"), error.group("name").strip()
    names = _registered_names(kind)
    if not names:
        return None
    close = difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.6)
    article = "an" if kind[0] in "aeiou" else "a"
    rule = f'"{name}" is not {article} {kind} Keras knows by name'
    if close:
        rule += ": the closest it knows are " + ", ".join(f'"{c}"' for c in close)
    else:
        rule += ": some it knows are " + ", ".join(f'"{n}"' for n in sorted(names)[:8])
    located = literal_in_cells(name, line, context)
    if located is None or not close:
        return Finding(rule + ".", None)
    frame, call, constant, where = located
    whole = frame.segment(call)
    # On the failing line, the whole statement (``act = Dense(...)`` keeps its name).
    outer = line.statement if where == "this line" and line.statement is not None else call
    replacement = string_literal(frame.segment(constant), close[0])
    fixed = one_line(rewrite(frame, outer, constant, replacement))
    if not whole or not fixed:
        return Finding(rule + ".", None)
    keyword = _KEYWORD_OF.get(kind) or next(
        (
            item.arg
            for item in call.keywords
            if item.arg and item.arg.endswith(_KEYWORD_SUFFIX) and constant in ast.walk(item)
        ),
        kind,
    )
    rule += f" (`{keyword}=` of {code(one_line(whole) or whole)}, {where})"
    again = "" if where == "this line" else ", then run this line again"
    return Finding(rule + ".", f"{code(fixed)}{again}")


UNKNOWN_IDENTIFIER = ErrorFamily(
    "a loss, metric, optimizer, activation, initializer, regularizer or constraint name Keras "
    "does not know",
    messages=(Message(_UNKNOWN_IDENTIFIER),),
    exception_type="ValueError",
    read=_read_unknown_identifier,
    section="keras-model-api",
)


# ------------------------------------------------------------------ Input counting examples
# Keras 3's check of a model's declared input against the data it is called on.
_INPUT_SHAPE = re.compile(
    r"Expected shape \((?P<expected>[^)]*)\), but input has incompatible shape "
    r"\((?P<given>[^)]*)\)"
)
_DATA_CALLS = (
    "fit",
    "evaluate",
    "predict",
    "train_on_batch",
    "test_on_batch",
    "predict_on_batch",
)
_LABELLED = ("fit", "evaluate", "train_on_batch", "test_on_batch")


def _data_call(line: FailingLine) -> tuple[ast.Call, ast.expr, str] | None:
    """The call giving the model its data on the failing line: ``m.fit(x, ...)`` and the
    like, or ``m(x)``; with the data argument and the method (``__call__``)."""
    call = method_call_on_line(line, _DATA_CALLS)
    if call is not None:
        data = call_argument(call, 0, "x")
        method = call.func.attr  # type: ignore[attr-defined]
        return (call, data, method) if data is not None else None
    direct = line.call
    if isinstance(direct, ast.Call) and len(direct.args) == 1 and not direct.keywords:
        if isinstance(direct.func, (ast.Name, ast.Attribute)):
            return direct, direct.args[0], "__call__"
    return None


def _array_shape(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple | None:
    from jupyterlab_tfcoach.monitor.errors.failing_line import describe

    found, value = value_of(node, line.frame, context)
    if not found or value_kind(value) not in ("array", "tensor", "variable"):
        return None
    described = describe("x", value)
    return described.shape if described is not None else None


def _model_input_call(
    model: str, context: ErrorContext
) -> tuple[SourceCell, ast.Call, ast.expr] | None:
    """``keras.Input(shape=...)`` in the newest cell that binds ``model`` and holds one
    Input call: the call and its shape argument."""
    for cell in error_cells(context):
        if f"{model} =" not in cell.source or "Input(" not in cell.source:
            continue
        tree = cell.tree()
        if tree is None:
            continue
        binds = any(
            isinstance(node, ast.Assign)
            and any(cell.segment(target) == model for target in node.targets)
            for node in ast.walk(tree)
        )
        inputs = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "Input")
                or (isinstance(node.func, ast.Name) and node.func.id == "Input")
            )
        ]
        if not binds or len(inputs) != 1:
            continue
        shape = call_argument(inputs[0], 0, "shape")
        return (cell, inputs[0], shape) if shape is not None else None
    return None


def _read_input_counts_examples(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    from jupyterlab_tfcoach.monitor.errors.failing_line import show_shape
    from jupyterlab_tfcoach.monitor.errors.family_record import shape_list

    expected = shape_list(error.group("expected"))
    found = _data_call(line)
    if expected is None or found is None:
        return None
    call, data, method = found
    shape = _array_shape(data, line, context)
    if shape is None or len(expected) != len(shape) + 1 or tuple(expected[1:]) != tuple(shape):
        return None
    model_node = call.func.value if method != "__call__" else call.func  # type: ignore[attr-defined]
    model = segment_of(line, model_node)
    data_source = segment_of(line, data)
    if not model or not data_source:
        return None
    declared = _model_input_call(model, context)
    shape_source = declared[0].segment(declared[2]) if declared is not None else None
    # Evidence that the data's first axis counts examples: labels with as many rows, or
    # the Input's shape written as a whole array's ``.shape``.
    labels = call_argument(call, 1, "y") if method in _LABELLED else None
    label_shape = _array_shape(labels, line, context) if labels is not None else None
    same_rows = label_shape is not None and label_shape[:1] == shape[:1]
    whole_shape = shape_source is not None and shape_source.endswith(".shape")
    if not (same_rows or whole_shape):
        return None
    rule = (
        f"`{model}` declares one example as {show_shape(tuple(expected[1:]))}, the shape of "
        f"all of {code(data_source)} {show_shape(tuple(shape))}: `Input(shape=...)` "
        f"describes ONE example, without the number of examples ({shape[0]} here), which "
        "Keras adds as the batch axis"
    )
    if declared is None:
        return Finding(rule + ".", None)
    cell, input_call, shape_node = declared
    if whole_shape:
        replacement = f"{shape_source}[1:]"
    else:
        per_example = ", ".join(str(size) for size in shape[1:])
        replacement = f"({per_example}{',' if len(shape) == 2 else ''})"
    fixed = one_line(rewrite(cell_frame(cell), input_call, shape_node, replacement))
    if not fixed:
        return Finding(rule + ".", None)
    where = f"in {cell.label}" if cell.label != "this cell" else "in this cell"
    return Finding(
        rule + ".",
        f"declare the example's shape {where} (then build and compile `{model}` again), "
        f"{code(fixed)}",
    )


INPUT_COUNTS_EXAMPLES = ErrorFamily(
    "an Input shape that counts the examples",
    messages=(Message(_INPUT_SHAPE),),
    exception_type="ValueError",
    read=_read_input_counts_examples,
    section="batch-dimension",
)


def input_counts_examples(parsed: Any, context: ErrorContext) -> bool:
    """Whether the error is a model whose ``Input`` counts the examples: the missing-axis
    explainer (``shapes.py``) leaves it to this family (its "add a batch axis" would make
    the data disagree with the labels)."""
    from dataclasses import replace

    from jupyterlab_tfcoach.monitor.errors.failing_line import read_failing_line

    try:
        line = read_failing_line(context)
        if line is None:
            return False
        whole = replace(parsed, message=parsed.full_message or parsed.message)
        return INPUT_COUNTS_EXAMPLES.explain(whole, line, context) is not None
    except Exception:
        return False
