"""Error families about what tensors, variables and tapes accept (see ``family_record.py``
for a family's shape): item assignment on a tensor, unpacking an empty list of variables
or gradients, watching a non-tensor on a tape, a Python number that cannot take an
integer tensor's dtype, a Python list mixing numbers and strings, and assigning a value
of another shape to a variable (with gradients unpacked in another order than the
variables).

Each family's record sits after its reading code; ``families.FAMILIES`` lists them in
the order they are tried.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import types
from typing import Any

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    one_line_code,
    rewrite,
    rewrite_all,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    TRACKED_ATTRIBUTES,
    FailingLine,
    describe,
    show_shape,
    tracked_variables,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
    shape_list,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.integer_quantities import quantity_cast
from jupyterlab_tfcoach.monitor.errors.origins import newest_assignment

# ------------------------------------------------------------------ immutable tensors
_ITEM_ASSIGNMENT = re.compile(
    r"'(?:[\w.]*\.)?(?P<cls>EagerTensor|SymbolicTensor|Tensor|ResourceVariable|UninitializedVariable|"
    r"Variable)' object does not support item assignment"
)


def _read_item_assignment(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    statement = line.statement
    target = value = index = None
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Subscript)
    ):
        target = segment_of(line, statement.targets[0].value)
        index = statement.targets[0].slice
        value = segment_of(line, statement.value)
    is_variable = "Variable" in error.group("cls")
    if is_variable:
        rule = "A tf.Variable is changed with assign(), not with item assignment"
        fix = (
            f"{code(f'{target}[{segment_of(line, index)}].assign({value})')}"
            if target and index is not None and value
            else None
        )
        return Finding(rule + ".", fix)
    rule = (
        f"Tensors are immutable: {code(target) if target else 'a tensor'} cannot be changed "
        "in place; build a new tensor with the new values"
    )
    fix = None
    if target and value and index is not None:
        positions = _index_positions(index)
        described = operand_of(statement.targets[0].value, line, context)  # type: ignore[union-attr]
        rank = len(described.shape) if described is not None and described.shape else None
        if positions is not None and rank != positions.count(",") + 1:
            # ``grid[0] = 0.0`` on a 2-D tensor sets a whole row: the update must then be
            # the row's shape, which the line does not give. One position per axis only.
            positions = None
        if positions is not None:
            fixed = f"{target} = {tf}.tensor_scatter_nd_update({target}, [{positions}], [{value}])"
            fix = code(fixed)
    if fix is None and error.group("cls") == "EagerTensor" and statement is not None:
        copied = _numpy_copy(statement, line, context)
        if copied is not None:
            return copied
    return Finding(rule + ".", fix)


def _numpy_copy(statement: ast.stmt, line: FailingLine, context: ErrorContext) -> Finding | None:
    """``scores[row, cols] = -np.inf`` on an eager tensor, with positions that are not
    constants (a loop's rows, a list of columns): ``tensor_scatter_nd_update`` would need
    every position spelled out, while a NumPy copy takes the learner's indexing as written.
    The copy is made once, before the outermost loop holding the line that does not make
    the tensor itself, else just before the line."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    tree = line.frame.tree()
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)) or not tree:
        return None
    name = target.value.id
    assignment = line.frame.segment(statement)
    if not assignment or "\n" in assignment:
        return None
    numpy = sys.modules.get("numpy")
    np = context.module_alias("numpy", "np")
    copy = (
        f"{name} = {np}.array({name})"
        if numpy is not None and context.namespace.get(np) is numpy
        else f"{name} = {name}.numpy()"
    )
    failing = line.frame.position.line
    loops = sorted(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.For, ast.While))
            and node.lineno < failing <= (node.end_lineno or node.lineno)
        ),
        key=lambda node: node.lineno,
    )
    place, why, last = failing, "", failing
    for loop in loops:
        made_inside = any(
            isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
            for node in ast.walk(loop)
        )
        if not made_inside:
            place, why, last = loop.lineno, " (once, ahead of the loop)", loop.end_lineno or failing
            break
    tf = tf_alias(context)
    back = f"{tf}.convert_to_tensor({name})"
    # The copy rebinds the learner's name to an array: a later ``name.numpy()`` (or any
    # tensor-only attribute) in the same code would then fail, so the tensor is made again
    # after the last line that changes the copy.
    array_type = getattr(numpy, "ndarray", None)
    tensor_only = array_type is not None and any(
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        and node.lineno > last
        and not hasattr(array_type, node.attr)
        for node in ast.walk(tree)
    )
    restore = f"; then {code(f'{name} = {back}')} after line {last}" if tensor_only else ""
    rule = (
        f"Tensors are immutable: {code(name)} cannot be changed in place. A NumPy array can: "
        "copy the values into one and set the items in the copy, with the indexing as "
        f"written ({code(back)} makes a tensor of it again); staying in TensorFlow, the new "
        f"values are a mask given to `{tf}.where`"
    )
    return Finding(
        rule + ".",
        f"put {code(copy)} before line {place}{why}; then {code(assignment)} changes the copy"
        + restore,
    )


