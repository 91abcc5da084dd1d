"""A model with several named outputs given data or metrics that do not follow its
outputs' names: two families.

- ``FLAT_METRICS``: ``compile(metrics=["accuracy"])`` for a model whose outputs are
  named (given as a dict, or several output layers): Keras 3 cannot tell which output a
  flat list's metrics belong to when the list's length is not the outputs', and raises
  "Invalid `metrics` ... a list matching the output names of the functional model [...]"
  when fit builds the metrics. The reading names the outputs and, when the compile call's
  ``loss`` is a dict that tells each output's task (a cross-entropy or hinge loss: a
  classifier; a squared, absolute or Huber error: a regressor), gives each metric to the
  outputs of its task: ``metrics={"label": ["accuracy"]}`` (outputs left out of the dict
  get no metric).
- ``LABEL_KEYS``: fit or evaluate given labels as a dict (the labels part of a dataset's
  elements, or the ``y`` argument) keyed by other names than the model's outputs. Keras
  matches labels to outputs by key; an unknown key makes it fail later with a message that
  never says so ("Expected float32, but got <key> of type 'str'", an ``OptionalFromValue``
  attribute error). Recognised by its reading alone: a key that is no output's name while
  an output has no key. The fix renames the key, in the dict literal that made the
  labels (in the failing line, or in the statement that built the dataset).

Read from the message, the cells' source (``ast``) and what Keras stored on the model.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    string_literal,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    rewrite_all,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_keras_api import (
    TRAINING_METHODS,
    call_argument,
    compile_calls,
    method_call_on_line,
)
from jupyterlab_tfcoach.monitor.errors.families_missing_keys import (
    _joined,
    _labels,
    _output_names,
    _renamed,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
)

_SECTION = "functional-api"
_MAX_NAMES = 12

# ------------------------------------------------------------------ a flat metrics list
_FLAT_METRICS = re.compile(
    r"Invalid `metrics`\. .*?a list matching the output names of the functional model "
    r"\[(?P<names>[^\]]*)\]",
    re.DOTALL,
)

# A metric's or a loss's task, from the words of its name as written.
_CLASSIFIER_WORDS = re.compile(
    r"acc|auc|precision|recall|crossentropy|hinge|focal|iou|f1|fbeta|true|false", re.IGNORECASE
)
_REGRESSOR_WORDS = re.compile(
    r"^(?:mae|mse|rmse|mape|msle)$|mean_?squared|mean_?absolute|huber|log_?cosh|r2|"
    r"squared_?error|absolute_?error|logarithmic_?error",
    re.IGNORECASE,
)


def _task(node: ast.expr) -> str | None:
    """``"classifier"`` or ``"regressor"`` for a loss or metric as written (a string, a
    class called, a function named), None when its name tells neither."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        name = node.value
    else:
        target = node.func if isinstance(node, ast.Call) else node
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    if not name:
        return None
    classifier = bool(_CLASSIFIER_WORDS.search(name))
    regressor = bool(_REGRESSOR_WORDS.search(name))
    if classifier == regressor:
        return None
    return "classifier" if classifier else "regressor"


def _compile_for(
    model: str, context: ErrorContext, line: FailingLine
) -> tuple[CellFrame, ast.Call, str] | None:
    """The compile call on the failing line, else the newest ``<model>.compile(...)``."""
    here = method_call_on_line(line, ("compile",))
    if here is not None:
        return line.frame, here, "this line"
    for cell, node, receiver in compile_calls(context):
        if receiver == model:
            return cell_frame(cell), node, cell.label
    return None


def _per_output(
    metrics: list[ast.expr], losses: ast.Dict, names: list[str], frame: CellFrame
) -> str | None:
    """``{"label": ["accuracy"]}``: each metric under the outputs whose loss has its task,
    in the order the loss dict lists the outputs; None when a task is not told."""
    task_of: dict[str, str] = {}
    for key, value in zip(losses.keys, losses.values, strict=True):
        if not (isinstance(key, ast.Constant) and key.value in names) or value is None:
            return None
        task = _task(value)
        if task is None:
            return None
        task_of[key.value] = task
    placed: dict[str, list[str]] = {}
    for metric in metrics:
        task = _task(metric)
        written = frame.segment(metric)
        outputs = [name for name, of in task_of.items() if of == task]
        if task is None or not written or "\n" in written or not outputs:
            return None
        for name in outputs:
            placed.setdefault(name, []).append(written)
    quote_from = frame.segment(losses.keys[0]) if losses.keys and losses.keys[0] else None
    parts = [
        f"{string_literal(quote_from, name)}: [{', '.join(placed[name])}]"
        for name in task_of
        if name in placed
    ]
    return "{" + ", ".join(parts) + "}"


