"""A Sequential model's inputs or layer outputs read before it has any (issue #25).

``keras.Sequential([...])`` written without ``keras.Input`` is not built: it learns its
input shape only when it first sees data, so until then it has no input tensor and its
layers have no outputs. Taking them for a new model (a feature extractor,
``keras.Model(net.inputs, [net.get_layer(n).output ...])``) raises ``Sequential model
'...' has no defined inputs yet`` or ``The layer ... has never been called and thus has
no defined output``. Keras's words say what is missing, not how to give it.

Recognised by those messages, with the failing line reading a name that holds an unbuilt
``Sequential`` made in the cells by ``keras.Sequential([<layers>])``. The entry says why
and names the fix: ``keras.Input(shape=<one example>)`` as the first item of that list.
The example's shape is given when the notebook's arrays and tensors agree on one: those
whose rank is the first layer's input rank (its ``input_spec``, batch included) give
their shape without the first axis, and for images (three axes or more per example) an
array of one example's rank gives its own shape; several different shapes, or none, and
the fix is named without a shape.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

SECTION = "keras-model-api"
_NO_INPUTS = re.compile(r"Sequential model '[^']*' has no defined (?:inputs|outputs) yet")
_NEVER_CALLED = re.compile(
    r"The layer \S+ has never been called and thus has no defined (?:input|output)"
)
_MAX_NAMES = 2000
_MAX_SHAPES = 40


def _sequential_names(line: FailingLine, context: ErrorContext) -> list[tuple[str, Any]]:
    """The names read on the failing statement that hold an unbuilt Keras Sequential."""
    found: list[tuple[str, Any]] = []
    for node in ast.walk(line.statement) if line.statement is not None else ():
        if not isinstance(node, ast.Name) or any(name == node.id for name, _ in found):
            continue
        held, value = value_of(node, line.frame, context)
        if (
            held
            and value_kind(value) == "model"
            and type(value).__name__ == "Sequential"
            and library_attribute(value, "built") is False
        ):
            found.append((node.id, value))
    return found


def _example_rank(model: Any) -> tuple[int, str] | None:
    """(the axes of one example, the first layer's class) from its ``input_spec``."""
    layers = library_attribute(model, "layers")
    if not layers:
        return None
    first = layers[0]
    spec = library_attribute(first, "input_spec")
    ndim = library_attribute(spec, "ndim") if spec is not None else None
    ndim = ndim if ndim is not None else library_attribute(spec, "min_ndim")
    if type(ndim) is not int or ndim < 2:
        return None
    return ndim - 1, type(first).__name__


def _example_shapes(rank: int, context: ErrorContext) -> dict[tuple[int, ...], list[str]]:
    """One example's shape -> the namespace names holding arrays or tensors that give it."""
    shapes: dict[tuple[int, ...], list[str]] = {}
    for count, (name, value) in enumerate(list(context.namespace.items())):
        if count > _MAX_NAMES or len(shapes) > _MAX_SHAPES:
            break
        if type(name) is not str or name.startswith("_"):
            continue
        if value_kind(value) not in ("array", "tensor", "variable"):
            continue
        described = describe(name, value)
        shape = described.shape if described is not None else None
        if shape is None or None in shape or not (described.dtype or "").startswith("float"):
            continue
        if len(shape) == rank + 1:
            example = tuple(int(size) for size in shape[1:])  # type: ignore[arg-type]
        elif len(shape) == rank and rank >= 3:
            example = tuple(int(size) for size in shape)  # type: ignore[arg-type]
        else:
            continue
        shapes.setdefault(example, []).append(name)
    return shapes


def _made_by(name: str, context: ErrorContext) -> tuple[str, int, str] | None:
    """(the cell's label, the line, the statement's first line) of ``name =
    keras.Sequential([...])`` in the cells, newest first."""
    for cell, statement in assignments_in_cells(name, context):
        value = statement.value
        if (
            isinstance(value, ast.Call)
            and (value.func.attr if isinstance(value.func, ast.Attribute) else "") == "Sequential"
            and value.args
            and isinstance(value.args[0], ast.List)
        ):
            first = (cell.segment(statement) or "").split("\n", 1)[0]
            return cell.label, statement.lineno, first
        return None
    return None


def _read_unbuilt(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    models = _sequential_names(line, context)
    if len(models) != 1:
        return None
    name, model = models[0]
    made = _made_by(name, context)
    if made is None:
        return None
    label, line_number, first_line = made
    keras = context.module_alias("keras", "keras")
    rule = (
        f"{code(name)} is a `{keras}.Sequential` made without `{keras}.Input`, so it is not "
        f"built: it learns its input shape only when it first sees data, and until then it "
        f"has no input tensor and its layers have no outputs to take for another model. "
        f"Give it the shape of one example as the first item of its list"
    )
    ranked = _example_rank(model)
    shapes = _example_shapes(ranked[0], context) if ranked is not None else {}
    where = f"the list of {code(first_line.strip())} (line {line_number} of {label})"
    if ranked is None or len(shapes) != 1:
        return Finding(f"{rule}, `{keras}.Input(shape=...)`, in {where}.", None)
    ((example, holders),) = shapes.items()
    shown = ", ".join(code(holder) for holder in holders[:3])
    rule += (
        f": {shown} give one example of shape {example}, what its first layer (a {ranked[1]}) takes"
    )
    fix = f"{keras}.Input(shape={example}),"
    return Finding(rule + ".", f"in {where}, as its first item: {code(fix)}")


UNBUILT_SEQUENTIAL = ErrorFamily(
    "a Sequential model's inputs or layer outputs read before it was built",
    messages=(Message(_NO_INPUTS), Message(_NEVER_CALLED)),
    read=_read_unbuilt,
    section=SECTION,
    exception_type="AttributeError",
)