def _index_positions(index: ast.expr) -> str | None:
    """``0, 0`` -> ``[0, 0]``; ``3`` -> ``[3]``: only constant integer indexes."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    values = []
    for part in parts:
        try:
            literal = ast.literal_eval(part)
        except Exception:
            return None
        if type(literal) is not int:
            return None
        values.append(str(literal))
    return f"[{', '.join(values)}]"


ITEM_ASSIGNMENT = ErrorFamily(
    "item assignment on a tensor",
    messages=(Message(_ITEM_ASSIGNMENT),),
    exception_type="TypeError",
    read=_read_item_assignment,
    section="tensors-immutable",
    # The message names TensorFlow's part even when no TensorFlow frame raised it.
    without_library=True,
)


# ------------------------------------------------------------------ empty gradient lists
_UNPACK = re.compile(r"not enough values to unpack \(expected (?P<expected>\d+), got 0\)")


def _read_empty_unpack(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    copied = _variables_copied_before_build(line, context)
    if copied is not None:
        return copied
    statement = line.statement
    if not isinstance(statement, ast.Assign):
        return None
    gradient = next(
        (
            node
            for node in ast.walk(statement.value)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "gradient"
            and len(node.args) >= 2
        ),
        None,
    )
    sources = gradient.args[1] if gradient is not None else statement.value
    listed = operand_of(sources, line, context)
    if listed is None or listed.kind != "list" or not _mentions_variables(sources):
        return None
    owner_node = sources.value if isinstance(sources, ast.Attribute) else None
    owner = operand_of(owner_node, line, context) if owner_node is not None else None
    names = segment_of(line, statement.targets[0])
    rule = f"{code(listed.source)} is empty, so there is nothing to unpack into {code(names)}"
    fix = None
    if owner is not None and owner.kind in ("module", "layer", "model"):
        plain = _tensor_attributes(owner.value)
        if plain:
            shown = ", ".join(code(f"self.{name}") for name in plain)
            rule += (
                f": {code(owner.source)} tracks only tf.Variable attributes, and {shown} "
                f"{'is a plain tensor' if len(plain) == 1 else 'are plain tensors'}"
            )
            fix = _variable_fix(plain, context)
    return Finding(rule + ".", fix)


_MAX_REWRITTEN = 6


def _variables_copied_before_build(line: FailingLine, context: ErrorContext) -> Finding | None:
    """``params = net.trainable_variables`` read before ``net``'s first call: Keras makes a
    layer's weights when it first runs, so the name holds the empty list of that moment
    (a copy), while ``net.trainable_variables`` holds the variables now. The gradients
    asked for that empty list are empty too, and unpacking their pairs fails. Every line
    of the cell that reads the name below its assignment is printed reading the
    attribute itself."""
    statement, tree = line.statement, line.frame.tree()
    if statement is None or tree is None:
        return None
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        found, value = context.lookup(node.id, line.frame)
        if not found or type(value) not in (list, tuple) or value:
            continue
        made = newest_assignment(node.id, line.frame, context)
        read = made.assignment.value if made is not None else None
        if made is None or not (
            isinstance(read, ast.Attribute) and read.attr in TRACKED_ATTRIBUTES
        ):
            continue
        attribute = made.cell.segment(read)
        owner = made.cell.segment(read.value)
        found_now, now = value_of(read, line.frame, context)
        if not attribute or not owner or not found_now or type(now) not in (list, tuple):
            continue
        if not now:
            return None  # still no variables: another cause
        after = made.assignment.lineno if made.where.endswith("of this cell") else 0
        rewritten: list[tuple[int, str]] = []
        for other in ast.walk(tree):
            if not isinstance(other, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)):
                continue
            if other.lineno <= after or other.lineno != other.end_lineno:
                continue
            places = [
                (name, attribute)
                for name in ast.walk(other)
                if isinstance(name, ast.Name)
                and name.id == node.id
                and isinstance(name.ctx, ast.Load)
            ]
            if not places:
                continue
            fixed = rewrite_all(line.frame, other, places)
            if not fixed or "\n" in fixed or "`" in fixed:
                return None
            rewritten.append((other.lineno, fixed))
        failing = [text for number, text in rewritten if number == statement.lineno]
        others = [(number, text) for number, text in rewritten if number != statement.lineno]
        rule = (
            f"`{node.id}` was set by {code(made.statement)} ({made.where}), before `{owner}` "
            f"had run: Keras makes a layer's weights on its first call, so that list was empty "
            f"and stays empty (a copy of that moment), while {code(attribute)} now holds "
            f"{len(now)} variables. The gradients asked for `{node.id}` are empty too. Read "
            f"{code(attribute)} itself after the first call (or call `{owner}` once on a batch "
            f"before the assignment)"
        )
        if not failing or len(others) > _MAX_REWRITTEN:
            return Finding(rule + ".", None)
        fix = code(failing[0]) + "".join(
            f" and on line {number} {code(text)}" for number, text in others
        )
        return Finding(rule + ".", fix)
    return None


def _mentions_variables(node: ast.expr) -> bool:
    return any(
        isinstance(inner, ast.Attribute) and inner.attr in TRACKED_ATTRIBUTES
        for inner in ast.walk(node)
    )


def _tensor_attributes(owner: Any) -> list[str]:
    from jupyterlab_tfcoach.monitor.stored_state import instance_dict

    attributes = instance_dict(owner) or {}
    found = []
    for name, value in list(attributes.items())[:200]:
        described = describe(name, value) if type(name) is str else None
        if described is not None and described.kind == "tensor":
            found.append(name)
    return found[:4]


def _variable_fix(names: list[str], context: ErrorContext) -> str | None:
    """``self.coef = tf.random.normal(...)`` in the cells -> wrapped in ``tf.Variable``."""
    tf = tf_alias(context)
    fixes = []
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr in names
                and frame.segment(node.targets[0].value) == "self"
            ):
                value = frame.segment(node.value)
                if value and "\n" not in value:
                    attribute = node.targets[0].attr
                    fixes.append(code(f"self.{attribute} = {tf}.Variable({value})"))
        if fixes:
            return "create them as variables in `__init__`: " + ", ".join(fixes)
    return None


EMPTY_UNPACK = ErrorFamily(
    "unpacking an empty list of variables or gradients",
    messages=(Message(_UNPACK),),
    read=_read_empty_unpack,
    section="variables",
    # The statement names TensorFlow's part (``trainable_variables``): Python raised it.
    without_library=True,
)


# ------------------------------------------------------------------ tapes
_WATCH = re.compile(r"Passed in object .* of type '(?P<type>\w+)', not tf\.Tensor", re.S)


def _read_tape_watch(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    tf = tf_alias(context)
    argument = line.call.args[0] if isinstance(line.call, ast.Call) and line.call.args else None
    name = segment_of(line, argument) if argument is not None else ""
    rule = (
        f"A GradientTape watches and differentiates tensors and variables only; "
        f"{code(name) if name else 'the value'} is a {error.group('type')}"
    )
    fix = (
        f"convert it before the tape and use the tensor: "
        f"{code(f'{name} = {tf}.convert_to_tensor({name})')}"
        if name.isidentifier()
        else None
    )
    return Finding(rule + ".", fix)


TAPE_WATCH = ErrorFamily(
    "watching a non-tensor on a tape",
    messages=(Message(_WATCH),),
    read=_read_tape_watch,
    section="tape-watch",
)


# ------------------------------------------------------------------ a Python number as a source
def _read_number_source(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``tape.gradient(loss, w)`` with ``w`` a Python int or float: the tape only records
    operations on tensors and variables, so nothing computed from ``w`` was recorded
    (TensorFlow fails reading the number's dtype). The fix is ``w`` created as a
    ``tf.Variable``, from its assignment in the cells."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "gradient"
        and len(call.args) >= 2
    ):
        return None
    sources = call.args[1]
    nodes = list(sources.elts) if isinstance(sources, (ast.List, ast.Tuple)) else [sources]
    numbers = []
    for node in nodes:
        found, value = value_of(node, line.frame, context)
        if found and type(value) in (int, float) and isinstance(node, ast.Name):
            numbers.append((node.id, value))
    if len(numbers) != 1:
        return None
    name, value = numbers[0]
    tf = tf_alias(context)
    rule = (
        f"{code(name)} is the Python {type(value).__name__} {value!r}: a GradientTape only "
        "records operations on tensors and variables, so what was computed from "
        f"{code(name)} was plain Python arithmetic the tape never saw, and it has no "
        "gradient. A parameter to differentiate is a `tf.Variable`"
    )
    created = _number_assignment(name, value, context)
    if created is None:
        return Finding(rule + ".", None)
    statement, written = created
    fixed = f"{name} = {tf}.Variable({written})"
    if type(value) is int:
        fixed = f"{name} = {tf}.Variable({float(value)!r})"
    return Finding(rule + f" ({code(statement)} made it a number).", code(fixed))


def _number_assignment(name: str, value: Any, context: ErrorContext) -> tuple[str, str] | None:
    from jupyterlab_tfcoach.monitor.errors.cell_sources import error_cells

    for cell in error_cells(context):
        tree = cell.tree()
        if tree is None:
            continue
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
                and isinstance(node.value, ast.Constant)
                and node.value.value == value
            ):
                statement, written = cell.segment(node), cell.segment(node.value)
                if statement and written and "\n" not in statement:
                    return statement, written
    return None


NUMBER_SOURCE = ErrorFamily(
    "a Python number given to tape.gradient as a source",
    messages=(),
    read=_read_number_source,
    section="gradient-tape",
)


# ------------------------------------------------------------------ a tensor of another dtype
# The op's own conversion prefixes the message with the parameter it converts
# (``k: Tensor conversion requested dtype int32 ...`` from ``tf.image.rot90``).
_CONVERSION = re.compile(
    r"(?:^(?P<argument>\w+): )?"
    r"Tensor conversion requested dtype (?P<wanted>\w+) for Tensor with dtype (?P<given>\w+)"
)


# The refused tensor as the message shows it: ``<tf.Tensor: shape=(1,), dtype=float32, ...``.
_SHOWN_SHAPE = re.compile(r"<tf\.Tensor: shape=\((?P<shape>[0-9, ]*)\), dtype=")


def _shape_text(shape: tuple[int | None, ...]) -> str:
    """A shape as a tensor's repr writes it inside its parentheses, without spaces."""
    inner = ",".join("None" if size is None else str(size) for size in shape)
    return inner + "," if len(shape) == 1 else inner


