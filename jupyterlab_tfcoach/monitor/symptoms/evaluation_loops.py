"""A loop over validation or test data that trains the model.

A learner's epoch loop often ends with a pass over the validation data, written by
copying the training step (a tape and ``optimizer.apply_gradients``) or by calling the
training step function on the validation batches. Nothing raises: the optimizer steps
on the data meant to measure the model, the validation loss falls because the model
learns those very examples, and it no longer says anything about unseen data.

Found after a cell from its source (``ast``, ``loop_structure``) and the values its
names hold:

- a ``for`` loop whose iterable names validation or test data: one of its identifiers
  has a word (split at ``_``, digits and case changes) among ``VALIDATION_WORDS`` and
  none among ``TRAINING_WORDS``, and holds data after the cell (a dataset, a tensor, a
  NumPy array, a Keras ``PyDataset``: a list of learning rates to test is not);
- in the loop's body (not in a nested ``def``), a call that updates weights through an
  optimizer (``<opt>.apply_gradients``/``apply``/``minimize``), or a call of a function
  whose body makes one (a function of the cell, or a plain function or ``tf.function``
  of the notebook, read from its cell's source; one level deep);
- the symptom, from the objects: the optimizer that call names (a name of the cell, or a
  global of the function) is a Keras optimizer whose step count is past zero after the
  cell, so it did step.

The note names the loop, the line of the update (or of the call of the training step)
and the optimizer with its step count. The fix: the update line deleted, or the call of
the training step replaced by the loss computed in inference mode, built from the
training step's own statements (``loss_fn(y, model(x, training=False))``, in the names
the loop passes) when they are plain enough to rewrite. A loop over validation data that
only computes a loss or metrics, and the training loop itself, are not told.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    library_attribute,
    module_of_class,
)
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import (
    ParsedCell,
    function_tree,
    library_class_names,
)

SECTION = "training-argument"
MAX_NOTES = 1
VALIDATION_WORDS = frozenset(
    {"val", "valid", "validation", "test", "testing", "eval", "evaluation", "holdout", "dev"}
)
TRAINING_WORDS = frozenset({"train", "training", "fit"})
_OPTIMIZER_UPDATES = frozenset({"apply_gradients", "apply", "minimize"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# What data is: a dataset, a tensor, a Keras PyDataset, or a NumPy array.
_DATA_CLASSES = frozenset({"DatasetV2", "Tensor", "PyDataset"})


def _is_data(value: Any) -> bool:
    """Whether ``value`` holds examples (read from its type only): a list of learning
    rates to test is not data."""
    cls = type(value)
    try:
        if module_of_class(cls) == "numpy" and cls.__name__ == "ndarray":
            return True
    except Exception:
        return False
    return bool(_DATA_CLASSES & library_class_names(value))


def _words(identifier: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(identifier)}


def _data_name(cell: ParsedCell, loop: ast.For, namespace: Mapping[str, Any]) -> str | None:
    """The identifier of the loop's iterable that names validation data and holds a value."""
    found = None
    for node in cell.walk(loop.iter):
        identifier = (
            node.id
            if isinstance(node, ast.Name)
            else node.attr
            if isinstance(node, ast.Attribute)
            else None
        )
        if identifier is None:
            continue
        words = _words(identifier)
        if words & TRAINING_WORDS:
            return None
        if found is None and words & VALIDATION_WORDS and isinstance(node, ast.Name):
            if _is_data(namespace.get(node.id)):
                found = node.id
    return found


def _optimizer_update(node: ast.AST) -> str | None:
    """``opt`` for ``opt.apply_gradients(...)`` (a plain name), else None."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    receiver = node.func.value
    if node.func.attr in _OPTIMIZER_UPDATES and isinstance(receiver, ast.Name):
        return receiver.id
    return None


def _steps(optimizer: Any) -> int | None:
    """The optimizer's step count when it is a Keras optimizer, else None."""
    if not {"BaseOptimizer", "Optimizer"} & library_class_names(optimizer):
        return None
    attributes = instance_dict(optimizer)
    variable = attributes.get("_iterations") if attributes is not None else None
    read = library_attribute(variable, "numpy") if variable is not None else None
    if read is None:
        return None
    try:
        return int(read())
    except Exception:
        return None


def _body(cell: ParsedCell, loop: ast.For) -> list[ast.AST]:
    """The loop's body, without nested ``def``s."""
    nested = [n for n in cell.statements_in(loop) if isinstance(n, ast.FunctionDef)]
    return [
        node for node in cell.statements_in(loop) if not any(cell.inside(node, d) for d in nested)
    ]


def _statement(cell: ParsedCell, node: ast.AST) -> ast.stmt | None:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = cell.parents.get(id(current))
    return current if isinstance(current, ast.stmt) else None


