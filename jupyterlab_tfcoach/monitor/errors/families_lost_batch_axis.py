"""One example given to a model or layer built on batches (issue #25): ``net(x_val[0])``
after ``net`` was trained on ``x_train`` of shape ``(N, 16)``.

The example has lost the batch axis, so every op inside the learner's own ``call``
(a ``tf.transpose(x, [1, 0, 2])``, a matmul, a reshape) meets a tensor one axis short and
fails there, deep in code that is right for batches; a fix read at that op (edit the
perm) would break the layer for real batches. This reading looks one level up, at the
running cell's line: when the error happened inside the learner's code that the line
called, and the line calls a built Keras model or layer with one positional argument
whose shape is the built input shape without its first axis, the argument is named as a
single example and given its batch axis back where it is written (``x_val[0]`` ->
``x_val[0:1]``, anything else ``arg[None]``), the layer left as it is.

The same loss happens with a function of the learner's own that takes rows of points
(``kernel(x_train, x_test[60])``): when the error is about shapes or axes and one argument
is ``x[i]`` (written inline, or a name the running cell assigned so) whose array has the
same shape past its first axis as exactly one sibling argument, the integer index is named
as what dropped the axis, and the fix slices instead (``x_test[60:61]``) where it is
written, the function left as it is.

And through a function of the learner's that hands one of its parameters on to a built
model (``decode(clips[2])`` with ``net(x)`` inside): the function is right for the
batches it is also called with, so the batch axis is added where the running cell calls
it, never inside it (the generic missing-axis reading of ``shapes.py`` defers to this).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    built_input_shape,
    describe,
    layer_input_shape,
    model_input_shapes,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised

# Module 2's section on the batch axis every Keras layer expects first.
SECTION = "batch-dimension"


def _built_shape(target: Any) -> tuple[int | None, ...] | None:
    shape = layer_input_shape(target)
    if shape is not None:
        return shape
    built = built_input_shape(target)
    if built is not None:
        return built
    shapes = model_input_shapes(target) if value_kind(target) == "model" else []
    return shapes[0] if len(shapes) == 1 else None


def _one_example(shape: tuple[int | None, ...], built: tuple[int | None, ...]) -> bool:
    """``shape`` is ``built`` without its first (batch) axis."""
    if len(shape) != len(built) - 1 or not shape:
        return False
    return all(b is None or s is None or s == b for s, b in zip(shape, built[1:], strict=True))


def _with_batch_axis(node: ast.expr, source: str) -> str:
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
        and node.slice.value >= 0
    ):
        base = source[: source.rfind("[")]
        index = node.slice.value
        return f"{base}[{index}:{index + 1}]" if index else f"{base}[:1]"
    atom = isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
    return f"{source}[None]" if atom else f"({source})[None]"


def _shape_of(node: ast.expr, frame: Any, context: ErrorContext) -> tuple[int | None, ...] | None:
    """The shape ``node`` holds; ``x[i]`` (a constant index) read as ``x``'s shape without
    its first axis, so no indexing runs."""
    index_dropped = (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    )
    target = node.value if isinstance(node, ast.Subscript) and index_dropped else node
    source = frame.segment(target)
    found, value = value_of(target, frame, context)
    if not found or not source:
        return None
    operand = describe(source, value)
    if operand is None or operand.shape is None:
        return None
    shape = tuple(operand.shape)
    if index_dropped:
        return shape[1:] if shape else None
    return shape


def _read_lost_batch_axis(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    # Recognised by the reading: any error inside the called code (for a function of the
    # learner's, one about shapes or axes).
    frames = context.frames()
    if len(frames) < 2 or frames[-1] is line.frame:
        return None
    outer = frames[-1]
    statement = outer.statement()
    if statement is None:
        return None
    for part in outer.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
                continue
            found, target = value_of(node.func, outer, context)
            if not found or value_kind(target) not in ("model", "layer"):
                continue
            built = _built_shape(target)
            argument = node.args[0]
            source = outer.segment(argument)
            shape = _shape_of(argument, outer, context) if source else None
            if built is None or shape is None or not source or not _one_example(shape, built):
                continue
            callee = outer.segment(node.func) or ""
            batched = _with_batch_axis(argument, source)
            rule = (
                f"{code(callee)} was built on batches {show_shape(built)}: its first axis "
                f"counts the examples. {code(source)} is {show_shape(shape)}, one "
                f"example without that axis, so the code it runs meets a tensor one axis "
                f"short and fails inside (where it is right for batches: leave it as it "
                f"is). Give it a batch of one, {code(batched)} "
                f"{show_shape((1, *shape))}"
            )
            fixed = rewrite(outer, statement, argument, batched)
            fix = code(fixed) if fixed and "\n" not in fixed else None
            return Finding(rule + ".", fix)
    through = _through_own_function(frames, outer, statement, context)
    if through is not None:
        return through
    if _SHAPE_WORDS.search(error.parsed.message):
        for part in outer.header():
            for node in ast.walk(part):
                if isinstance(node, ast.Call):
                    found_here = _indexed_beside_sibling(node, outer, statement, context)
                    if found_here is not None:
                        return found_here
    return None


def _enclosing_def(frame: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost ``def`` of the cell whose body holds the frame's failing line."""
    found = [
        node
        for node in frame.enclosing_functions()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    return max(found, key=lambda node: node.lineno) if found else None


def _model_call_on_parameter(
    frame: Any, function: ast.FunctionDef | ast.AsyncFunctionDef, context: ErrorContext
) -> tuple[ast.Call, str, Any, tuple[int | None, ...]] | None:
    """In ``frame``'s failing statement, a built model or layer called on one positional
    argument that is a parameter of ``function`` still holding what it was given: the
    call, the parameter, its value and the model's built shape."""
    parameters = {a.arg for a in [*function.args.posonlyargs, *function.args.args]}
    parameters |= {a.arg for a in function.args.kwonlyargs}
    locals_ = frame.local_names
    if locals_ is None:
        return None
    for part in frame.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.Call) and len(node.args) == 1):
                continue
            argument = node.args[0]
            if not (isinstance(argument, ast.Name) and argument.id in parameters):
                continue
            found, target = value_of(node.func, frame, context)
            if not found or value_kind(target) not in ("model", "layer"):
                continue
            built = _built_shape(target)
            if built is None or argument.id not in locals_:
                continue
            return node, argument.id, locals_[argument.id], built
    return None