def _argument_named(
    call: ast.Call, name: str, line: FailingLine, context: ErrorContext
) -> ast.expr | None:
    """The expression the call passes as parameter ``name``: its keyword, else the
    positional argument at that parameter's place in the library function's signature."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    callee = library_callee(call.func, line.frame, context)
    if callee is None or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    try:
        names = list(inspect.signature(callee).parameters)
    except (TypeError, ValueError):
        return None
    index = names.index(name) if name in names else len(call.args)
    return call.args[index] if index < len(call.args) else None


def _read_conversion(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    """``v.assign(tf.constant([1, 2]))`` on a float32 variable (or any call that converts
    its argument to a fixed dtype): the one argument of the other dtype, cast. When the
    message names the parameter (``k: ...``), that argument is the one cast, whatever the
    dtypes of the others; else the single argument of the message's dtype."""
    call = line.call
    if not isinstance(call, ast.Call) or not (call.args or call.keywords):
        return None
    wanted, given = error.group("wanted"), error.group("given")
    parameter = error.group("argument")
    drawn = _integer_bound_of_float_draw(call, wanted, given, parameter, line, context)
    if drawn is not None:
        return drawn
    named = _argument_named(call, parameter, line, context) if parameter else None
    candidates = [named] if named is not None else []
    arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
    tf = tf_alias(context)
    shown = _SHOWN_SHAPE.search(error.parsed.message)
    refused_shape = shown.group("shape").replace(" ", "") if shown else None
    for node in arguments if named is None else ():
        operand = operand_of(node, line, context)
        # The message is about a Tensor: a NumPy array of that dtype converts by other
        # paths, so it is never the operand refused here (normalised boxes beside indices);
        # the message shows the refused tensor's shape, which the operand must have.
        if (
            operand is not None
            and operand.dtype == given
            and operand.kind != "array"
            and (
                refused_shape is None
                or operand.shape is None
                or _shape_text(operand.shape) == refused_shape
            )
        ):
            candidates.append(node)
        elif operand is None and given == "float32" and _default_float_constructor(node, tf):
            candidates.append(node)  # ``tf.zeros(n)`` made here: float32 by default
    if not candidates and len(arguments) == 1:
        candidates = arguments  # written on the line: the message gives its dtype
    if len(candidates) != 1:
        return None
    node = candidates[0]
    source = segment_of(line, node)
    if named is None and _default_float_constructor(node, tf) and source.endswith(")"):
        # Made on the line by a constructor left at its float32 default: asking it for the
        # dtype the call needs makes the right tensor (a cast of it would work too, but
        # hides where the float32 came from).
        function = segment_of(line, call.func) or "the call"
        parameter_name = _parameter_of(call, node, line, context)
        given_as = f"its {code(parameter_name)} argument" if parameter_name else "an argument"
        made = f"{source[:-1].rstrip()}, dtype={tf}.{wanted})"
        statement = line.frame.statement()
        fixed = (
            rewrite(line.frame, statement, node, made)
            if statement is not None and not hasattr(statement, "body")
            else None
        )
        if not fixed or "\n" in fixed:
            fixed = rewrite(line.frame, call, node, made)
        rule = (
            f"{code(function)} needs {wanted} for {given_as}, {code(source)}, and "
            f"{code(segment_of(line, node.func))} makes float32 unless it is given a dtype: "
            f"TensorFlow never converts a tensor from one dtype to another by itself. Ask "
            f"{code(segment_of(line, node.func))} for {wanted}"
        )
        return Finding(rule + ".", one_line_code(fixed), section="dtype-casting")
    if named is None:
        converted = _converting_call(call, node, source, wanted, given, line, tf)
        if converted is not None:
            return converted
    owner = segment_of(line, call.func.value) if isinstance(call.func, ast.Attribute) else ""
    if owner and isinstance(value_of(call.func.value, line.frame, context)[1], types.ModuleType):
        owner = ""  # ``tf.assign(...)``: the module is no operand with a dtype
    target = f"{code(owner)} is {wanted}" if owner else f"the call needs {wanted}"
    if named is not None:
        function = segment_of(line, call.func) or "the call"
        target = f"the {code(parameter)} argument of {code(function)} must be {wanted}"
    article = "an" if given[:1] in "aeio" else "a"
    rule = (
        f"{target}, and {code(source)} is {article} {given} tensor: TensorFlow never converts a "
        f"tensor from one dtype to another by itself (a variable keeps the dtype it was "
        "created with)"
    )
    if (
        wanted.startswith(("int", "uint"))
        and given.startswith(("float", "bfloat", "half", "double"))
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("assign", "assign_add", "assign_sub")
        and isinstance(call.func.value, ast.Name)
    ):
        # Casting the float value to the integer variable's dtype drops its fraction
        # (a loss of 0.25 adds 0): the variable was meant to hold floats.
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            # ``/`` always makes floats; a count meant integer division.
            left = segment_of(line, node.left)
            right = segment_of(line, node.right)
            if left and right:
                divided = f"{tf}.cast({left} // {right}, {tf}.{wanted})"
                fixed = rewrite(line.frame, call, node, divided)
                rule += (
                    f". {code(source)} divides with `/`, which always gives a float; a count "
                    f"wants integer division, `//`, cast to the variable's {wanted}"
                )
                return Finding(rule + ".", one_line_code(fixed), section="dtype-casting")
        return _integer_variable(call.func.value.id, source, wanted, given, rule, context)
    fixed = rewrite(line.frame, call, node, f"{tf}.cast({source}, {tf}.{wanted})")
    return Finding(rule + ".", one_line_code(fixed), section="dtype-casting")