def _read_flat_metrics(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = method_call_on_line(line, (*TRAINING_METHODS, "compile"))
    if call is None:
        return None
    model = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    if not model or "\n" in model:
        return None
    names = [part.strip().strip("'\"") for part in error.group("names").split(",") if part.strip()][
        :_MAX_NAMES
    ]
    located = _compile_for(model, context, line)
    if located is None or len(names) < 2:
        return None
    frame, compile_call, where = located
    given = call_argument(compile_call, 3, "metrics")
    if not isinstance(given, ast.List | ast.Tuple):
        return None
    written = frame.segment(given)
    if not written or "\n" in written:
        return None
    listed = ", ".join(f'"{name}"' for name in names)
    count = len(given.elts)
    rule = (
        f"{code(model)} has {len(names)} outputs, named {listed}, and its compile call gave "
        f"{code('metrics=' + written)}, one list of {count} metric{'s' * (count != 1)}: "
        "Keras reads a list as one entry per output, in the order of the output names, "
        "and this one does not have an entry for each, so it cannot tell which output each "
        "metric is for (a classifier's accuracy means nothing for a regressor). Give the "
        "metrics as a dict keyed by output name, with a list for each output that should "
        "be measured."
    )
    losses = call_argument(compile_call, 1, "loss")
    per_output = (
        _per_output(list(given.elts), losses, names, frame)
        if isinstance(losses, ast.Dict)
        else None
    )
    if per_output is None:
        return Finding(rule, None)
    place = "on this line" if where == "this line" else f"in the compile call of {where}"
    again = {"this line": "", "this cell": ", then run the cell again"}.get(
        where, ", then run this line again"
    )
    return Finding(
        rule + " The loss dict tells which outputs are classifiers and which regressors; "
        "each metric goes to the outputs of its kind.",
        f"{place}, replace {code('metrics=' + written)} by {code('metrics=' + per_output)}{again}",
    )


FLAT_METRICS = ErrorFamily(
    "a flat metrics list given to compile for a model with several named outputs",
    messages=(Message(_FLAT_METRICS),),
    exception_type="ValueError",
    read=_read_flat_metrics,
    section=_SECTION,
)


# ------------------------------------------------------------------ labels' keys
def _quoted(name: str) -> str:
    return f'"{name}"'


def _string_keys(held: Any) -> list[str] | None:
    if type(held) is not dict:
        return None
    keys = list(held)[:_MAX_NAMES]
    return keys if keys and all(type(key) is str for key in keys) else None


def _labels_dict(
    call: ast.Call, line: FailingLine, context: ErrorContext, unknown: list[str]
) -> tuple[CellFrame, ast.Dict, str] | None:
    """The dict literal that made the labels, holding the ``unknown`` keys: the ``y``
    argument of the failing call, else the one in the newest statement that assigned the
    name the call was given (its labels argument, or the dataset of its first)."""
    labels = call_argument(call, 1, "y")
    given = labels if labels is not None else (call.args[0] if call.args else None)
    if given is None:
        return None
    if isinstance(given, ast.Dict):
        return line.frame, given, "this line"
    names = [node.id for node in ast.walk(given) if isinstance(node, ast.Name)]
    for name in names[:3]:
        for cell, assignment in assignments_in_cells(name, context):
            for node in ast.walk(assignment.value):
                if isinstance(node, ast.Dict) and set(unknown) <= {
                    key.value for key in node.keys if isinstance(key, ast.Constant)
                }:
                    where = f"line {node.lineno} of {cell.label}"
                    return cell_frame(cell), node, where
            break
    return None


def _read_label_keys(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = method_call_on_line(line, TRAINING_METHODS)
    if call is None:
        return None
    found, model = value_of(call.func.value, line.frame, context)  # type: ignore[attr-defined]
    names = _output_names(model) if found else None
    model_source = segment_of(line, call.func.value)  # type: ignore[attr-defined]
    if not names or len(names) < 2 or not model_source or "\n" in model_source:
        return None
    given = call_argument(call, 1, "y")
    if isinstance(given, ast.Dict):
        written = [key.value for key in given.keys if isinstance(key, ast.Constant)]
        keys = written if len(written) == len(given.keys) else None
        keys = keys if keys and all(type(key) is str for key in keys) else None
    else:
        keys = _string_keys(_labels(call, line, context))
    if keys is None:
        return None
    unknown = [key for key in keys if key not in names]
    unlabelled = [name for name in names if name not in keys]
    if not unknown or not unlabelled:
        return None
    listed = ", ".join(_quoted(name) for name in names)
    rule = (
        f"{code(model_source)}'s outputs are named {listed}, and the labels given to "
        f"{code(call.func.attr)} are a dict keyed by "  # type: ignore[attr-defined]
        f"{', '.join(_quoted(key) for key in keys)}: Keras matches "
        "each label to the output of the same name, so "
        f"{' and '.join(code(_quoted(key)) for key in unknown)} "
        f"{'matches' if len(unknown) == 1 else 'match'} no output and "
        f"{' and '.join(code(_quoted(name)) for name in unlabelled)} "
        f"{'gets' if len(unlabelled) == 1 else 'get'} no labels. The message above is what "
        "that mismatch became further on."
    )
    renames = _renamed(keys, names)
    read = _labels_dict(call, line, context, unknown)
    if renames is None or read is None:
        return Finding(rule + f" Key the labels by the output names, {listed}.", None)
    frame, literal, where = read
    parts = [
        (key, string_literal(frame.segment(key), renames[key.value]))
        for key in literal.keys
        if isinstance(key, ast.Constant) and key.value in renames
    ]
    fixed = rewrite_all(frame, literal, parts)
    if not fixed or not parts:
        return Finding(rule + f" Key the labels by the output names, {listed}.", None)
    said = ", ".join(f'"{old}" -> "{new}"' for old, new in renames.items())
    place = "in this line" if where == "this line" else f"on {where}"
    again = ", then run the cell that makes them again" if "this cell" not in where else ""
    return Finding(
        rule + f" Rename the labels' keys to the outputs' names ({said}) {place}.",
        f"replace {code(_joined(frame.segment(literal) or ''))} by {code(_joined(fixed))}{again}",
    )


LABEL_KEYS = ErrorFamily(
    "labels given to fit as a dict keyed by other names than the model's outputs",
    messages=(),
    read=_read_label_keys,
    section=_SECTION,
)
