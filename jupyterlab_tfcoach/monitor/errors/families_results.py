"""A value a Keras call returned, used as if it were another kind: one family (issue #25).

``layer.get_weights().T``, ``model.predict(x).numpy()``, ``model.fit(...)["loss"]``,
``history.history["accuracy"]`` when the metric is logged as ``binary_accuracy``,
``logs["val_loss"]`` in a callback of a fit with no validation data: Python raises an
AttributeError, TypeError or KeyError in the learner's own line after Keras returned, so
the traceback never enters TensorFlow and the message names only a Python type. The
reading finds the expression the failing attribute or item was read from (its
*receiver*) and claims the error only when that receiver is traceably a Keras result:

- the call itself is on the line (``layer.get_weights()``), its owner a Keras layer or
  model, and the type the message names is what that call returns (``_RETURNS``: the
  table of calls, what each returns and how to get what was meant);
- or a name the cells assigned from such a call (``w = layer.get_weights()``), holding a
  value of that type;
- or a dict Keras filled with logged values: the ``history`` dict of a ``History`` (a
  name holding that very dict counts too), or the ``logs`` a Keras callback method was
  given (the traceback went through Keras's fit);
- or the dict a Keras model's ``evaluate(..., return_dict=True)`` returned, the name's
  newest assignment in the cells: keyed as fit logs, without ``val_`` (its values are of
  the data it was given), so ``res["val_loss"]`` means ``res["loss"]``.

A list ``evaluate``, ``test_on_batch`` or ``train_on_batch`` returned (the loss, then each
compiled metric: the loss alone is a float only for a model compiled without metrics),
used as one number (formatted with ``:.3f``, in arithmetic, compared, given to
``float()``/``round()``), gets the call, the metrics the model was compiled with (its
stored compile arguments, a flat list), each index, and the index the line's words name
(``accuracy`` in a printed label) as the fix; unpacking and ``return_dict=True`` are told.

For a missing key the entry lists the keys the dict has (only ``str`` keys, bounded in
number and length), the nearest one by ``difflib``, and why a key is missing: the keys
are the names the metrics are logged under, ``val_`` ones only when fit had validation
data. Plain-Python errors on the learner's own lists and dicts are left alone.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    string_literal,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    ParsedError,
    class_mro,
    code,
    instance_attribute,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    raised_through_library,
)
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

_NO_ATTRIBUTE = re.compile(r"^'(?:\w+\.)*(?P<type>\w+)' object has no attribute '(?P<attr>\w+)'")
_NOT_SUBSCRIPTABLE = re.compile(r"^'(?P<type>\w+)' object is not subscriptable")
_STR_INDEX = re.compile(r"^(?P<type>list|tuple) indices must be integers or slices, not str")
_MAX_KEYS = 40
_MAX_KEY_CHARS = 60
_MAX_NAMESPACE = 5000
_SECTION = "keras-model-api"
_LOGS_SECTION = "callback-mode"


@dataclass(frozen=True)
class Returned:
    """What a Keras call returns: the Python type names of its result (as messages name
    them), in words, and its owners' kinds."""

    types: tuple[str, ...]
    words: str
    owners: tuple[str, ...] = ("layer", "model")


# The table: a Keras method -> what it returns. The fix is chosen by what was asked of it.
_RETURNS: dict[str, Returned] = {
    "get_weights": Returned(
        ("list",),
        "a list of NumPy arrays, one per weight, in order (for a Dense layer: [kernel, bias])",
    ),
    "predict": Returned(("ndarray",), "a NumPy array (already converted from tensors)"),
    "predict_on_batch": Returned(("ndarray",), "a NumPy array (already converted from tensors)"),
    "fit": Returned(
        ("History",),
        "a History object; the values it logged each epoch are in its `.history` dict "
        "(a list per key)",
        ("model",),
    ),
    "evaluate": Returned(
        ("float", "list"),
        "the loss as a float, or a list [loss, metric, ...] when the model has metrics, "
        "not a dict (unless it is given `return_dict=True`)",
        ("model",),
    ),
    "get_config": Returned(("dict",), "a dict of the constructor's arguments"),
    "test_on_batch": Returned(
        ("float", "list"),
        "the loss as a float, or a list [loss, metric, ...] when the model has metrics",
        ("model",),
    ),
    "train_on_batch": Returned(
        ("float", "list"),
        "the loss as a float, or a list [loss, metric, ...] when the model has metrics",
        ("model",),
    ),
}
# The calls whose result is one number or a list of numbers, by how the model was compiled.
_SCORE_CALLS = ("evaluate", "test_on_batch", "train_on_batch")