# Calls that make a tensor from Python values or an array in the dtype they are asked for,
# but refuse to change the dtype of a tensor they are given.
_CONVERTING = frozenset({"convert_to_tensor", "convert_to_tensor_v2"})


def _converting_call(
    call: ast.Call,
    node: ast.expr,
    source: str,
    wanted: str,
    given: str,
    line: FailingLine,
    tf: str,
) -> Finding | None:
    """``tf.convert_to_tensor(t, dtype=tf.float16)`` with ``t`` a float32 tensor: the
    conversion never casts an existing tensor, so the call is what was wrong, not ``t``;
    the fix is the call replaced by ``tf.cast``, not a cast wrapped inside it."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if name is None and isinstance(call.func, ast.Name):
        name = call.func.id
    if name not in _CONVERTING or not call.args or call.args[0] is not node:
        return None
    written = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if written is None and len(call.args) > 1:
        written = call.args[1]
    dtype_source = segment_of(line, written) if written is not None else ""
    if not dtype_source or "\n" in dtype_source:
        dtype_source = f"{tf}.{wanted}"
    function = segment_of(line, call.func) or name
    article = "an" if given[:1] in "aeio" else "a"
    rule = (
        f"{code(function)} makes a tensor from Python numbers or a NumPy array in the dtype "
        f"it is asked for, but {code(source)} is already {article} {given} tensor, and "
        f"{code(function)} never changes the dtype of a tensor: asked for {wanted}, it "
        f"refuses. Changing a tensor's dtype is a cast: {code(f'{tf}.cast')}"
    )
    replacement = f"{tf}.cast({source}, {dtype_source})"
    statement = line.frame.statement()
    fixed = None
    if statement is not None and not hasattr(statement, "body"):
        fixed = rewrite(line.frame, statement, call, replacement)
    if not fixed or "\n" in fixed:
        fixed = replacement
    return Finding(rule + ".", one_line_code(fixed), section="dtype-casting")


# Random draws whose ``dtype`` defaults to float32 and whose bounds are converted to it.
_FLOAT_DEFAULT_DRAWS = frozenset({"random.uniform", "random.stateless_uniform"})
_BOUNDS = ("minval", "maxval")
# Calls whose argument must hold integer positions: naming one that reads the drawn
# values says what the integers were for.
_INDEX_READERS = frozenset(
    {"gather", "gather_nd", "one_hot", "segment_sum", "unsorted_segment_sum"}
)


def _integer_bound_of_float_draw(
    call: ast.Call,
    wanted: str,
    given: str,
    parameter: str | None,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """``tf.random.uniform([n], 0, tf.shape(x)[0])``: a draw left at its float32 default
    given an integer tensor as a bound. The draw converts its bounds to its own dtype, and
    an integer tensor does not convert. With integer bounds only, integers were meant
    (indices, counts): asked for with ``dtype=``; with a float bound beside it, the
    integer tensor is cast."""
    tf = tf_alias(context)
    function = ast.unparse(call.func)
    prefix = f"{tf}."
    if not function.startswith(prefix) or function[len(prefix) :] not in _FLOAT_DEFAULT_DRAWS:
        return None
    if wanted != "float32" or not given.startswith(("int", "uint")):
        return None
    if any(k.arg in (None, "dtype") for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return None
    bounds = {name: _argument_named(call, name, line, context) for name in _BOUNDS}
    maxval = bounds["maxval"]
    if maxval is None:
        return None
    # The op's message names the bound it refused (``max: Tensor conversion ...``), so an
    # expression the line computes (``tf.size(x)``) needs no value read.
    refused = f"{parameter}val" if parameter in ("min", "max") else None
    integer_tensors: list[tuple[str, ast.expr]] = []
    float_written = False
    for name, node in bounds.items():
        if node is None:
            continue
        if isinstance(node, ast.Constant):
            float_written = float_written or type(node.value) is float
            continue
        operand = operand_of(node, line, context)
        dtype = operand.dtype if operand is not None else None
        if name == refused or (refused is None and dtype == given):
            integer_tensors.append((name, node))
        elif dtype is not None and dtype.startswith(("float", "bfloat", "half", "double")):
            float_written = True
        elif type(operand.value if operand is not None else None) is float:
            float_written = True
    if len(integer_tensors) != 1:
        return None
    bound_name, bound = integer_tensors[0]
    bound_source = segment_of(line, bound)
    if not bound_source:
        return None
    shown_function = segment_of(line, call.func) or function
    rule = (
        f"{code(shown_function)} draws float32 numbers unless it is given a {code('dtype')}, "
        f"and converts its bounds to that dtype: your {code(bound_name)}, "
        f"{code(bound_source)}, is an {given} tensor, and TensorFlow never converts a tensor "
        "from one dtype to another by itself"
    )
    call_source = segment_of(line, call)
    if not call_source.endswith(")"):
        return None
    if float_written:
        rule += ". With a float bound beside it, cast that bound to float32"
        replacement = f"{tf}.cast({bound_source}, {tf}.float32)"
        fixed = rewrite(line.frame, line.statement or call, bound, replacement)
        if not fixed or "\n" in fixed:
            fixed = rewrite(line.frame, call, bound, replacement)
        return Finding(rule + ".", one_line_code(fixed), section="dtype-casting")
    reader = _index_reader(line)
    purpose = (
        f" ({code(reader[1])} reads {code(reader[0])} as positions, which must be integers)"
        if reader
        else ""
    )
    rule += (
        f". With whole-number bounds, the draw was meant to give integers{purpose}: ask "
        f"{code(shown_function)} for them with {code(f'dtype={tf}.{given}')}"
    )
    made = f"{call_source[:-1].rstrip()}, dtype={tf}.{given})"
    fixed = None
    if line.statement is not None and not hasattr(line.statement, "body"):
        fixed = rewrite(line.frame, line.statement, call, made)
    if not fixed or "\n" in fixed:
        fixed = made
    return Finding(rule + ".", one_line_code(fixed), section="dtype-casting")


def _index_reader(line: FailingLine) -> tuple[str, str] | None:
    """``("idx", "tf.gather")`` when the name the failing statement assigns is read, in the
    same cell, by a call that takes integer positions."""
    target = line.result_names()
    tree = line.frame.tree()
    if not target or not target.isidentifier() or tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name is None and isinstance(node.func, ast.Name):
            name = node.func.id
        if name not in _INDEX_READERS:
            continue
        if (
            any(isinstance(a, ast.Name) and a.id == target for a in node.args[1:2])
            or any(
                k.arg in ("indices", "segment_ids")
                and isinstance(k.value, ast.Name)
                and k.value.id == target
                for k in node.keywords
            )
            or (
                name == "one_hot"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == target
            )
        ):
            return target, line.frame.segment(node.func) or name
    return None


# TensorFlow constructors that make float32 unless given ``dtype=`` and accept an integer
# dtype, with how many positional arguments may come before ``dtype``.
_DEFAULT_FLOAT_CONSTRUCTORS = {"zeros": 1, "ones": 1, "eye": 3, "linalg.eye": 3}


def _default_float_constructor(node: ast.expr, tf: str) -> bool:
    """Whether ``node`` is ``tf.zeros(...)`` (or another constructor above) with no dtype:
    its result is float32 whatever its arguments hold."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    function = ast.unparse(node.func)
    prefix = f"{tf}."
    name = function[len(prefix) :] if function.startswith(prefix) else ""
    before_dtype = _DEFAULT_FLOAT_CONSTRUCTORS.get(name)
    return (
        before_dtype is not None
        and 0 < len(node.args) <= before_dtype
        and not any(keyword.arg in (None, "dtype") for keyword in node.keywords)
    )


