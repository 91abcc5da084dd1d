"""Error families from what ``compile`` was given and what ``fit``/``predict`` then need
(see ``family_record.py`` for a family's shape):

- a loss, metric or optimizer of the wrong kind: ``metrics=`` not a list, an optimizer
  class where ``compile`` needs an instance, a loss or metric *called* when compile was
  written (``loss=bce()``, ``loss=keras.losses.mse(y, p)``: compile got its result, not
  the function). Keras 3 raises these in ``compile``, or at the first ``fit`` for a loss
  or metric (it resolves them there); the fix is the argument as it should be written;
- no loss: ``compile(optimizer=...)`` alone, then ``fit``/``evaluate`` (Keras 3 raises
  "No loss to compute" at the first step); the fix is the model's own compile call with
  a loss for its labels;
- a callback's ``monitor`` Keras cannot read a direction from (``monitor="val_acc"``
  when the logs will say ``val_accuracy``): Keras 3 raises at ``fit``'s start. The keys
  the logs will have are read from what ``compile`` stored (the metrics as the learner
  gave them) and the fit call (validation data or not); the fix renames the key in the
  callback's own call;
- a loss or metric of the learner's whose ``def`` does not take ``(y_true, y_pred)``
  (``def my_loss(y_pred)``, a ``Loss`` subclass's ``call(self, y_pred)``): Python raises
  the TypeError when fit calls it; the fix is the ``def`` line with the labels first;
- ``fit``/``evaluate`` given inputs without labels (no ``y``, a dataset of inputs only):
  Keras 3 raises a bare "None values not supported."; the entry says there are no labels;
- ``predict`` on data with no batches: Keras 3.15 fails with an ``UnboundLocalError``
  ("batch_outputs"); the entry names the data, and for windows of
  ``timeseries_dataset_from_array`` the series' length against ``sequence_length``
  (``training/fit_logs.window_shortfall``, which also tells fit's and evaluate's note).

Everything is read from the message, the cells' source (``ast``) and what Keras stored
on the model (instance dictionaries only): no user code runs.
"""

from __future__ import annotations