def _inference_loss(
    definition: ast.FunctionDef | ast.AsyncFunctionDef,
    call: ast.Call,
    cell: ParsedCell,
    namespace: Mapping[str, Any],
) -> str | None:
    """The training step's loss in inference mode, in the loop's names:
    ``loss_fn(yb, model(xb, training=False))``; None when not plain enough."""
    parameters = [a.arg for a in definition.args.args]
    if call.keywords or len(call.args) != len(parameters):
        return None
    given = {name: cell.text(arg) for name, arg in zip(parameters, call.args, strict=True)}
    prediction: tuple[str, str, str] | None = None  # (bound name, model, input parameter)
    loss: ast.Call | None = None
    for node in ast.walk(definition):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Call)):
            continue
        func = value.func
        if (
            prediction is None
            and isinstance(func, ast.Name)
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id in given
            and "Layer" in library_class_names(namespace.get(func.id))
        ):
            prediction = (target.id, func.id, value.args[0].id)
        elif (
            prediction is not None
            and loss is None
            and isinstance(func, ast.Name | ast.Attribute)
            and len(value.args) == 2
            and not value.keywords
            and any(isinstance(a, ast.Name) and a.id == prediction[0] for a in value.args)
        ):
            loss = value
    if prediction is None or loss is None:
        return None
    bound, model, inputs = prediction
    predicted = f"{model}({given[inputs]}, training=False)"
    arguments = []
    for argument in loss.args:
        if not isinstance(argument, ast.Name):
            return None
        if argument.id == bound:
            arguments.append(predicted)
        elif argument.id in given:
            arguments.append(given[argument.id])
        else:
            return None
    return f"{ast.unparse(loss.func)}({', '.join(arguments)})"


def notes(cell: ParsedCell, namespace: Mapping[str, Any]) -> list[Note]:
    found: list[Note] = []
    for loop in cell.loops:
        if not isinstance(loop, ast.For):
            continue
        data = _data_name(cell, loop, namespace)
        if data is None:
            continue
        note = _loop_note(cell, loop, data, namespace)
        if note is not None:
            found.append(note)
            if len(found) >= MAX_NOTES:
                break
    return found


def _loop_note(
    cell: ParsedCell, loop: ast.For, data: str, namespace: Mapping[str, Any]
) -> Note | None:
    for node in _body(cell, loop):
        optimizer_name = _optimizer_update(node)
        if optimizer_name is not None:
            steps = _steps(namespace.get(optimizer_name))
            if steps:
                return _direct_note(cell, loop, data, node, optimizer_name, steps)
            continue
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        helper = cell.functions.get(node.func.id)
        if helper is None:
            helper = function_tree(namespace.get(node.func.id))
        if helper is None:
            continue
        for inner in ast.walk(helper):
            inner_optimizer = _optimizer_update(inner)
            if inner_optimizer is None:
                continue
            steps = _steps(namespace.get(inner_optimizer))  # a notebook global
            if steps:
                return _helper_note(
                    cell, loop, data, node, helper, inner_optimizer, steps, namespace
                )
    return None


def _header(cell: ParsedCell, loop: ast.For) -> str:
    header = f"for {cell.text(loop.target)} in {cell.text(loop.iter)}: ..."
    return f"`{header}` (line {loop.lineno})"


def _direct_note(
    cell: ParsedCell, loop: ast.For, data: str, update: ast.AST, optimizer: str, steps: int
) -> Note:
    statement = _statement(cell, update)
    written = cell.text(statement if statement is not None else update)
    line = getattr(statement or update, "lineno", loop.lineno)
    text = (
        f"A loop over validation data trains the model: {_header(cell, loop)} runs "
        f"`{written}` (line {line}) on the batches of `{data}`, and `{optimizer}` has "
        f"taken {steps} steps. The model learns the examples meant to measure it, so "
        f"its validation loss falls for the wrong reason and no longer tells how it does "
        f"on unseen data; nothing raises. Validation only computes the loss and metrics: "
        f"delete that line (the tape and the gradients it computed are then not needed "
        f"either), and call the model with `training=False` there."
    )
    return reports.note(text, SECTION)


def _helper_note(
    cell: ParsedCell,
    loop: ast.For,
    data: str,
    call: ast.Call,
    helper: ast.FunctionDef | ast.AsyncFunctionDef,
    optimizer: str,
    steps: int,
    namespace: Mapping[str, Any],
) -> Note:
    statement = _statement(cell, call)
    written = cell.text(statement if statement is not None else call)
    line = getattr(statement or call, "lineno", loop.lineno)
    loss = _inference_loss(helper, call, cell, namespace)
    fix = (
        "Validation only computes the loss and metrics: call the model there with "
        "`training=False`, with no tape and no optimizer."
    )
    if loss is not None:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            replaced = f"{cell.text(statement.targets[0])} = {loss}"
        else:
            replaced = f"val_loss = {loss}"
        if _valid(replaced) and "\n" not in replaced:
            fix = (
                f"Validation only computes the loss and metrics: instead of `{written}`, "
                f"write `{replaced}` (the model in inference mode, no tape, no optimizer)."
            )
    text = (
        f"A loop over validation data trains the model: {_header(cell, loop)} calls "
        f"`{written}` (line {line}) on the batches of `{data}`, and `{helper.name}` "
        f"applies gradients with `{optimizer}`, which has taken {steps} steps. The model "
        f"learns the examples meant to measure it, so its validation loss falls for the "
        f"wrong reason and no longer tells how it does on unseen data; nothing raises. "
        f"{fix}"
    )
    return reports.note(text, SECTION)


def _valid(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
