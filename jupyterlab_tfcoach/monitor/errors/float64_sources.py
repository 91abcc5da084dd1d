"""A float64 value made earlier, meeting float32 deep inside the learner's functions (issue
#25): ``simulate(rate, 0.1, start)`` with ``start = tf.constant(np.array([y0, 0.0]))``
(NumPy makes float64 from Python floats), failing three calls down in ``-rate * x``.

A cast at the failing line makes that line run, but every value computed from the float64
argument is float64 too, so the next operation that meets a float32 fails the same way. The
value is fixed where it is made. (A function the cell calls itself is fixed by one cast
where its parameter comes in: ``dtypes._cast_at_source``.) The reading follows the failing
operand back: a name of the failing function that is one of its parameters, or is assigned
from an expression reading one (``x = state[0]``), then out through each calling function
(each must hold a parameter of that dtype) to the running cell, where exactly one name the
failing statement passes holds a value of that dtype; or a name the function reads from
the notebook's namespace (a global). That name's newest assignment in the cells is
rewritten to make the wanted dtype: ``tf.constant(...)`` given ``dtype=``, a NumPy array
``.astype(...)``, anything else wrapped in ``tf.cast``.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    innermost_function,
    is_postfix_safe,
    kind_of,
)

# NumPy functions that make float64 unless told otherwise: from Python floats, or always.
_NUMPY_FLOAT64_MAKERS = frozenset(
    {
        "array",
        "asarray",
        "linspace",
        "uniform",
        "normal",
        "rand",
        "randn",
        "random",
        "standard_normal",
    }
)


def _dtype_name(value: object) -> str | None:
    if kind_of(value) not in ("tensor", "array"):
        return None
    try:
        dtype = value.dtype  # type: ignore[attr-defined]
        name = dtype.name if kind_of(value) == "tensor" else str(dtype)
    except Exception:
        return None
    return name if type(name) is str else None


def _function(frame: CellFrame) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    tree = frame.tree()
    return None if tree is None else innermost_function(tree, frame.position.line)


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _assigned_values(function: ast.AST, name: str) -> list[ast.expr]:
    values = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            values.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) and (
            isinstance(node.target, ast.Name) and node.target.id == name
        ):
            return []  # made in a loop or step by step: not followed
    return values


def _from_parameter(operand: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the operand's value comes in through a parameter: a parameter itself, or a
    name every assignment of which reads one (``x = state[0]``)."""
    parameters = _parameters(function)
    for name in _loaded(operand):
        if name in parameters:
            return True
        values = _assigned_values(function, name)
        if values and all(_loaded(value) & parameters for value in values):
            return True
    return False


def _global_of_dtype(
    operand: ast.expr,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    frame: CellFrame,
    context: ErrorContext,
    dtype: str,
) -> str | None:
    """The one name the operand reads that the function does not bind and the namespace
    holds with ``dtype``."""
    bound = _parameters(function) | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    found = [
        name
        for name in _loaded(operand) - bound
        if _dtype_name(context.namespace.get(name)) == dtype
    ]
    return found[0] if len(found) == 1 else None


def _passed_from_cell(
    frames: list[CellFrame], index: int, context: ErrorContext, dtype: str
) -> tuple[str, CellFrame] | None:
    """Out through the calling functions to the running cell: the one name its failing
    statement passes that holds ``dtype``, each function between holding a parameter of it."""
    for frame in frames[index + 1 :]:
        if frame.local_names is None:
            statement = frame.statement()
            if statement is None:
                return None
            names = [
                name
                for name in sorted(_loaded(statement))
                if _dtype_name(context.lookup(name, frame)[1]) == dtype
            ]
            return (names[0], frame) if len(names) == 1 else None
        function = _function(frame)
        if function is None:
            return None
        if not any(
            _dtype_name(frame.local_names.get(name)) == dtype for name in _parameters(function)
        ):
            return None
    return None


def _passed_directly(
    cell: CellFrame,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    context: ErrorContext,
    dtype: str,
) -> tuple[str, CellFrame] | None:
    """The one name of ``dtype`` the running cell's failing statement gives, as it is, as
    an argument of its call of ``function`` (``forward(weights, x_grid)``); an expression
    (``wave(tf.constant(xs))``) is left to the cast where the parameter comes in."""
    statement = cell.statement()
    if statement is None:
        return None
    names = set()
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        if not (
            (isinstance(called, ast.Name) and called.id == function.name)
            or (isinstance(called, ast.Attribute) and called.attr == function.name)
        ):
            continue
        for argument in (*node.args, *(keyword.value for keyword in node.keywords)):
            if (
                isinstance(argument, ast.Name)
                and _dtype_name(context.lookup(argument.id, cell)[1]) == dtype
            ):
                names.add(argument.id)
    return (names.pop(), cell) if len(names) == 1 else None


