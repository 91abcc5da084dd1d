"""A width a ``Bidirectional`` layer doubled, met by a tensor of the width its layer was given.

``keras.layers.Bidirectional(GRU(units))`` runs the layer forwards and backwards and, by
default (``merge_mode="concat"``), joins the two outputs on the last axis: its output has
``2 * units`` features, and a tensor made by another layer of ``units`` units no longer
fits it (attention scores ``tf.matmul(dec, enc, transpose_b=True)``, a sum, a state).
The error is raised far from its cause, where the two widths meet; a patch at that line
(a slice, a reshape) would run and compute something else.

Told when the two sizes of a shape error are ``n`` and ``2 * n`` and a name read by the
failing statement of a frame the error went through (the running cell's call first)
holds the wider one on its last axis and was assigned, at the top level of a cell, the
output of a ``Bidirectional`` layer that concatenates: written inline,
``enc, *states = layers.Bidirectional(layers.GRU(U, ...))(x)``, or a name bound to such
a layer. When another name of those statements holds the narrow width and was assigned
the output of a layer made with its units as first argument (or ``units=``) on one line,
the fix is that statement with the units doubled; else the cause is named without a fix.
Read from the cells' source and the values' shapes; nothing runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import SourceCell, cell_frame, error_cells
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    class_mro,
    code,
    instance_attribute,
    on_one_line,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import _shape
from jupyterlab_tfcoach.monitor.stored_state import is_library_class

SECTION = "functional-api"
# A layer's units: its first positional argument or this keyword.
_UNITS = "units"


def _targets(statement: ast.Assign) -> Iterator[str]:
    for target in statement.targets:
        elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        for element in elements:
            if isinstance(element, ast.Starred):
                element = element.value
            if isinstance(element, ast.Name):
                yield element.id


def _assignment(name: str, cells: list[SourceCell]) -> tuple[SourceCell, ast.Assign] | None:
    """The newest top-level statement of the cells that binds ``name`` (alone or in a
    tuple), newest cell first."""
    for cell in cells:
        tree = cell.tree()
        if tree is None:
            continue
        for statement in reversed(tree.body):
            if isinstance(statement, ast.Assign) and name in _targets(statement):
                return cell, statement
    return None


def _library_object(node: ast.AST, context: ErrorContext) -> Any:
    """What ``layers.Bidirectional`` or ``keras.layers.GRU`` names: a dotted path from a
    name of the namespace through modules only (no user attribute runs)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    value = context.namespace.get(node.id)
    for part in reversed(parts):
        if not isinstance(value, ModuleType):
            return None
        value = vars(value).get(part)
    return value


def _library_class_named(value: Any, names: frozenset[str]) -> bool:
    return isinstance(value, type) and value.__name__ in names and is_library_class(value)


def _is_instance_of(value: Any, class_name: str) -> bool:
    return any(k.__name__ == class_name and is_library_class(k) for k in class_mro(value))


def _concatenating_bidirectional(
    layer_node: ast.expr, context: ErrorContext
) -> tuple[bool, ast.expr | None]:
    """Whether ``layer_node`` (the callee of the outer call) is a Bidirectional layer that
    concatenates its two directions, and the node of the layer it wraps (if written)."""
    if isinstance(layer_node, ast.Call):
        if not _library_class_named(
            _library_object(layer_node.func, context), frozenset({"Bidirectional"})
        ):
            return False, None
        for keyword in layer_node.keywords:
            if keyword.arg == "merge_mode" and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value == "concat"
            ):
                return False, None
        wrapped = layer_node.args[0] if layer_node.args else None
        for keyword in layer_node.keywords:
            if keyword.arg == "layer":
                wrapped = keyword.value
        return True, wrapped
    if isinstance(layer_node, ast.Name):
        value = context.namespace.get(layer_node.id)
        if not _is_instance_of(value, "Bidirectional"):
            return False, None
        found, mode = instance_attribute(value, "merge_mode")
        if not (found and mode == "concat"):
            return False, None
        # The layer it wraps, as the statement that made it wrote it.
        made = _assignment(layer_node.id, error_cells(context))
        if made is not None and isinstance(made[1].value, ast.Call):
            inline, wrapped = _concatenating_bidirectional(made[1].value, context)
            return True, wrapped if inline else None
        return True, None
    return False, None


def _units_node(layer_call: ast.expr | None) -> ast.expr | None:
    """``U`` of ``layers.GRU(U, ...)`` or ``layers.Dense(units=U)``."""
    if not isinstance(layer_call, ast.Call):
        return None
    for keyword in layer_call.keywords:
        if keyword.arg == _UNITS:
            return keyword.value
    if layer_call.args and not isinstance(layer_call.args[0], ast.Starred):
        return layer_call.args[0]
    return None