def _given_at(
    call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str
) -> ast.expr | None:
    """The argument of ``call`` that binds ``parameter`` of ``function``, as Python binds
    it (positionally, or by keyword); None when a ``*args`` or ``**kwargs`` hides it."""
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    if parameter in positional:
        index = positional.index(parameter)
        if index < len(call.args):
            return call.args[index]
    return None


def example_through_helper(context: ErrorContext) -> bool:
    """Whether the error is one example the running cell gave a function of the learner's
    that hands it on to a model built on batches: this family tells it (at the call site),
    not the generic missing-axis reading (which would edit the function)."""
    try:
        frames = context.frames()
        if len(frames) < 2:
            return False
        outer = frames[-1]
        statement = outer.statement()
        if statement is None:
            return False
        return _through_own_function(frames, outer, statement, context) is not None
    except Exception:
        return False


def _through_own_function(
    frames: list[Any], outer: Any, statement: ast.stmt, context: ErrorContext
) -> Finding | None:
    """One example given to a function of the learner's that hands it on to a model built
    on batches (``decode(clips[2])`` with ``net(x)`` inside): the function is right for
    batches, the call site dropped the axis, so the fix adds it there."""
    inner = frames[-2]
    function = _enclosing_def(inner)
    if function is None:
        return None
    found = _model_call_on_parameter(inner, function, context)
    if found is None:
        return None
    model_call, parameter, given, built = found
    operand = describe(parameter, given)
    if operand is None or operand.shape is None or operand.kind not in ("array", "tensor"):
        return None
    shape = tuple(operand.shape)
    if not _one_example(shape, built):
        return None
    for part in outer.header():
        for node in ast.walk(part):
            if not isinstance(node, ast.Call):
                continue
            known, callee = value_of(node.func, outer, context)
            code_object = getattr(callee, "__code__", None) if known else None
            if (
                not _own_function(callee)
                or getattr(code_object, "co_name", None) != function.name
                or getattr(code_object, "co_filename", None) != inner.filename
            ):
                continue
            argument = _given_at(node, function, parameter)
            source = outer.segment(argument) if argument is not None else None
            if argument is None or not source or "\n" in source:
                continue
            # The same object, or (an array indexed anew) one of the same shape.
            held, value = value_of(argument, outer, context)
            if not (held and value is given) and _shape_of(argument, outer, context) != shape:
                continue
            batched = _batch_of_one(argument, source, outer, context)
            helper = outer.segment(node.func) or function.name
            model_source = inner.segment(model_call) or ""
            model = inner.segment(model_call.func) or ""
            rule = (
                f"{code(helper)} hands its {code(parameter)} to {code(model_source)}, and "
                f"{code(model)} was built on batches {show_shape(built)}: its first axis "
                f"counts the examples. {code(source)} is {show_shape(shape)}, one example "
                f"without that axis, so the model meets a tensor one axis short. "
                f"{code(helper)} is right for batches (leave it as it is): give it a batch "
                f"of one where it is called, {code(batched)} {show_shape((1, *shape))}"
            )
            fixed = rewrite(outer, statement, argument, batched)
            fix = code(fixed) if fixed and "\n" not in fixed else None
            return Finding(rule + ".", fix)
    return None


def _batch_of_one(node: ast.expr, source: str, frame: Any, context: ErrorContext) -> str:
    """``x[i]`` of an array or tensor kept as a slice (``x[i:i + 1]``); anything else
    (an item of a Python list, a name) given a new first axis, ``arg[None]``."""
    if isinstance(node, ast.Subscript):
        known, base = value_of(node.value, frame, context)
        if not (known and value_kind(base) in ("array", "tensor", "variable")):
            return f"{source}[None]"
    return _with_batch_axis(node, source)