def made_earlier(
    frame: CellFrame, context: ErrorContext, operand: ast.expr, dtype: str, target: str, tf: str
) -> str | None:
    """The sentence naming where the operand's ``dtype`` was made and the fix there, or
    None when the operand is made at the failing line or its origin is not one name."""
    if frame.local_names is None:
        return None  # the running cell itself: the other readings apply
    function = _function(frame)
    if function is None:
        return None
    frames = context.frames()
    index = next((i for i, found in enumerate(frames) if found is frame), None)
    if index is None:
        return None
    passed = None
    if _from_parameter(operand, function):
        if index + 1 >= len(frames):
            return None
        if frames[index + 1].local_names is None:
            # Called by the cell itself: one cast where the parameter comes in fixes the
            # whole call (``_cast_at_source``), unless the cell passes a name NumPy made
            # float64 by default (``np.linspace``, ``np.random``): the function is right
            # and the data is made in the wrong dtype, so it is fixed where it is made.
            passed = _passed_directly(frames[index + 1], function, context, dtype)
            numpy_only = True
        else:
            passed = _passed_from_cell(frames, index, context, dtype)
            numpy_only = False
        how = "a {dtype} value that {statement} ({where}) passes down to {function}"
    else:
        numpy_only = False
        name = _global_of_dtype(operand, function, frame, context, dtype)
        passed = (name, frames[-1]) if name is not None else None
        how = "a {dtype} value {function} reads from the notebook"
    if passed is None:
        return None
    name, outer = passed
    made = _assignment_fix(name, outer, context, target, tf)
    if made is None:
        return None
    written, fixed, where, numpy_default = made
    if numpy_only and not (numpy_default and dtype == "float64"):
        return None
    statement = outer.statement()
    shown = outer.segment(statement) if statement is not None else None
    called = code(shown) if shown and "\n" not in shown and len(shown) <= 100 else "the call"
    origin = how.format(
        function=code(function.name),
        statement=called,
        where=f"line {outer.position.line} of this cell",
        dtype=dtype,
    )
    numpy_made = numpy_default and dtype == "float64" and "float64" not in written
    because = ""
    if numpy_made:
        because = (
            " (NumPy makes float64 from Python floats)"
            if numpy_default in ("array", "asarray")
            else f" (NumPy's {code(numpy_default or '')} makes float64 unless told otherwise)"
        )
    return (
        f"The {dtype} comes from {code(name)}, {origin}{because}; every value computed from "
        f"it is {dtype} too, so a cast at this line would only move the error to the next "
        f"operation. Make it {target} once, where it is made ({code(written)}, {where}). "
        f"Fix: {code(fixed)}."
    )


def _assignment_fix(
    name: str, outer: CellFrame, context: ErrorContext, target: str, tf: str
) -> tuple[str, str, str, str | None] | None:
    """(the assignment, it making ``target``, where, the NumPy function whose default made
    the dtype or None) for the newest assignment of ``name`` in the cells above the running
    line."""
    running = outer.source()
    for cell, assignment in assignments_in_cells(name, context):
        if cell.source == running and assignment.lineno >= outer.position.line:
            continue
        written, value = cell.segment(assignment), cell.segment(assignment.value)
        if not written or not value or "\n" in written:
            return None
        held = context.namespace.get(name)
        node = assignment.value
        if kind_of(held) == "array":
            np = context.module_alias("numpy", "np")
            wrapped = value if is_postfix_safe(node) else f"({value})"
            fixed = f"{name} = {wrapped}.astype({np}.{target})"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("constant", "convert_to_tensor")
            and len(node.args) == 1
            and not node.keywords
        ):
            fixed = f"{name} = {value[:-1].rstrip()}, dtype={tf}.{target})"
        else:
            fixed = f"{name} = {tf}.cast({value}, {tf}.{target})"
        numpy_default = next(
            (
                n.attr
                for n in ast.walk(node)
                if isinstance(n, ast.Attribute) and n.attr in _NUMPY_FLOAT64_MAKERS
            ),
            None,
        )
        return written, fixed, f"line {assignment.lineno} of {cell.label}", numpy_default
    return None