import ast
import difflib
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import cell_frame, string_literal
from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_keras_api import (
    TRAINING_METHODS,
    call_argument,
    compile_calls,
    default_loss_for,
    literal_in_cells,
    method_call_on_line,
    one_line,
    training_call_on_line,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute, stored
from jupyterlab_tfcoach.monitor.training.fit_logs import cell_sources, window_shortfall

# ``compile(optimizer, loss, loss_weights, metrics, ...)``: where each is by position.
_COMPILE_POSITIONS = {"optimizer": 0, "loss": 1, "metrics": 3}


def _compile_of(line: FailingLine, context: ErrorContext) -> tuple[CellFrame, ast.Call, str] | None:
    """The compile call the error is about: on the failing line, else the newest
    ``<model>.compile(...)`` in the cells for the model the failing fit/evaluate runs."""
    here = method_call_on_line(line, ("compile",))
    if here is not None:
        return line.frame, here, "this line"
    call = method_call_on_line(line, TRAINING_METHODS)
    if call is None:
        return None
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    for cell, node, receiver in compile_calls(context):
        if receiver == model:
            return cell_frame(cell), node, cell.label
    return None


def _statement_of(frame: CellFrame, node: ast.AST) -> ast.stmt | None:
    """The top-level statement of ``frame``'s cell that holds ``node``."""
    tree = frame.tree()
    if tree is None:
        return None
    for statement in tree.body:
        if any(inner is node for inner in ast.walk(statement)):
            return statement
    return None


def _rewritten(frame: CellFrame, inner: ast.AST, replacement: str) -> str | None:
    """The cell's statement holding ``inner``, with ``inner`` replaced, on one line."""
    statement = _statement_of(frame, inner)
    if statement is None:
        return None
    return one_line(rewrite(frame, statement, inner, replacement))


# ------------------------------------------------------------------ wrong kind of object
_METRICS_NOT_LIST = re.compile(
    r"Expected `metrics` argument to be a list, tuple, or dict\. Received instead: metrics="
)
_CLASS_IDENTIFIER = re.compile(
    r"Could not interpret (?P<kind>loss|metric|optimizer) identifier: <class '(?P<cls>[\w.]+)'>"
)
_VALUE_IDENTIFIER = re.compile(r"Could not interpret (?P<kind>loss|metric) identifier: ")
_CALLED_WITHOUT_LABELS = re.compile(
    r"(?P<callee>[\w.<>]+)\(\) missing (?:1|2) required positional arguments?: 'y_true'"
)
_KEYWORD_OF_KIND = {"loss": "loss", "metric": "metrics", "optimizer": "optimizer"}


def _given(call: ast.Call, keyword: str) -> ast.expr | None:
    return call_argument(call, _COMPILE_POSITIONS[keyword], keyword)


def _items(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else [node]


def _is_class(value: Any) -> bool:
    return isinstance(value, type)


def _called_function(
    node: ast.expr, frame: CellFrame, context: ErrorContext, without_arguments: bool
) -> ast.Call | None:
    """``keras.losses.mse(y, p)`` or ``bce()``: a call of a loss or metric (a function or
    an instance), not of a class (``keras.metrics.AUC()`` makes the object compile needs).
    ``without_arguments``: only a call given none (the one Python refused)."""
    if not isinstance(node, ast.Call):
        return None
    arguments = bool(node.args or node.keywords)
    if without_arguments and arguments:
        return None
    if isinstance(node.func, ast.Call):
        # ``keras.losses.BinaryCrossentropy()()``: the object made, then called.
        found, value = value_of(node.func.func, frame, context)
        if found:
            return node if _is_class(value) else None
        # Module attributes are not always readable here: a class is named in CamelCase.
        maker = node.func.func
        name = maker.attr if isinstance(maker, ast.Attribute) else getattr(maker, "id", "")
        return node if name[:1].isupper() else None
    found, value = value_of(node.func, frame, context)
    if found and _is_class(value):
        return None
    if not found and not arguments:
        return None
    return node


def _read_wrong_kind(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    located = _compile_of(line, context)
    if located is None:
        return None
    frame, call, where = located
    again = "" if where == "this line" else ", then run this line again"
    shown = one_line(frame.segment(call)) or "compile(...)"
    if error.matched(_METRICS_NOT_LIST):
        given = _given(call, "metrics")
        written = frame.segment(given) if given is not None else None
        if given is None or not written or isinstance(given, (ast.List, ast.Tuple, ast.Dict)):
            return None
        rule = (
            f"`metrics=` takes a list of metrics (several may be tracked), and {code(shown)} "
            f"gave it one, `{written}`, alone"
        )
        fixed = _rewritten(frame, given, f"[{written}]")
        return Finding(rule + ".", f"{code(fixed)}{again}" if fixed else None)
    if error.matched(_CALLED_WITHOUT_LABELS):
        # Python raised it in the cell: the loss or the metric called without arguments.
        for kind in ("loss", "metric"):
            given = _given(call, _KEYWORD_OF_KIND[kind])
            found = _called_item(error, kind, given, (frame, call, where), context)
            if found is not None:
                return found
        return None
    kind = error.group("kind")
    keyword = _KEYWORD_OF_KIND[kind]
    given = _given(call, keyword)
    if given is None:
        return None
    if error.matched(_CLASS_IDENTIFIER):
        written = frame.segment(given)
        if not written or isinstance(given, ast.Call):
            return None
        cls = error.group("cls").rsplit(".", 1)[-1]
        article = "an" if kind[0] in "aeiou" else "a"
        rule = (
            f"`{keyword}=` takes {article} {kind} object, and `{written}` is the class {cls} "
            "itself: calling the class makes the object (with its settings, e.g. the "
            "learning rate)"
        )
        fixed = _rewritten(frame, given, f"{written}()")
        return Finding(rule + ".", f"{code(fixed)}{again}" if fixed else None)
    return _called_item(error, kind, given, located, context)


def _called_item(
    error: Recognised,
    kind: str,
    given: ast.expr | None,
    located: tuple[CellFrame, ast.Call, str],
    context: ErrorContext,
) -> Finding | None:
    """A loss or metric called when compile was written: compile got its result (or the
    call failed, without labels and predictions)."""
    if given is None:
        return None
    frame, call, where = located
    keyword = _KEYWORD_OF_KIND[kind]
    again = "" if where == "this line" else ", then run this line again"
    shown = one_line(frame.segment(call)) or "compile(...)"
    for item in _items(given):
        called = _called_function(item, frame, context, error.matched(_CALLED_WITHOUT_LABELS))
        function = frame.segment(called.func) if called is not None else None
        written = frame.segment(called) if called is not None else None
        if called is None or not function or not written:
            continue
        rule = (
            f"`{keyword}=` takes the {kind} itself, which Keras calls on every batch with the "
            f"labels and the predictions, and {code(shown)} ({where}) gave it `{written}`: "
            f"the {kind} was called when compile was written"
        )
        if error.matched(_CALLED_WITHOUT_LABELS):
            rule += ", without labels or predictions, so the call failed"
        else:
            rule += ", so compile got its result, a value"
        fixed = _rewritten(frame, called, function)
        return Finding(rule + ".", f"pass it uncalled, {code(fixed)}{again}" if fixed else None)
    return None


COMPILE_ARGUMENT_KIND = ErrorFamily(
    "a loss, metric or optimizer given to compile as the wrong kind of object",
    messages=(
        Message(_METRICS_NOT_LIST),
        Message(_CLASS_IDENTIFIER),
        Message(_VALUE_IDENTIFIER),
        Message(_CALLED_WITHOUT_LABELS),
    ),
    read=_read_wrong_kind,
    section="keras-model-api",
    # ``loss=bce()`` fails in the cell, before Keras runs.
    without_library=True,
)


# ------------------------------------------------------------------ no loss
_NO_LOSS = re.compile(r"No loss to compute\. Provide a `loss` argument in `compile\(\)`")


def _with_loss(frame: CellFrame, call: ast.Call, loss: str) -> str | None:
    """``m.compile(optimizer="adam")`` -> ``m.compile(optimizer="adam", loss="mse")``."""
    written = frame.segment(call)
    if not written or not written.endswith(")"):
        return None
    inside = written[:-1].rstrip()
    separator = "" if inside.endswith("(") else ", "
    if inside.endswith(","):
        inside, separator = inside[:-1], ", "
    return one_line(f'{inside}{separator}loss="{loss}")')


def _read_no_loss(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    training = training_call_on_line(line)
    if training is None:
        return None
    call, model, method = training
    rule = (
        f"`{model}.{method}` computes the loss on every batch, and `{model}` was compiled "
        "without one"
    )
    located = _compile_of(line, context)
    if located is None:
        return Finding(rule + ": give its compile call a `loss=` for your labels.", None)
    frame, compile_call, where = located
    shown = one_line(frame.segment(compile_call))
    if shown:
        rule += f" ({code(shown)}, {where})"
    loss = default_loss_for(call, line, context)
    fixed = _with_loss(frame, compile_call, loss) if loss is not None else None
    if fixed is None:
        return Finding(rule + ": add a `loss=` for your labels to that call.", None)
    again = "" if where == "this line" else ", then run this line again"
    return Finding(rule + ".", f"compile it with a loss for these labels, {code(fixed)}{again}")


NO_LOSS = ErrorFamily(
    "training or evaluating a model compiled without a loss",
    messages=(Message(_NO_LOSS),),
    exception_type="ValueError",
    read=_read_no_loss,
    section="labels-and-loss",
)


# ------------------------------------------------------------------ callback monitor
_MONITOR = re.compile(
    r"(?P<callback>\w+) callback received monitor=(?P<monitor>[^\s,]+), but Keras isn't able "
    r"to automatically determine whether that metric should be maximized or minimized"
)
_MAX_METRICS = 50


def _metric_name(metric: Any) -> str | None:
    """The key a compiled metric logs under: a string as written, an object's ``name``,
    a function's ``__name__``."""
    if type(metric) is str:
        return metric
    if type(metric) is types.FunctionType:
        name = metric.__name__
        return name if type(name) is str else None
    name = stored(metric, "name")
    return name if type(name) is str else None


def _log_keys(model: Any, validated: bool) -> list[str] | None:
    """The keys ``fit``'s logs will have: ``loss``, each compiled metric, and their
    ``val_`` twins when fit validates; None when the metrics are not a plain list."""
    compiled = stored(model, "_compile_metrics")
    metrics = stored(compiled, "_user_metrics") if compiled is not None else []
    if metrics is None:
        metrics = []
    if type(metrics) not in (list, tuple) or len(metrics) > _MAX_METRICS:
        return None
    keys = ["loss"]
    for metric in metrics:
        name = _metric_name(metric)
        if name is None:
            return None
        keys.append(name)
    return keys + [f"val_{key}" for key in keys] if validated else keys


def _validates(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg in ("validation_data", "validation_split"):
            value = keyword.value
            return not (isinstance(value, ast.Constant) and value.value in (None, 0, 0.0))
    return False


def _read_monitor(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = method_call_on_line(line, ("fit",))
    if call is None:
        return None
    found, model = value_of(call.func.value, line.frame, context)  # type: ignore[attr-defined]
    if not found:
        return None
    validated = _validates(call)
    keys = _log_keys(model, validated)
    monitor, callback = error.group("monitor").strip("'\""), error.group("callback")
    if keys is None:
        return None
    listed = ", ".join(f'"{key}"' for key in keys)
    model_name = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    if monitor in keys:
        return Finding(
            f'The {callback} watches "{monitor}", a key of the logs whose better direction '
            f'Keras cannot tell from its name: pass `mode="max"` when a larger {monitor} is '
            f'better, `mode="min"` when a smaller one is.',
            None,
        )
    rule = (
        f'The {callback} watches monitor="{monitor}", and the logs `{model_name}.fit` writes '
        f"each epoch will have the keys {listed}"
    )
    if monitor.startswith("val_") and not validated:
        rule += " (no `val_` keys: this fit gets no validation data)"
    rule += f'; Keras names a metric by what compile was given, so "{monitor}" never appears'
    close = difflib.get_close_matches(monitor, keys, n=1, cutoff=0.5)
    located = literal_in_cells(monitor, line, context) if close else None
    if located is None:
        return Finding(rule + ".", None)
    frame, _, constant, where = located
    fixed = _rewritten(frame, constant, string_literal(frame.segment(constant), close[0]))
    if fixed is None:
        return Finding(rule + ".", None)
    again = "" if where == "this line" else ", then run this line again"
    return Finding(rule + ".", f'watch "{close[0]}", {code(fixed)}{again}')


CALLBACK_MONITOR = ErrorFamily(
    "a callback watching a key fit's logs do not have",
    messages=(Message(_MONITOR),),
    exception_type="ValueError",
    read=_read_monitor,
    section="callback-mode",
)


# ------------------------------------------------------------------ a loss's own signature
_TAKES = re.compile(
    r"(?:(?P<cls>\w+)\.)?(?P<function>\w+)\(\) (?:takes (?P<takes>\d+) positional arguments? "
    r"but (?P<given>\d+) were given|missing \d+ required positional arguments?: )"
)
_LOSS_ARGUMENTS = ("y_true", "y_pred")


_class_namespace = type.__dict__["__dict__"].__get__
_VARARGS = 0x04  # ``code.co_flags``: the function takes ``*args``


def _defined(function: str, cls: str | None, context: ErrorContext) -> types.FunctionType | None:
    """The learner's function ``function`` (or the method of their class ``cls``), from
    the namespace: a plain function's own slots are read, never user code."""
    if cls is None:
        found = context.namespace.get(function)
    else:
        owner = context.namespace.get(cls)
        found = _class_namespace(owner).get(function) if isinstance(owner, type) else None
    return found if type(found) is types.FunctionType else None


def _read_loss_signature(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    located = _compile_of(line, context)
    if located is None or located[2] == "this line":
        return None  # the compile call itself failed: not a loss called by fit
    frame, call, _ = located
    function, cls = error.group("function"), error.group("cls")
    written = [
        frame.segment(item)
        for keyword in ("loss", "metrics")
        for given in [_given(call, keyword)]
        if given is not None
        for item in _items(given)
    ]
    # ``loss=my_loss``, ``metrics=[my_metric]``, ``loss=MyLoss()`` (its ``call``).
    named = function if cls is None else f"{cls}("
    if not any(text and (text == named or text.startswith(named)) for text in written):
        return None
    if cls is not None and function != "call":
        return None
    defined = _defined(function, cls, context)
    if defined is None:
        return None
    code_object = defined.__code__
    parameters = list(code_object.co_varnames[: code_object.co_argcount])
    own = parameters[1:] if cls is not None else parameters
    who = f"`{cls}.{function}`" if cls else f"`{function}`"
    rule = (
        f"Keras calls {who} with two arguments on every batch, the labels and the "
        f"predictions (`y_true, y_pred`, in that order), and its `def` takes "
        f"{len(own)}: ({', '.join(own)})"
    )
    if len(own) != 1 or defined.__defaults__ or code_object.co_flags & _VARARGS:
        return Finding(
            rule + "; give the others defaults or bind them first (`functools.partial`).", None
        )
    first = "self, " if cls is not None else ""
    # The one parameter the learner wrote is the predictions' place: keep its name,
    # unless it is already the labels' name (``def call(self, y_true)``).
    second = "y_pred" if own[0] == "y_true" else own[0]
    fixed = f"def {function}({first}y_true, {second}):"
    renamed = (
        " Your one parameter `y_true` stood for what the body computes from, the "
        "predictions: Keras now fills `y_true` with the labels, so read `y_pred` in the body."
        if own[0] == "y_true"
        else ""
    )
    return Finding(
        f"{rule}: the labels come first.{renamed}",
        f"take the labels first, {code(fixed)} (define it again, then compile and run this "
        "line again)",
    )


LOSS_SIGNATURE = ErrorFamily(
    "a loss or metric of the learner's whose def does not take the labels and predictions",
    messages=(Message(_TAKES),),
    exception_type="TypeError",
    read=_read_loss_signature,
    section="labels-and-loss",
)


# ------------------------------------------------------------------ data without labels
_NONE_VALUES = re.compile(r"^None values not supported\.")


def _read_no_labels(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = method_call_on_line(line, TRAINING_METHODS)
    if call is None or call_argument(call, 1, "y") is not None:
        return None
    data = call_argument(call, 0, "x")
    operand = operand_of(data, line, context) if data is not None else None
    if operand is None:
        return None
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    method = call.func.attr  # type: ignore[attr-defined]
    if operand.kind == "dataset":
        spec = library_attribute(operand.value, "element_spec")
        if type(spec) is tuple:
            return None  # (inputs, labels) pairs: another cause
        given = f"`{operand.source}` yields inputs only ({operand.description})"
        fix = (
            "build it from (inputs, labels) pairs, `Dataset.from_tensor_slices((inputs, "
            "labels))` with your inputs and labels"
        )
    elif operand.kind in ("array", "tensor"):
        given = f"`{model}.{method}` got `{operand.source}` ({operand.description}) and no `y`"
        fix = "pass the labels as the second argument (`y`)"
    else:
        return None
    rule = (
        f"`{model}.{method}` computes the compiled loss from labels and predictions, and "
        f"{given}: there are no labels (Keras gets None for them)"
    )
    return Finding(f"{rule}; {fix}.", None)


NO_LABELS = ErrorFamily(
    "fit or evaluate given inputs without labels",
    messages=(Message(_NONE_VALUES),),
    exception_type="ValueError",
    read=_read_no_labels,
    section="labels-and-loss",
)


# ------------------------------------------------------------------ predict on no batches
_NO_BATCH_OUTPUTS = re.compile(r"cannot access local variable 'batch_outputs'")


def _read_no_batches(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = method_call_on_line(line, ("predict", "predict_on_batch"))
    data = call_argument(call, 0, "x") if call is not None else None
    if call is None or data is None:
        return None
    written = segment_of(line, data)
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    rule = (
        f"`{model}.predict` got no batch from `{written}` (it is empty), and Keras 3 fails "
        "when it has nothing to return"
    )
    if isinstance(data, ast.Name):
        frames = context.frames()
        source = frames[-1].source() if frames else ""
        sources = cell_sources(context.namespace, source or "")
        window = window_shortfall(data.id, sources, context.namespace)
        if window is not None:
            series, length, steps = window
            return Finding(
                f"{rule}: `{data.id}` comes from `timeseries_dataset_from_array` with "
                f"sequence_length={length}, and `{series}` has {steps} steps, so no window "
                f"fits. Use a sequence_length of at most {steps}, or a longer series.",
                None,
                section="tf-data",
            )
    return Finding(
        f"{rule}. Check what made it empty: a `take(0)`, a `filter` that keeps nothing, an "
        "empty slice of an array, or windows longer than the series.",
        None,
        section="tf-data",
    )


NO_BATCHES = ErrorFamily(
    "predict on data with no batches",
    messages=(Message(_NO_BATCH_OUTPUTS),),
    exception_type="UnboundLocalError",
    read=_read_no_batches,
    section="tf-data",
)
