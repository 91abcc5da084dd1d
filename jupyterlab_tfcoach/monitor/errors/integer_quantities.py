"""An integer tensor that holds quantities, met by a Python float in element-wise math
(issue #25): ``tf.maximum(grades, 0.0)`` with int32 ``grades``, whose result the function
then raises to a power of ``2.0``.

TensorFlow refuses to turn the float into the tensor's integer dtype (``Cannot convert 0.0
to EagerTensor of dtype int32``). Writing the literal as an integer (``0``) makes that line
run, but when the values are quantities the code computes with in floats, the next line
that meets a float fails the same way: the cure is to make the tensor a float where it
enters. The reading calls the values quantities only on evidence from the code: the
failing call is element-wise arithmetic (not a size or a depth), and the integer name, or
a name the failing statement assigns, meets a Python float in arithmetic on a later line
of the same function (or cell). The cast then goes where the name enters: as the first
statement of the function it is a parameter of. Without that evidence the literal written
as an integer stays the fix (a count or an index that must stay whole).
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine

# Element-wise ops whose arguments are values to compute with, not sizes or positions.
_ELEMENTWISE = frozenset(
    {
        "maximum",
        "minimum",
        "add",
        "subtract",
        "multiply",
        "divide",
        "truediv",
        "pow",
        "clip_by_value",
        "squared_difference",
    }
)
_MAX_SCANNED = 400  # statements of the scope read


def _function_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _scope(line: FailingLine) -> ast.AST | None:
    """The innermost function holding the failing line, else the cell."""
    tree = line.frame.tree()
    if tree is None:
        return None
    at = line.frame.position.line
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= at <= (node.end_lineno or node.lineno)
            and (scope is tree or node.lineno > getattr(scope, "lineno", 0))
        ):
            scope = node
    return scope


def _is_float_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is float


def _float_met_later(scope: ast.AST, names: set[str], after: int) -> tuple[str, ast.BinOp] | None:
    """The first arithmetic below line ``after`` with one of ``names`` on one side and a
    float literal on the other: (the name, the arithmetic)."""
    scanned = 0
    for statement in _own_statements(scope):
        if statement.lineno <= after:
            continue
        scanned += 1
        if scanned > _MAX_SCANNED:
            return None
        for node in ast.walk(statement):
            if not isinstance(node, ast.BinOp):
                continue
            for mine, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(mine, ast.Name) and mine.id in names and _is_float_literal(other):
                    return mine.id, node
    return None


def _own_statements(scope: ast.AST) -> list[ast.stmt]:
    """The scope's statements at any depth of its blocks, not those of nested functions or
    classes (their names are other names)."""
    found: list[ast.stmt] = []
    waiting = list(getattr(scope, "body", []))
    while waiting and len(found) <= _MAX_SCANNED:
        statement = waiting.pop(0)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        found.append(statement)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, [])
            waiting.extend(node for node in inner if isinstance(node, ast.stmt))
    return found


def _parameters(scope: ast.AST) -> list[str]:
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    arguments = scope.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _targets(statement: ast.stmt | None) -> set[str]:
    if isinstance(statement, ast.Assign):
        return {t.id for t in statement.targets if isinstance(t, ast.Name)}
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and isinstance(
        statement.target, ast.Name
    ):
        return {statement.target.id}
    return set()


def quantity_cast(value: str, dtype: str, line: FailingLine, tf: str) -> tuple[str, str] | None:
    """(rule, fix) casting the integer parameter where it enters the function, when the
    Python float ``value`` met it (of ``dtype``) in element-wise math and the code computes
    with it in floats later; None otherwise (the caller's other readings apply)."""
    call = line.call
    if not isinstance(call, ast.Call) or _function_name(call) not in _ELEMENTWISE:
        return None
    given = {
        node.id
        for node in (*call.args, *(keyword.value for keyword in call.keywords))
        if isinstance(node, ast.Name)
    }
    integers = [o for o in line.operands if o.dtype == dtype and o.source in given]
    if len(integers) != 1:
        return None
    integer = integers[0]
    name = integer.source
    scope = _scope(line)
    if scope is None:
        return None
    function = scope.name if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    parameter = name in _parameters(scope)
    if function is not None and not parameter and name not in _assigned_in(scope):
        return None  # a global read inside a function: a cast there would make it local
    later = _float_met_later(scope, {name} | _targets(line.statement), line.frame.position.line)
    if later is None:
        return None
    met, arithmetic = later
    made = "" if met == name else " (made from it on the failing line)"
    written = line.frame.segment(arithmetic)
    short = written and "\n" not in written and len(written) <= 80
    where = code(written) if short else "a later line"
    called = line.frame.segment(call) or name
    owner = code(function) if function is not None else "the cell"
    rule = (
        f"In {code(called)}, the Python float {value} meets {code(name)}, "
        f"{integer.description}: a Python number takes the dtype of the tensor it meets, "
        f"and {value} cannot become {integer.dtype}. {code(name)} holds quantities "
        f"{owner} computes with in floats: {code(met)}{made} meets a float again "
        f"in {where}, so writing the number as an integer would only move the error there"
    )
    cast = code(f"{name} = {tf}.cast({name}, {tf}.float32)")
    if parameter and function is not None:
        rule += f". Make {code(name)} a float where it enters {code(function)}"
        return rule + ".", f"as the first statement of {code(function)}: {cast}"
    rule += f". Make {code(name)} a float before it is used here"
    return rule + ".", f"as the line before the failing one: {cast}"


def _assigned_in(scope: ast.AST) -> set[str]:
    names: set[str] = set()
    for statement in _own_statements(scope):
        names |= _targets(statement)
    return names