@dataclass(frozen=True)
class Asked:
    """What the failing line asked of a value: an attribute or an item (a str key)."""

    node: ast.Attribute | ast.Subscript
    attribute: str | None
    key: str | None


def _asked(error: Recognised, line: FailingLine) -> tuple[Asked, str | None] | None:
    """The failing attribute or item read and the type name the message gives."""
    parsed = error.parsed
    message = parsed.message
    nodes = [node for part in line.frame.header() for node in ast.walk(part)]
    if parsed.type == "AttributeError":
        found = _NO_ATTRIBUTE.match(message)
        if found is None:
            return None
        attribute = found.group("attr")
        candidates = [
            node
            for node in nodes
            if isinstance(node, ast.Attribute)
            and node.attr == attribute
            and isinstance(node.ctx, ast.Load)
        ]
        chosen = _at_failing_position(candidates, line)
        return (Asked(chosen, attribute, None), found.group("type")) if chosen else None
    if parsed.type == "TypeError":
        found = _NOT_SUBSCRIPTABLE.match(message) or _STR_INDEX.match(message)
        if found is None:
            return None
        candidates = [
            node
            for node in nodes
            if isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _str_key(node) is not None
        ]
        chosen = _at_failing_position(candidates, line)
        if chosen is None:
            return None
        return Asked(chosen, None, _str_key(chosen)), found.group("type")
    if parsed.type == "KeyError":
        try:
            key = ast.literal_eval(message) if len(message) <= _MAX_KEY_CHARS + 2 else None
        except (ValueError, SyntaxError):
            return None
        if type(key) is not str:
            return None
        candidates = [
            node
            for node in nodes
            if isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _str_key(node) == key
        ]
        chosen = _at_failing_position(candidates, line)
        return (Asked(chosen, None, key), "dict") if chosen else None
    return None


def _at_failing_position(candidates: list[Any], line: FailingLine) -> Any:
    exact = [node for node in candidates if line.frame.at_position(node)]
    if exact:
        return exact[0]
    return candidates[0] if len(candidates) == 1 else None


def _str_key(node: ast.Subscript) -> str | None:
    key = node.slice
    return key.value if isinstance(key, ast.Constant) and type(key.value) is str else None


def _keras_class(value: Any, module: str, name: str) -> bool:
    cls = loaded_class(module, name)
    return cls is not None and cls in class_mro(value)


def _is_history(value: Any) -> bool:
    return _keras_class(value, "keras.src.callbacks.history", "History")


@dataclass(frozen=True)
class Provenance:
    """Where the receiver came from: the Keras call (its method and source) that made it,
    and, for a name, the assignment that bound it."""

    method: str
    call: str
    assignment: str | None = None
    assignment_node: ast.Assign | None = None
    assignment_cell: Any = None