def _parameter_of(call: ast.Call, node: ast.expr, line: FailingLine, context: ErrorContext) -> str:
    """The parameter of the library function that ``node`` is given to, or ""."""
    for keyword in call.keywords:
        if keyword.value is node and keyword.arg:
            return keyword.arg
    if node not in call.args:
        return ""
    callee = library_callee(call.func, line.frame, context)
    if callee is None or any(isinstance(arg, ast.Starred) for arg in call.args):
        return ""
    try:
        names = list(inspect.signature(callee).parameters)
    except (TypeError, ValueError):
        return ""
    index = call.args.index(node)
    return names[index] if index < len(names) else ""


def _integer_variable(
    name: str, source: str, wanted: str, given: str, rule: str, context: ErrorContext
) -> Finding:
    """The fix for a float added to an integer variable: the variable created from a
    float (``tf.Variable(0)`` -> ``tf.Variable(0.0)``), where the cells create it so."""
    rule += (
        f". Casting {code(source)} to {wanted} would drop its fraction; `{name}` was created "
        f"from an integer, so it holds {wanted}: create it from a float to keep {given} "
        "values"
    )
    for cell, statement in assignments_in_cells(name, context):
        value = statement.value
        if (
            given == "float32"  # a float literal makes float32: the value's own dtype
            and isinstance(value, ast.Call)
            and value.args
            and not value.keywords  # a dtype= would keep it integer
            and isinstance(value.args[0], ast.Constant)
            and type(value.args[0].value) is int
            and (getattr(value.func, "attr", None) or getattr(value.func, "id", None)) == "Variable"
        ):
            written = cell.segment(statement)
            literal = cell.segment(value.args[0])
            if written and literal and "\n" not in written:
                fixed = written.replace(f"({literal}", f"({value.args[0].value}.0", 1)
                return Finding(rule + ".", code(fixed), section="dtype-casting")
        break
    return Finding(rule + ".", None, section="dtype-casting")


# ------------------------------------------------------------------ mixed Python types
_MIXED = re.compile(r"Can't convert Python sequence with mixed types to Tensor")
_MAX_ITEMS = 1000
_MAX_DEPTH = 3
_MAX_POSITIONS = 3