# An error about shapes, ranks or axes: what an operand one axis short meets inside.
_SHAPE_WORDS = re.compile(r"rank|ndims|dimension|axis|axes|shape|Shape|Dimension")


def _own_function(target: Any) -> bool:
    """A plain Python function of the learner's (not the library's, not a model)."""
    if type(target).__name__ != "function":
        return False
    module = getattr(target, "__module__", None)
    return type(module) is str and not module.startswith(("tensorflow", "keras", "numpy"))


def _index_assignment(
    name: str, frame: Any, before: int
) -> tuple[ast.Assign, ast.Subscript] | None:
    """The running cell's last ``name = x[i]`` (a constant integer index) before line
    ``before``; None when ``name`` is assigned otherwise after it."""
    tree = frame.tree()
    if tree is None:
        return None
    found: tuple[ast.Assign, ast.Subscript] | None = None
    for statement in tree.body:
        if statement.lineno >= before:
            break
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            if any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                for n in ast.walk(statement)
            ):
                found = None
            continue
        target = statement.targets[0]
        if not (isinstance(target, ast.Name) and target.id == name):
            continue
        value = statement.value
        if (
            isinstance(value, ast.Subscript)
            and isinstance(value.slice, ast.Constant)
            and type(value.slice.value) is int
        ):
            found = (statement, value)
        else:
            found = None
    return found


def _array_shape(
    node: ast.expr, frame: Any, context: ErrorContext
) -> tuple[int | None, ...] | None:
    source = frame.segment(node)
    found, value = value_of(node, frame, context)
    if not found or not source or value_kind(value) not in ("array", "tensor", "variable"):
        return None
    operand = describe(source, value)
    return tuple(operand.shape) if operand is not None and operand.shape is not None else None


def _indexed_beside_sibling(
    call: ast.Call, frame: Any, statement: ast.stmt, context: ErrorContext
) -> Finding | None:
    """A call of the learner's own function given ``x[i]`` (inline, or a name the running
    cell assigned so), one axis short of a sibling argument that has the same shape past
    its first axis as ``x`` (``rbf(x_train, x_test[60])``, x_train (30, 1), x_test
    (120, 1)): the integer index dropped the axis the function reads the points along."""
    found, target = value_of(call.func, frame, context)
    if not found or not _own_function(target):
        return None
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg)]
    if any(isinstance(a, ast.Starred) for a in call.args) or len(arguments) < 2:
        return None
    shapes = {id(a): _array_shape(a, frame, context) for a in arguments}
    for argument in arguments:
        assignment = None
        indexed: ast.expr = argument
        if isinstance(argument, ast.Name):
            assignment = _index_assignment(argument.id, frame, statement.lineno)
            if assignment is None:
                continue
            indexed = assignment[1]
        if not (
            isinstance(indexed, ast.Subscript)
            and isinstance(indexed.slice, ast.Constant)
            and type(indexed.slice.value) is int
        ):
            continue
        whole = _array_shape(indexed.value, frame, context)
        if whole is None or len(whole) < 2:
            continue
        siblings = [
            other
            for other in arguments
            if other is not argument
            and (shape := shapes[id(other)]) is not None
            and len(shape) == len(whole)
            and shape[1:] == whole[1:]
        ]
        if len(siblings) != 1:
            continue
        sibling = siblings[0]
        sibling_shape = shapes[id(sibling)]
        indexed_source = frame.segment(indexed)
        argument_source = frame.segment(argument)
        whole_source = frame.segment(indexed.value)
        callee = frame.segment(call.func)
        if not (indexed_source and argument_source and whole_source and callee):
            return None
        kept = _with_batch_axis(indexed, indexed_source)
        named = (
            code(argument_source)
            if assignment is None
            else f"{code(argument_source)} ({code(indexed_source)})"
        )
        rule = (
            f"{named} is {show_shape(whole[1:])}: the integer index dropped the first axis "
            f"of {code(whole_source)} {show_shape(whole)}, while {code(callee)} is given "
            f"{code(frame.segment(sibling) or '')} as {show_shape(sibling_shape or ())}, one "
            f"row per point. The code inside meets a tensor one axis short and fails there "
            f"(it is right for rows: leave it as it is). Keep the axis with a slice, "
            f"{code(kept)} {show_shape((1, *whole[1:]))}"
        )
        where = assignment[0] if assignment is not None else statement
        fixed = rewrite(frame, where, indexed, kept)
        fix = code(fixed) if fixed and "\n" not in fixed else None
        return Finding(rule + ".", fix)
    return None


LOST_BATCH_AXIS = ErrorFamily(
    "one example given to a model built on batches",
    messages=(),
    read=_read_lost_batch_axis,
    section=SECTION,
)