def _from_call(node: ast.AST, line: FailingLine, context: ErrorContext) -> Provenance | None:
    """``layer.get_weights()`` on the line, its owner a Keras layer or model."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _RETURNS
    ):
        return None
    found, owner = value_of(node.func.value, line.frame, context)
    if not found or value_kind(owner) not in _RETURNS[node.func.attr].owners:
        return None
    source = line.frame.segment(node)
    return Provenance(node.func.attr, source) if source and "\n" not in source else None


def _from_assignment(name: str, context: ErrorContext) -> Provenance | None:
    """``w = layer.get_weights()`` in the cells (the newest assignment of ``name``)."""
    for cell, statement in assignments_in_cells(name, context):
        call = statement.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _RETURNS
        ):
            return None
        found, owner = context.resolve(call.func.value, None)
        if not found or value_kind(owner) not in _RETURNS[call.func.attr].owners:
            return None
        source, shown = cell.segment(call), cell.segment(statement)
        if not source or not shown or "\n" in shown:
            return None
        return Provenance(call.func.attr, source, shown, statement, cell)
    return None


def _read_result(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if error.parsed.type == "TypeError" and _NUMBER_USE.search(error.parsed.message):
        return _list_as_number(error.parsed, line, context)
    asked_and_type = _asked(error, line)
    if asked_and_type is None:
        return None
    asked, type_name = asked_and_type
    receiver = asked.node.value
    found, value = value_of(receiver, line.frame, context)
    if asked.key is not None and error.parsed.type == "KeyError":
        if not found or type(value) is not dict:
            return None
        return _missing_key(asked, receiver, value, line, context, error.parsed)
    provenance = _from_call(receiver, line, context)
    if provenance is None and isinstance(receiver, ast.Name):
        if found and _is_history(value) and type_name == "History":
            provenance = Provenance("fit", receiver.id)
        elif found:
            provenance = _from_assignment(receiver.id, context)
    if provenance is None:
        return None
    returned = _RETURNS[provenance.method]
    if type_name not in returned.types:
        return None
    return _misused_result(asked, receiver, provenance, returned, line)


def _misused_result(
    asked: Asked, receiver: ast.expr, provenance: Provenance, returned: Returned, line: FailingLine
) -> Finding | None:
    shown = line.frame.segment(receiver) or provenance.call
    origin = (
        f" ({code(shown)} was set by {code(provenance.assignment)})"
        if provenance.assignment
        else ""
    )
    rule = f"`{provenance.method}()` returns {returned.words}{origin}."
    method = provenance.method
    replacement: tuple[ast.AST, str] | None = None
    if method == "get_weights" and asked.attribute is not None:
        rule += (
            f" A list has no `.{asked.attribute}`: take one array from it, `[0]` for the "
            "kernel (the weight matrix), `[1]` for the bias."
        )
        replacement = (receiver, f"{shown}[0]")
    elif method in ("predict", "predict_on_batch") and asked.attribute == "numpy":
        parent = _call_of(asked.node, line)
        rule += " It is not a tensor, so it has no `.numpy()`: use it as it is."
        if parent is not None:
            replacement = (parent, shown)
    elif method == "fit" or (method == "evaluate" and asked.key is not None):
        if method == "fit":
            wanted = asked.key if asked.key is not None else asked.attribute
            rule += f" The logged values are read from its `.history` dict: `{shown}.history`."
            quote = line.frame.segment(asked.node.slice) if asked.key is not None else None
            replacement = (asked.node, f"{shown}.history[{string_literal(quote, wanted or '')}]")
        elif isinstance(receiver, ast.Call):
            rule += " Ask for a dict of named values with `return_dict=True`."
            replacement = (receiver, _with_keyword(shown, "return_dict=True"))
        elif provenance.assignment and provenance.assignment_node is not None:
            rule += " Ask for a dict of named values with `return_dict=True` where it is called."
            fixed = _assignment_with(provenance, "return_dict=True")
            return Finding(rule, f"{code(fixed)} then run this line again" if fixed else None)
    if replacement is None:
        return Finding(rule, None)
    statement = line.statement
    fixed = rewrite(line.frame, statement, replacement[0], replacement[1]) if statement else None
    if not fixed or "\n" in fixed:
        return Finding(rule, None)
    return Finding(rule, code(fixed))


def _call_of(attribute: ast.Attribute, line: FailingLine) -> ast.Call | None:
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.Call) and node.func is attribute and not node.args:
                return node
    return None


def _with_keyword(call_source: str, keyword: str) -> str:
    """``f(a)`` -> ``f(a, keyword)``; ``f()`` -> ``f(keyword)``."""
    inner = call_source[: call_source.rindex(")")]
    separator = "" if inner.endswith("(") else ", "
    return f"{inner}{separator}{keyword})"


def _assignment_with(provenance: Provenance, keyword: str) -> str | None:
    node, cell = provenance.assignment_node, provenance.assignment_cell
    if node is None or cell is None:
        return None
    fixed = rewrite(cell_frame(cell), node, node.value, _with_keyword(provenance.call, keyword))
    return fixed if fixed and "\n" not in fixed else None


# ------------------------------------------------------------------ a list used as a number
# Python's messages for a list where a number was meant: formatted with a number's format,
# in arithmetic, compared, or given to float()/round().
_NUMBER_USE = re.compile(
    r"^(?:unsupported format string passed to list\.__format__"
    r"|unsupported operand type\(s\) for .{1,3}: '(?:list' and '\w+|\w+' and 'list)'"
    r"|can't multiply sequence by non-int of type '(?:float|numpy\.\w+)'"
    r"|can only concatenate list \(not \"(?:int|float|numpy\.\w+)\"\) to list"
    r"|'[<>=]{1,2}' not supported between instances of '(?:list' and '\w+|\w+' and 'list)'"
    r"|(?:float|int)\(\) argument must be a string or a (?:real )?number, not 'list'"
    r"|type list doesn't define __round__ method"
    r"|bad operand type for unary [-+]: 'list')"
)
_NUMBER_FUNCTIONS = ("float", "int", "round", "abs")
_MAX_SCORES = 20


def _number_places(line: FailingLine) -> list[ast.expr]:
    """The expressions the failing line uses as one number: a formatted value with a
    format spec, an operand of arithmetic or of a comparison, the argument of float(),
    int(), round() or abs()."""
    places: list[ast.expr] = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
                places.append(node.value)
            elif isinstance(node, ast.BinOp):
                places += [node.left, node.right]
            elif isinstance(node, ast.Compare):
                places += [node.left, *node.comparators]
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
                places.append(node.operand)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _NUMBER_FUNCTIONS
                and node.args
            ):
                places.append(node.args[0])
    return places


def _metric_names(model: Any) -> list[str] | None:
    """The metrics the model was compiled with, by the names Keras logs them under; None
    when they are not a flat list (one output)."""
    found, config = instance_attribute(model, "_compile_config")
    found_dict, settings = instance_attribute(config, "config") if found else (False, None)
    if not found_dict or type(settings) is not dict:
        return None
    metrics = settings.get("metrics")
    if type(metrics) not in (list, tuple) or len(metrics) > _MAX_SCORES:
        return None
    names: list[str] = []
    for metric in metrics:
        if type(metric) is str:
            names.append(metric)
            continue
        has_name, name = instance_attribute(metric, "name")
        if not has_name or type(name) is not str or len(name) > _MAX_KEY_CHARS:
            return None
        names.append(name)
    return names


def _words(text: str) -> set[str]:
    return {word for word in re.split(r"[^a-z0-9]+", text.lower()) if word}


def _meant_index(line_text: str, names: list[str]) -> int | None:
    """Which of [loss, *metrics] the line's words name: the one whose name words it has,
    when exactly one does (``acc`` reads as accuracy)."""
    said = _words(line_text)
    if said & {"acc", "accuracy"}:
        said |= {"acc", "accuracy"}
    hits = [index for index, name in enumerate(["loss", *names]) if _words(name) <= said]
    return hits[0] if len(hits) == 1 else None


def _list_as_number(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """A list ``evaluate``/``test_on_batch``/``train_on_batch`` returned, used as the
    one number it returns for a model compiled without metrics."""
    for place in _number_places(line):
        provenance = _from_call(place, line, context)
        if provenance is not None:
            owner_node = place.func.value if isinstance(place, ast.Call) else None
            assert isinstance(owner_node, ast.expr)
            found, model = value_of(owner_node, line.frame, context)
            count = None
        elif isinstance(place, ast.Name):
            found, held = value_of(place, line.frame, context)
            if not found or type(held) is not list:
                continue
            provenance = _from_assignment(place.id, context)
            assign = provenance.assignment_node if provenance else None
            if assign is None or not isinstance(assign.value, ast.Call):
                continue
            assert isinstance(assign.value.func, ast.Attribute)
            found, model = context.resolve(assign.value.func.value, None)
            count = len(held)
        else:
            continue
        if provenance is None or provenance.method not in _SCORE_CALLS or not found:
            continue
        names = _metric_names(model)
        if not names or (count is not None and count != len(names) + 1):
            continue
        return _score_list_finding(place, provenance, names, parsed, line)
    return None


def _score_list_finding(
    place: ast.expr,
    provenance: Provenance,
    names: list[str],
    parsed: ParsedError,
    line: FailingLine,
) -> Finding | None:
    shown = line.frame.segment(place)
    statement = line.statement
    if not shown or statement is None:
        return None
    method = provenance.method
    listed = ", ".join(code(name) for name in names)
    plural = "metric" if len(names) == 1 else "metrics"
    holds = (
        f"{code(shown)} holds what {code(provenance.call)} returned"
        if provenance.assignment
        else f"{code(shown)} returns"
    )
    rule = (
        f"{holds}: a list of {len(names) + 1} numbers, the loss then {listed} (the {plural} "
        f"the model was compiled with), not one number. `{method}()` returns the loss alone, "
        "a float, only for a model compiled without metrics; with metrics it returns "
        "[loss, metric, ...], and Python cannot use a list as a number"
        f" ({parsed.message.rstrip('.')})."
    )
    indexes = "; ".join(
        f"{code(f'{shown}[{index}]')} is {'the loss' if index == 0 else code(name)}"
        for index, name in enumerate(["loss", *names])
    )
    rule += f" Take the number meant: {indexes}."
    unpacked = ", ".join(_unpacked_name(name) for name in ["loss", *names])
    if provenance.assignment and provenance.assignment_node is not None:
        rule += (
            f" Or unpack it where it is made, {code(unpacked + ' = ' + provenance.call)}, or "
            "give that call `return_dict=True` and read the value by name "
            f"({code(shown + '[' + repr(names[0]) + ']')})."
        )
    else:
        rule += " Or give the call `return_dict=True` and read the value by name."
    text = line.frame.segment(statement) or ""
    index = _meant_index(text, names)
    if index is None:
        return Finding(rule, None)
    subscripted = f"({shown})[{index}]" if not isinstance(place, ast.Name | ast.Call) else None
    fixed = rewrite(line.frame, statement, place, subscripted or f"{shown}[{index}]")
    if not fixed or "\n" in fixed:
        return Finding(rule, None)
    return Finding(rule, code(fixed))


def _unpacked_name(metric: str) -> str:
    name = re.sub(r"\W", "_", metric)
    return name if name.isidentifier() else "metric"


# ------------------------------------------------------------------ logged values
_CALLBACK_METHOD = re.compile(r"^on_(train|test|predict|epoch)_")


# Log keys tf.keras 2 wrote that Keras 3 writes under another name (a learning-rate
# callback's "lr"; "acc" for the "accuracy" metric): too short for difflib to find.
_KERAS2_LOG_KEYS = {
    "lr": "learning_rate",
    "val_lr": "learning_rate",
    "acc": "accuracy",
    "val_acc": "val_accuracy",
}


def _missing_key(
    asked: Asked,
    receiver: ast.expr,
    logged: dict[Any, Any],
    line: FailingLine,
    context: ErrorContext,
    parsed: ParsedError,
) -> Finding | None:
    """A key a History's dict or a callback's ``logs`` does not have."""
    shown = line.frame.segment(receiver)
    kind = _logged_kind(receiver, logged, line, context, parsed)
    if kind is None or not shown or asked.key is None:
        return None
    keys = [key for key in logged if type(key) is str and len(key) <= _MAX_KEY_CHARS]
    if len(keys) > _MAX_KEYS or not keys:
        return None
    listed = ", ".join(f'"{key}"' for key in keys)
    wanted = asked.key
    what = (
        f"{code(shown)} is the dict of values fit logged (the History's `.history`)"
        if kind == "history"
        else f"{code(shown)} is the dict `evaluate(..., return_dict=True)` returned"
        if kind == "evaluate"
        else f"{code(shown)} is the dict of values Keras passed to the callback"
    )
    rule = (
        f"{what}; its keys are {listed}: the loss and each compiled metric, under the name "
        "it was compiled with (a metric object under its `name`: "
        '`keras.metrics.BinaryAccuracy()` is logged as "binary_accuracy"), not under the '
        "name of the quantity."
    )
    section = _LOGS_SECTION if kind == "logs" else _SECTION
    renamed = _KERAS2_LOG_KEYS.get(wanted)
    if kind == "evaluate":
        # evaluate's values are of the data it was given: no ``val_`` prefix, and a
        # tf.keras 2 short name is read as the name Keras 3 returns.
        bare = wanted[4:] if wanted.startswith("val_") and wanted[4:] in keys else None
        meant = bare or (renamed if renamed in keys else None)
        if bare:
            rule += (
                f" evaluate names its values without `val_`: they are of the data it was "
                f"given, so {code(repr(wanted))} is {code(repr(bare))}."
            )
        elif meant:
            older = code(repr(wanted))
            rule += f" {older} is an older Keras's name; Keras 3 returns {code(repr(meant))}."
        nearest = [meant] if meant else difflib.get_close_matches(wanted, keys, n=1, cutoff=0.5)
        return _key_fix(rule, wanted, nearest, bare is None and meant is None, asked, line, section)
    if wanted.startswith("val_") and wanted[4:] in keys:
        rule = (
            f"{what}; its keys are {listed}, and no `val_` key: Keras logs `val_` values only "
            "when fit is given validation data (`validation_data=(x_val, y_val)`, or "
            "`validation_split=0.2` for arrays)."
        )
        fix = _fit_with_validation(receiver, kind, line, context)
        return Finding(rule, fix, section)
    if renamed is not None and renamed in keys:
        # The rule is the rename, not metric naming: tf.keras 2 logged the short name.
        rule = (
            f"{what}; its keys are {listed}. tf.keras 2 logged {code(repr(wanted))}; Keras 3 "
            f"logs the same value as {code(repr(renamed))}, which this dict has: use that key."
        )
        nearest = [renamed]
    else:
        nearest = difflib.get_close_matches(wanted, keys, n=1, cutoff=0.5)
    said_nearest = renamed is None or renamed not in keys
    return _key_fix(rule, wanted, nearest, said_nearest, asked, line, section)


def _key_fix(
    rule: str,
    wanted: str,
    nearest: list[str],
    say_nearest: bool,
    asked: Asked,
    line: FailingLine,
    section: str,
) -> Finding:
    """The finding with the failing line rewritten to read the key meant."""
    if not nearest:
        return Finding(rule, None, section)
    quote = line.frame.segment(asked.node.slice)
    statement = line.statement
    fixed = (
        rewrite(line.frame, statement, asked.node.slice, string_literal(quote, nearest[0]))
        if statement is not None
        else None
    )
    if say_nearest:
        rule += f" The nearest key to {code(repr(wanted))} is {code(repr(nearest[0]))}."
    return Finding(rule, code(fixed) if fixed and "\n" not in fixed else None, section)


def _logged_kind(
    receiver: ast.expr,
    logged: dict[Any, Any],
    line: FailingLine,
    context: ErrorContext,
    parsed: ParsedError,
) -> str | None:
    """ "history" for a History's dict, "logs" for a Keras callback's ``logs``, else None."""
    if isinstance(receiver, ast.Attribute) and receiver.attr == "history":
        found, owner = value_of(receiver.value, line.frame, context)
        if found and _is_history(owner):
            return "history"
    if _evaluated_dict(receiver, context):
        return "evaluate"
    if not isinstance(receiver, ast.Name):
        return None
    function = _enclosing_def(line)
    if (
        function is not None
        and _CALLBACK_METHOD.match(function.name)
        and receiver.id in {argument.arg for argument in function.args.args}
        and raised_through_library(context, parsed)
    ):
        return "logs"
    # ``h = history.history``: a name holding the very dict of a History in the namespace.
    for count, value in enumerate(list(context.namespace.values())):
        if count > _MAX_NAMESPACE:
            break
        if _is_history(value):
            found, held = instance_attribute(value, "history")
            if found and held is logged:
                return "history"
    return None


def _evaluate_with_dict(call: ast.AST | None) -> bool:
    """``<x>.evaluate(..., return_dict=True)`` as written."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "evaluate"
        and any(
            k.arg == "return_dict" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )
    )


