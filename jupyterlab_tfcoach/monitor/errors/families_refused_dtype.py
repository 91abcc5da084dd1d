"""A value of a dtype an op has no kernel for (issue #25): ``tf.one_hot(labels, k)`` with
float labels, ``tf.math.unsorted_segment_mean(hits, ids, n)`` with a bool mask,
``tf.gather(table, positions)`` with float positions.

TensorFlow states the dtype it refused and the list it accepts (``Value passed to
parameter 'indices' has DataType float32 not in list of allowed values: ...``, or ``Value
for attr 'T' of bool is not in the list of allowed values: ...``), but neither which of the
learner's values it was nor the cure: TensorFlow never converts a dtype by itself. The
reading finds the one argument of the failing call holding the refused dtype and casts it
there to an accepted dtype: a float to int32 where only integers are accepted (ids,
indices: whole numbers), a bool to float32 (a rate or a mean) or int32, an integer to
float32. A string is never cast (it needs parsing, not a cast): the entry then says less.

When the value is the first parameter of a function given to ``compile`` as the loss,
the entry adds why it is a float: Keras hands ``y_true`` to a loss cast to the
prediction's float dtype, whatever the dtype of the labels given to fit.
"""

from __future__ import annotations

import ast
import inspect
import re

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, rewrite_all
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.origins import origin_sentence

_PARAMETER = re.compile(
    r"Value passed to parameter '(?P<param>\w+)' has DataType (?P<dtype>\w+) not in list "
    r"of allowed values: (?P<allowed>[\w, ]+)"
)
_ATTRIBUTE = re.compile(
    r"Value for attr '\w+' of (?P<dtype>\w+) is not in the list of allowed values: "
    r"(?P<allowed>[\w, ]+)"
)
# The names the messages use for dtypes -> TensorFlow's names.
_ALIASES = {"float": "float32", "double": "float64", "half": "float16"}
_INTEGERS = ("int32", "int64")


def _allowed(text: str) -> set[str]:
    return {_ALIASES.get(part.strip(), part.strip()) for part in text.split(",") if part.strip()}


def _target(refused: str, allowed: set[str]) -> str | None:
    """The dtype the refused value is cast to, or None when a cast is not the cure."""
    if refused == "bool":
        if "float32" in allowed:
            return "float32"
        return next((d for d in _INTEGERS if d in allowed), None)
    if refused.startswith(("float", "bfloat", "half", "double")):
        if "float32" in allowed and refused != "float32":
            return "float32"
        return next((d for d in _INTEGERS if d in allowed), None)
    if refused.startswith(("int", "uint")):
        if "int32" in allowed:
            return "int32"
        return "float32" if "float32" in allowed else None
    return None


def _arguments(call: ast.Call) -> list[ast.expr]:
    given = [node for node in call.args if not isinstance(node, ast.Starred)]
    return given + [keyword.value for keyword in call.keywords if keyword.arg]


def _parameter_node(
    call: ast.Call, error: Recognised, line: FailingLine, context: ErrorContext
) -> ast.expr | None:
    """The argument bound to the parameter the message names (``indices``), read from the
    callee's signature; None when the message names none or it cannot be bound."""
    if not error.matched(_PARAMETER):
        return None
    parameter = error.group("param")
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    try:
        function = library_callee(call.func, line.frame, context)
        if function is None:
            return None
        bound = inspect.signature(function).bind_partial(
            *[node for node in call.args if not isinstance(node, ast.Starred)]
        )
    except Exception:
        return None
    node = bound.arguments.get(parameter)
    return node if isinstance(node, ast.expr) else None


def _loss_parameter(line: FailingLine, context: ErrorContext, name: str) -> bool:
    """Whether ``name`` is the first parameter of the function the failing line is in, and
    that function is given to ``compile(loss=...)`` in one of the cells the error went
    through."""
    tree = line.frame.tree()
    if tree is None:
        return False
    at = line.frame.position.line
    function = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= at <= (node.end_lineno or node.lineno)
            and node.args.args
            and node.args.args[0].arg == name
        ),
        None,
    )
    if function is None:
        return False
    for frame in context.frames():
        cell = frame.tree()
        for node in ast.walk(cell) if cell is not None else ():
            if (
                isinstance(node, ast.keyword)
                and node.arg == "loss"
                and isinstance(node.value, ast.Name)
                and node.value.id == function.name
            ):
                return True
    return False