def _item_types(value: Any, at: str, found: dict[str, list[str]], budget: list[int]) -> None:
    """Each Python type of a nested list's items -> the positions holding one
    (``[1]``, ``[0][2]``), bounded in items and depth; only type names are read."""
    for index, item in enumerate(value):
        budget[0] -= 1
        if budget[0] < 0:
            return
        where = f"{at}[{index}]"
        if type(item) in (list, tuple) and where.count("[") < _MAX_DEPTH:
            _item_types(item, where, found, budget)
            continue
        found.setdefault(type(item).__name__, []).append(where)


def _literal_items(node: ast.expr) -> list[ast.expr] | None:
    return list(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else None


def _number_text(text: str) -> str | None:
    """``"2"`` -> ``2``, ``"0.5"`` -> ``0.5``: a string that spells a number."""
    try:
        int(text)
        return text.strip()
    except ValueError:
        pass
    try:
        float(text)
    except ValueError:
        return None
    return text.strip()


def _read_mixed_types(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``tf.constant([1, "two"])``: the Python types of the list's items, by position; the
    fix writes them as one type (numbers, when every string spells one, else strings)."""
    call = line.call
    if not isinstance(call, ast.Call) or not call.args:
        return None
    node = call.args[0]
    source = segment_of(line, node)
    literal = _literal_items(node)
    types: dict[str, list[str]] = {}
    if literal is not None and all(isinstance(item, ast.Constant) for item in literal):
        for index, item in enumerate(literal):
            types.setdefault(type(item.value).__name__, []).append(f"[{index}]")  # type: ignore[attr-defined]
    else:
        found, value = value_of(node, line.frame, context)
        if not found or type(value) not in (list, tuple):
            return None
        _item_types(value, "", types, [_MAX_ITEMS])
        literal = None
    if len(types) < 2 or not source:
        return None
    held = " and ".join(
        f"{kind} at {', '.join(places[:_MAX_POSITIONS])}{', ...' if len(places) > 3 else ''}"
        for kind, places in types.items()
    )
    callee = segment_of(line, call.func) or "the call"
    rule = (
        f"{code(callee)} makes one tensor of one dtype, so the items of a Python list given "
        f"to it must all be numbers or all strings; {code(source)} holds {held}"
    )
    if literal is not None:
        strings = [item for item in literal if type(item.value) is str]  # type: ignore[attr-defined]
        numbers = [_number_text(item.value) for item in strings]  # type: ignore[attr-defined]
        if all(number is not None for number in numbers):
            items = [
                _number_text(item.value) if type(item.value) is str else repr(item.value)  # type: ignore[attr-defined]
                for item in literal
            ]
            how = "the strings spell numbers: write them as numbers"
        else:
            items = [
                segment_of(line, item) if type(item.value) is str else f'"{item.value}"'  # type: ignore[attr-defined]
                for item in literal
            ]
            how = "write every item as a string (or each word as the number it stands for)"
        replacement = f"[{', '.join(str(item) for item in items)}]"
    elif (
        set(types) <= {"int", "float", "str", "bool"}
        and isinstance(node, ast.Name)
        and all(place.count("[") == 1 for places in types.values() for place in places)
    ):
        replacement = f"[str(item) for item in {source}]"
        how = "make every item a string (or convert the strings to numbers where they are)"
    else:
        return Finding(rule + ".", None)
    fixed = rewrite(line.frame, line.statement or call, node, replacement)
    return Finding(f"{rule}: {how}.", one_line_code(fixed))


MIXED_TYPES = ErrorFamily(
    "a Python list mixing numbers and strings given to tf.constant",
    messages=(Message(_MIXED),),
    read=_read_mixed_types,
    section="dtype-casting",
)


CONVERSION_DTYPE = ErrorFamily(
    "a tensor of another dtype given where one dtype is required",
    messages=(Message(_CONVERSION),),
    read=_read_conversion,
    section="dtype-casting",
    exception_type="ValueError",
)


# ------------------------------------------------------------------ Python numbers
_PYTHON_FLOAT = re.compile(
    r"Cannot convert (?P<value>\S+) to EagerTensor of dtype (?P<dtype>u?int\d+|bool)"
)


# A whole float given to a Keras/TF argument that an op needs as an integer
# (``fit(..., batch_size=32.0)``: a slice size, ``Expected int32 ... got [64.0]``).
_FLOAT_FOR_INT = re.compile(
    r"Expected (?P<dtype>u?int\d+) passed to parameter '\w+' of op '\w+', got "
    r"\[?(?P<value>-?\d+\.\d*)"
    # Python's own refusal inside Keras (``fit(..., epochs=2.0)`` reaches ``range``).
    r"|'float' object cannot be interpreted as an integer"
)


def _read_python_number(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    if error.matched(_FLOAT_FOR_INT):
        return _whole_number_argument(None, line)
    quantity = quantity_cast(error.group("value"), error.group("dtype"), line, tf)
    if quantity is not None:
        return Finding(*quantity)
    whole = _whole_number_argument(error.group("value"), line)
    if whole is not None:
        return whole
    integer = next(
        (operand for operand in line.operands if operand.dtype == error.group("dtype")), None
    )
    if integer is not None and integer.kind in ("variable", "keras_variable"):
        from jupyterlab_tfcoach.monitor.errors.dtypes import integer_variable_fix

        created = integer_variable_fix(integer.source, line.frame, context)
        if created is not None:
            statement, fixed, where = created
            rule = (
                f"A Python number takes the dtype of the tensor it meets, and "
                f"{error.group('value')} cannot become {error.group('dtype')}: "
                f"{code(integer.source)} is a variable created from a Python int "
                f"({code(statement)}, {where}), and a variable keeps its dtype for good"
            )
            return Finding(rule + ".", f"create it as a float: {code(fixed)}")
    rule = (
        f"A Python number takes the dtype of the tensor it meets, and {error.group('value')} "
        f"cannot become {error.group('dtype')}"
    )
    if integer is not None:
        stored = _assigned_into(integer.source, line)
        if stored is not None:
            return stored
    fix = (
        f"cast the integer tensor first: {code(f'{tf}.cast({integer.source}, {tf}.float32)')}"
        if integer is not None
        else None
    )
    if fix is not None and integer is not None:
        # The same integer meeting floats on other lines fails there next: each such line
        # is printed cast too, or the fix moves the error one line down.
        again = _floats_met_again(integer.source, line, context, f"{tf}.cast", f"{tf}.float32")
        if again:
            rule += f"; {code(integer.source)} meets a float again on " + ", ".join(
                f"line {number}" for number, _ in again
            )
            fix += "".join(f" and on line {number} {code(text)}" for number, text in again)
    return Finding(rule + ".", fix)


_MAX_AGAIN = 6


def _floats_met_again(
    source: str, line: FailingLine, context: ErrorContext, cast: str, float_dtype: str
) -> list[tuple[int, str]]:
    """Other one-line statements of the failing line's function (or cell) where ``source``
    is an operand of arithmetic whose other side is a Python float (a literal, or a name or
    attribute holding one where the error stopped): each statement with ``source`` cast."""
    tree = line.frame.tree()
    failing = line.frame.position.line
    if tree is None:
        return []
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= failing <= (node.end_lineno or node.lineno)
            and (scope is tree or node.lineno > getattr(scope, "lineno", 0))
        ):
            scope = node
    found: list[tuple[int, str]] = []
    for statement in ast.walk(scope):
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)):
            continue
        if statement.lineno == failing or statement.lineno != statement.end_lineno:
            continue
        places = []
        for node in ast.walk(statement):
            if not isinstance(node, ast.BinOp):
                continue
            for mine, other in ((node.left, node.right), (node.right, node.left)):
                if line.frame.segment(mine) == source and _python_float(other, line, context):
                    places.append((mine, f"{cast}({source}, {float_dtype})"))
        if not places:
            continue
        fixed = rewrite_all(line.frame, statement, places)
        if not fixed or "\n" in fixed or "`" in fixed:
            return []
        found.append((statement.lineno, fixed))
        if len(found) > _MAX_AGAIN:
            return []
    return sorted(found)


def _python_float(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is float
    if isinstance(node, (ast.Name, ast.Attribute)):
        try:
            found, value = value_of(node, line.frame, context)
        except Exception:
            return False
        return found and type(value) is float
    return False


_ASSIGNS = ("assign", "assign_add", "assign_sub")


def _assigned_into(receiver: str, line: FailingLine) -> Finding | None:
    """``step.assign_add(n / 32)`` on an integer variable: the float is stored into the
    variable, which keeps its dtype; a cast of the variable would be a new tensor with no
    ``assign_add``. A true division (``/``) makes the float: floor division (``//``) keeps
    the count whole. Another float value gets the rule and no cast."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _ASSIGNS
        and line.frame.segment(call.func.value) == receiver
        and len(call.args) == 1
    ):
        return None
    value = call.args[0]
    rule = (
        f"{code(receiver)} is an integer variable and {code(f'{receiver}.{call.func.attr}')} "
        f"stores its argument into it, so the value must be a whole number (a variable keeps "
        f"its dtype for good; a cast of {code(receiver)} would be a new tensor with no "
        f"{code(call.func.attr)})"
    )
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        left, right = line.frame.segment(value.left), line.frame.segment(value.right)
        if left and right:
            statement = line.statement if line.statement is not None else call
            fixed = rewrite(line.frame, statement, value, f"{left} // {right}")
            if fixed and "\n" not in fixed:
                return Finding(
                    f"{rule}: `/` always makes a float, `//` the whole quotient.",
                    f"{code(fixed)}",
                )
    return Finding(
        f"{rule}: give it an integer, or create the variable as a float where it is made "
        "if it is meant to hold fractions.",
        None,
    )


def _whole_number_argument(value: str | None, line: FailingLine) -> Finding | None:
    """``tf.one_hot(labels, 3.0)``: a float literal passed where the function wants an
    integer (a depth, a size). Casting the tensor would not help: the fix writes it as
    the integer it is."""
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    given = [*call.args, *(keyword.value for keyword in call.keywords)]
    literals = [
        node
        for node in given
        if isinstance(node, ast.Constant)
        and type(node.value) is float
        and (value is None or repr(node.value) == value)
        and node.value.is_integer()
    ]
    if len(literals) != 1:
        return None
    literal = literals[0]
    fixed = rewrite(line.frame, call, literal, str(int(literal.value)))
    if not fixed or "\n" in fixed:
        return None
    written = line.frame.segment(literal) or ""
    rule = f"{code(line.frame.segment(call) or '')} wants an integer where {written} is given"
    return Finding(rule + ".", f"write it as an integer, {code(fixed)}")


PYTHON_NUMBER = ErrorFamily(
    "a Python number that cannot take an integer tensor's dtype",
    messages=(Message(_PYTHON_FLOAT), Message(_FLOAT_FOR_INT)),
    read=_read_python_number,
    section="dtype-casting",
)


# ------------------------------------------------------------------ variables' shapes
_ASSIGN_SHAPE = re.compile(
    r"Cannot update variable with shape \[(?P<variable>[\d,]*)\] using a Tensor with shape "
    r"\[(?P<value>[\d,]*)\], shapes must be equal"
)
# Keras 3 / TF 2.21 wording of a plain ``assign`` (``assign_sub`` keeps the one above).
_ASSIGN_MISMATCH = re.compile(
    r"Cannot assign value to variable '[^']*': Shape mismatch\.\s*The variable shape "
    r"\((?P<variable>[^)]*)\), and the assigned value shape \((?P<value>[^)]*)\) are incompatible"
)


def _read_assign_shape(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    variable, value = shape_list(error.group("variable")), shape_list(error.group("value"))
    if variable is None or value is None:
        return None
    rule = (
        f"assign, assign_add and assign_sub on a tf.Variable want a value of the variable's "
        f"own shape {show_shape(variable)} and do not broadcast; the value is {show_shape(value)}"
    )
    fix = None
    call = line.call
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("assign_sub", "assign_add")
        and len(call.args) == 1
    ):
        owner, argument = segment_of(line, call.func.value), segment_of(line, call.args[0])
        sign = "-" if call.func.attr == "assign_sub" else "+"
        order = _gradient_order(call.args[0], line, context)
        if order is not None:
            sentence, order_fix = order
            return Finding(f"{rule}: {sentence}.", order_fix, section="gradient-tape")
        if not _broadcasts_to(value, variable):
            # ``v.assign(v - value)`` would fail the same way: the value is not an update
            # of this variable at all.
            rule += (
                f", which does not even broadcast to {show_shape(variable)}: it was computed "
                "for something else, most often another variable (gradients paired with the "
                "wrong variables: `zip` pairs them by position, in the order the lists were "
                "given) or a value that still has a batch axis to reduce"
            )
            return Finding(rule + ".", None, section="gradient-tape")
        if owner and argument and "\n" not in argument:
            fixed = f"{owner}.assign({owner} {sign} {argument})"
            fix = f"write the arithmetic inside assign: {code(fixed)}"
    elif (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "assign"
        and len(call.args) == 1
        and isinstance(call.func.value, ast.Name)
    ):
        owner, argument = call.func.value.id, segment_of(line, call.args[0])
        if argument and "\n" not in argument:
            tf = tf_alias(context)
            rule += ": a variable keeps the shape it was created with"
            if len(value) == len(variable) == 2 and value[::-1] == variable:
                rule += f" (the value is the transpose of {show_shape(variable)})"
            fixed = f"{owner} = {tf}.Variable({argument})"
            fix = f"to hold a value of the new shape, create a new variable: {code(fixed)}"
    return Finding(rule + ".", fix)


def _broadcasts_to(value: tuple[int | None, ...], variable: tuple[int | None, ...]) -> bool:
    """Whether ``variable - value`` has the variable's own shape (NumPy broadcasting)."""
    if len(value) > len(variable):
        return False
    return all(v in (1, w) for v, w in zip(reversed(value), reversed(variable), strict=False))


# ------------------------------------------------------------------ gradients in another order
def _unpacked_gradients(
    name: str, context: ErrorContext
) -> tuple[CellFrame, ast.Assign, ast.Call, ast.Attribute] | None:
    """``d_w, d_b = tape.gradient(loss, model.trainable_variables)`` binding ``name``."""
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], (ast.Tuple, ast.List))
                and any(
                    isinstance(element, ast.Name) and element.id == name
                    for element in node.targets[0].elts
                )
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "gradient"
                and len(node.value.args) >= 2
            ):
                continue
            sources = node.value.args[1]
            if isinstance(sources, ast.Attribute) and sources.attr in TRACKED_ATTRIBUTES:
                return frame, node, node.value, sources
    return None