def _evaluated_dict(receiver: ast.expr, context: ErrorContext) -> bool:
    """The receiver is a name whose newest assignment in the cells is a Keras model's
    ``evaluate(..., return_dict=True)``."""
    if not isinstance(receiver, ast.Name):
        return False
    newest = next(iter(assignments_in_cells(receiver.id, context)), None)
    call = newest[1].value if newest is not None else None
    if not _evaluate_with_dict(call) or not isinstance(call, ast.Call):
        return False
    assert isinstance(call.func, ast.Attribute)
    found, owner = context.resolve(call.func.value, None)
    return found and value_kind(owner) == "model"


def _enclosing_def(line: FailingLine) -> ast.FunctionDef | None:
    tree = line.frame.tree()
    if tree is None:
        return None
    number = line.frame.position.line
    found: ast.FunctionDef | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef)
            and node.lineno <= number <= (node.end_lineno or node.lineno)
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found


def _fit_with_validation(
    receiver: ast.expr, kind: str, line: FailingLine, context: ErrorContext
) -> str | None:
    """The fit call that made the logs, given ``validation_split=0.2`` (arrays only)."""
    if kind == "logs":
        frames = context.frames()
        outer = frames[-1] if len(frames) > 1 else None
        statement = outer.statement() if outer is not None else None
        if outer is None or statement is None:
            return None
        calls = [
            node
            for node in ast.walk(statement)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fit"
        ]
        return _split_fit(calls, statement, outer, context, "run it again")
    root = receiver.value if isinstance(receiver, ast.Attribute) else None
    if not isinstance(root, ast.Name):
        return None
    for cell, statement in assignments_in_cells(root.id, context):
        call = statement.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            if call.func.attr == "fit":
                return _split_fit([call], statement, cell_frame(cell), context, "this line again")
        return None
    return None


def _split_fit(
    calls: list[ast.Call], statement: ast.stmt, frame: Any, context: ErrorContext, then: str
) -> str | None:
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(k.arg in ("validation_data", "validation_split") for k in call.keywords):
        return None
    data = call.args[0] if call.args else None
    data = next((k.value for k in call.keywords if k.arg == "x"), data)
    if data is None:
        return None
    found, value = context.resolve(data, frame if frame.local_names is not None else None)
    if not found or value_kind(value) not in ("array", "tensor"):
        return None
    source = frame.segment(call)
    fixed = rewrite(frame, statement, call, _with_keyword(source, "validation_split=0.2"))
    if not source or not fixed or "\n" in fixed:
        return None
    return f"{code(fixed)}, then {then}"


RESULT_MISUSED = ErrorFamily(
    "a Keras call's result used as another kind (get_weights, predict, fit, evaluate, logs)",
    messages=(),
    read=_read_result,
    section=_SECTION,
    without_library=True,
)