def _read_refused_dtype(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if line.statement is None:
        return None
    refused = _ALIASES.get(error.group("dtype"), error.group("dtype"))
    allowed = _allowed(error.group("allowed"))
    if refused in allowed:
        return None
    if not isinstance(call, ast.Call):
        # An operator (``mask * scores - offset``): the one name of the statement holding
        # the refused dtype.
        return _name_inside(line.statement, refused, allowed, line, context)
    named = _parameter_node(call, error, line, context)
    holding = []
    for node in [named] if named is not None else _arguments(call):
        operand = operand_of(node, line, context)
        if operand is not None and operand.dtype == refused:
            holding.append((node, operand))
    if not holding and named is None:
        made = _made_on_line(call, refused, allowed, line, context)
        if made is not None:
            return made
    if not holding and named is None:
        # ``tf.math.lgamma(counts + 1)``: the argument is an expression; the one name read
        # in the arguments that holds the refused dtype.
        return _name_inside(call, refused, allowed, line, context)
    # Only a single argument of that dtype is surely the one refused.
    if len(holding) != 1:
        return None
    node, operand = holding[0]
    source = operand.source
    target = _target(refused, allowed)
    called = line.frame.segment(call.func) or "the call"
    shown = ", ".join(sorted(allowed)[:8])
    what = f"its {code(error.group('param'))}" if named is not None else "this value"
    rule = (
        f"{code(called)} accepts {what} only as {shown}, and {code(source)} is "
        f"{operand.description}: TensorFlow never converts a dtype by itself"
    )
    if _loss_parameter(line, context, source):
        rule += (
            f". {code(source)} is a float because Keras casts the labels it gives a loss to "
            "the predictions' float dtype, whatever dtype the labels had when given to fit"
        )
    if target is None:
        return Finding(rule + f": convert {code(source)} first.", None)
    tf = tf_alias(context)
    cast = f"{tf}.cast({source}, {tf}.{target})"
    if refused.startswith("float") and target in _INTEGERS:
        rule += (
            f"; where ids or positions are read they must be integers: cast it to {target} "
            "in the call (its values must be whole numbers)"
        )
    else:
        rule += f"; cast it to {target} in the call"
    fixed = rewrite(line.frame, line.statement, node, cast)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


# TensorFlow's constructors that make an int32 tensor from Python integers unless told a
# dtype (``tf.range(2, k + 2)``), and take ``dtype=`` to make floats from the same numbers.
_INT_CONSTRUCTORS = frozenset({"range", "constant", "convert_to_tensor"})


def _python_integers(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    """Whether every value in ``node`` is a Python integer: int literals, names holding an
    int, arithmetic and lists of those (what TensorFlow makes an int32 tensor from)."""
    for part in ast.walk(node):
        if isinstance(part, ast.Constant):
            if type(part.value) is not int:
                return False
        elif isinstance(part, ast.Name):
            operand = operand_of(part, line, context)
            if operand is None or type(operand.value) is not int:
                return False
        elif not isinstance(
            part,
            (ast.BinOp, ast.UnaryOp, ast.List, ast.Tuple, ast.operator, ast.unaryop, ast.Load),
        ):
            return False
    return True


def _made_on_line(
    call: ast.Call, refused: str, allowed: set[str], line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``tf.math.log(tf.range(2, k + 2))``: the refused integers are a tensor the failing
    call's argument makes from Python integers, with no ``dtype``; the fix gives that
    constructor the accepted float dtype (no cast of a tensor made the wrong way)."""
    target = _target(refused, allowed)
    if refused != "int32" or target is None or not target.startswith("float"):
        return None
    statement = line.statement
    frame = line.frame
    made = []
    for argument in _arguments(call):
        if not (
            isinstance(argument, ast.Call)
            and isinstance(argument.func, ast.Attribute)
            and argument.func.attr in _INT_CONSTRUCTORS
            and not any(k.arg == "dtype" or k.arg is None for k in argument.keywords)
            and argument.args
            and not any(isinstance(a, ast.Starred) for a in argument.args)
        ):
            continue
        found, module = value_of(argument.func.value, frame, context)
        name = getattr(module, "__name__", "") if found else ""
        if type(name) is not str or not name.startswith("tensorflow"):
            continue
        if argument.func.attr == "constant" and len(argument.args) > 1:
            continue  # its dtype given by position
        if all(_python_integers(a, line, context) for a in argument.args):
            made.append(argument)
    if len(made) != 1 or statement is None:
        return None
    constructor = made[0]
    written = frame.segment(constructor)
    called = frame.segment(call.func)
    if not written or not called or not written.endswith(")") or "\n" in written:
        return None
    tf = tf_alias(context)
    with_dtype = f"{written[:-1]}, dtype={tf}.{target})"
    shown = ", ".join(sorted(allowed)[:8])
    rule = (
        f"{code(called)} accepts only {shown}, and {code(written)} is an int32 tensor: "
        "TensorFlow makes int32 from Python integers and never converts a dtype by itself. "
        f"Ask the constructor for floats, {code(with_dtype)}, and the numbers are {target} "
        "from the start"
    )
    fixed = rewrite(frame, statement, constructor, with_dtype)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _enclosing_function(line: FailingLine, name: str) -> str | None:
    """The function the failing line is in, when ``name`` is one of its parameters."""
    tree = line.frame.tree()
    at = line.frame.position.line
    best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= at <= (node.end_lineno or node.lineno)
            and (best is None or node.lineno > best.lineno)
        ):
            best = node
    if best is None:
        return None
    parameters = [a.arg for a in (*best.args.posonlyargs, *best.args.args, *best.args.kwonlyargs)]
    return best.name if name in parameters else None


def _name_inside(
    part: ast.AST, refused: str, allowed: set[str], line: FailingLine, context: ErrorContext
) -> Finding | None:
    """The refused value read inside an expression: the one name in ``part`` that holds the
    refused dtype, cast where it enters. A parameter of the function the line is in is cast
    as the function's first statement (every later use of it then has the accepted dtype);
    any other name is cast at each place the failing statement reads it."""
    statement = line.statement
    if statement is None:
        return None
    places: dict[str, list[ast.Name]] = {}
    described = {}
    for node in ast.walk(part):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in described:
                described[node.id] = operand_of(node, line, context)
            operand = described[node.id]
            if operand is not None and operand.dtype == refused:
                places.setdefault(node.id, []).append(node)
    target = _target(refused, allowed)
    if len(places) != 1 or target is None:
        return None
    name, nodes = next(iter(places.items()))
    operand = described[name]
    if operand is None:
        return None
    tf = tf_alias(context)
    cast = f"{tf}.cast({name}, {tf}.{target})"
    shown = ", ".join(sorted(allowed)[:8])
    called = line.frame.segment(part.func) if isinstance(part, ast.Call) else None
    subject = code(called) if called and "\n" not in called else "This operation"
    rule = (
        f"{subject} accepts only {shown}, and {code(name)} is {operand.description}: "
        "TensorFlow never converts a dtype by itself"
    )
    function = _enclosing_function(line, name)
    if function is not None:
        rule += (
            f"; {code(name)} is a parameter of {code(function)}: cast it where it enters, "
            f"so that every use of it in the function has the {target} dtype"
        )
        return Finding(
            rule + ".",
            f"as the first statement of {code(function)}: {code(f'{name} = {cast}')}",
        )
    made = origin_sentence(nodes[0], line.frame, context)
    rule += f"; cast it to {target} where the statement reads it.{made}"
    fixed = rewrite_all(line.frame, statement, [(node, cast) for node in nodes])
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule, fix)


REFUSED_DTYPE = ErrorFamily(
    "a value of a dtype the op has no kernel for",
    messages=(Message(_PARAMETER), Message(_ATTRIBUTE)),
    read=_read_refused_dtype,
    section="dtype-casting",
)