def _last_axis(value: Any) -> int | None:
    shape = _shape(value)
    return shape[-1] if shape else None


def _read_names(frame: CellFrame) -> list[str]:
    names: list[str] = []
    for part in frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id not in names:
                    names.append(node.id)
    return names


def _doubled_units(
    name: str, cells: list[SourceCell], width: int, context: ErrorContext
) -> str | None:
    """The statement that made ``name`` (``width`` features) with its layer's units doubled:
    ``dec = layers.GRU(2 * UNITS, return_sequences=True)(emb)``; None when it is not one
    line whose layer is written with its units there."""
    found = _assignment(name, cells)
    if found is None:
        return None
    cell, statement = found
    value = statement.value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Call)):
        return None
    layer_class = _library_object(value.func.func, context)
    if not (isinstance(layer_class, type) and is_library_class(layer_class)):
        return None
    units = _units_node(value.func)
    if units is None:
        return None
    if isinstance(units, ast.Constant) and type(units.value) is int:
        if units.value != width:
            return None
        doubled = str(2 * width)
    elif isinstance(units, ast.Name):
        if context.namespace.get(units.id) != width:
            return None
        doubled = f"2 * {units.id}"
    else:
        return None
    fixed = rewrite(cell_frame(cell), statement, units, doubled)
    return fixed if fixed and "\n" not in fixed else None


def bidirectional_width(
    sizes: tuple[int | None, int | None], context: ErrorContext
) -> tuple[str, str | None] | None:
    """The cause and the fix (or None) of a clash of ``n`` against ``2 * n`` features whose
    wider side a concatenating Bidirectional layer made, or None."""
    try:
        return _bidirectional_width(sizes, context)
    except Exception:
        return None


def _bidirectional_width(sizes: tuple[int | None, int | None], context: ErrorContext) -> str | None:
    first, second = sizes
    if not (type(first) is int and type(second) is int and first > 0 and second > 0):
        return None
    narrow, wide = min(first, second), max(first, second)
    if wide != 2 * narrow:
        return None
    cells = error_cells(context)
    # The running cell's statement first: it names the tensors the learner made.
    for frame in reversed(context.frames()):
        names = _read_names(frame)
        values = {name: context.lookup(name, frame) for name in names}
        widths = {name: _last_axis(value) for name, (found, value) in values.items() if found}
        for name in names:
            if widths.get(name) != wide:
                continue
            found = _assignment(name, cells)
            if found is None:
                continue
            cell, statement = found
            value = statement.value
            if not isinstance(value, ast.Call):
                continue
            concatenates, wrapped = _concatenating_bidirectional(value.func, context)
            if not concatenates:
                continue
            narrow_names = [other for other in names if widths.get(other) == narrow]
            return _told(name, cell, statement, wrapped, narrow, narrow_names, cells, context)
    return None


def _told(
    name: str,
    cell: SourceCell,
    statement: ast.Assign,
    wrapped: ast.expr | None,
    narrow: int,
    narrow_names: list[str],
    cells: list[SourceCell],
    context: ErrorContext,
) -> tuple[str, str | None]:
    inner = on_one_line(cell.segment(wrapped) or "") if wrapped is not None else ""
    around = f" around {code(inner)}" if inner and len(inner) <= 80 else ""
    units = _units_node(wrapped)
    units_source = on_one_line(cell.segment(units) or "") if units is not None else ""
    doubled = f"2 * {units_source} = {2 * narrow}" if units_source else f"2 * {narrow}"
    where = f"line {statement.lineno} of {cell.label}"
    text = (
        f"{code(name)} is the output of the {code('Bidirectional')} layer{around} ({where}): "
        "Bidirectional runs its layer forwards and backwards and joins the two outputs on "
        f"the last axis, so {code(name)} has {doubled} features"
    )
    if narrow_names:
        text += f", where {code(narrow_names[0])} has {narrow}"
    text += (
        ". A change at the failing line would not fix that: the widths must agree where "
        "the layers are made."
    )
    for other in narrow_names:
        fixed = _doubled_units(other, cells, narrow, context)
        if fixed is not None:
            return text, f"make the layer that computes {code(other)} as wide, {code(fixed)}"
    return (
        f"{text} Give the other side {2 * narrow} units, or project {code(name)} to "
        f"{narrow} features with a Dense layer."
    ), None