def _attribute_names(owner: Any, variables: list[Any]) -> list[str] | None:
    """The attribute each tracked variable is stored under (``coef``, ``bias``)."""
    from jupyterlab_tfcoach.monitor.stored_state import instance_dict

    attributes = instance_dict(owner) or {}
    by_id = {id(value): key for key, value in list(attributes.items())[:500] if type(key) is str}
    names = [by_id.get(id(variable)) for variable in variables]
    return names if all(names) else None  # type: ignore[return-value]


def _gradient_order(
    value: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, str | None] | None:
    """Why a gradient unpacked by name has another variable's shape: the gradients come in
    the order of ``owner.trainable_variables``, which is not the order the names assume.
    (sentence, fix) in the user's names; the fix asks for the variables explicitly, in the
    order the names are used (``owner.attr.assign_sub(... d_attr)``)."""
    names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
    for name in names:
        found = _unpacked_gradients(name, context)
        if found is None:
            continue
        frame, statement, call, sources = found
        owner_found, owner = value_of(sources.value, frame, context)
        kind = operand_of(sources.value, line, context, frame)
        if not owner_found or kind is None or kind.kind not in ("module", "layer", "model"):
            return None
        variables = tracked_variables(owner, kind.kind, TRACKED_ATTRIBUTES[sources.attr])
        if not variables:
            return None
        attributes = _attribute_names(owner, variables)
        if attributes is None:
            return None
        owner_source = frame.segment(sources.value) or ""
        listed = ", ".join(
            f"{code(attribute)} {show_shape(shape) if shape is not None else ''}".rstrip()
            for attribute, variable in zip(attributes, variables, strict=True)
            for shape in [describe("", variable).shape if describe("", variable) else None]
        )
        targets = [e.id for e in statement.targets[0].elts if isinstance(e, ast.Name)]  # type: ignore[attr-defined]
        unpacked = frame.segment(statement.targets[0]) or ", ".join(targets)
        sentence = (
            f"{code(unpacked)} unpack {code(frame.segment(call) or '')}, whose gradients come "
            f"in the order of {code(frame.segment(sources) or '')}: {listed} (a tf.Module and "
            f"a Keras layer list their variables in their own order, here not the order of "
            f"the names), so {code(name)} holds another variable's gradient"
        )
        used = _used_with(targets, frame, owner_source)
        fix = None
        if used is not None and len(used) == len(targets):
            explicit = ", ".join(f"{owner_source}.{attribute}" for attribute in used)
            fixed = rewrite(frame, call, sources, f"[{explicit}]")
            if fixed:
                fix = (
                    f"ask for the gradients of the variables in the order of the names: "
                    f"{code(f'{unpacked} = {fixed}')}"
                )
        if fix is None:
            fix = (
                f"pair each gradient with its variable instead of unpacking by name: "
                f"{code(f'zip(grads, {frame.segment(sources)})')}"
            )
        return sentence, fix
    return None


def _used_with(targets: list[str], frame: CellFrame, owner: str) -> list[str] | None:
    """For each name, the attribute of ``owner`` it updates (``owner.attr.assign_sub(...
    name ...)``) in the cell, in the order of the names."""
    tree = frame.tree()
    if tree is None:
        return None
    updates: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("assign_sub", "assign_add", "assign")
            and isinstance(node.func.value, ast.Attribute)
            and frame.segment(node.func.value.value) == owner
        ):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and inner.id in targets:
                    updates.setdefault(inner.id, node.func.value.attr)
    found = [updates.get(target) for target in targets]
    if not all(found) or len(set(found)) != len(found):
        return None
    return found  # type: ignore[return-value]


ASSIGN_SHAPE = ErrorFamily(
    "assign with a value of another shape",
    messages=(Message(_ASSIGN_SHAPE), Message(_ASSIGN_MISMATCH)),
    read=_read_assign_shape,
    section="rebinding-variables",  # gradients unpacked in another order: "gradient-tape"
)
