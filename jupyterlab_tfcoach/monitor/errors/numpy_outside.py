"""NumPy work on a tf.function's argument, moved out of the function (issue #25).

``@tf.function def step(xs, scores): w = rank_weights(scores.numpy()) ...`` fails while
the function is traced: ``scores`` is symbolic, it has no values for ``.numpy()``, and the
learner's NumPy helpers cannot run in a graph. When the failing statement computes a
value from the function's parameters alone (no name the function computes), that value
does not need the graph: it can be computed before the call, where the argument has
values, and passed in. This is often the whole fix, where "write it in TensorFlow ops"
would mean rewriting the learner's helpers.

Read from the failing frame (known from TensorFlow's message) and the cell that called
the function: the failing statement is ``name = <value>`` in a function whose name holds
a ``tf.function`` in the namespace; ``<value>`` calls ``.numpy()`` on a parameter and
reads no other name the function binds than its parameters; the running cell calls the
function by name, on one line, with an argument for each parameter the value reads. The
fix, in three parts in the learner's names: the ``def`` line with the parameter replaced
by ``name`` (kept, with ``name`` added last, when the body reads it elsewhere), the
statement to drop, and the statement computing ``name`` outside (``.numpy()`` dropped,
each parameter replaced by the call's argument), then the call given ``name``.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    bound_names,
    class_mro,
    code,
    innermost_function,
    rewrite,
    rewrite_all,
)
from jupyterlab_tfcoach.monitor.tftypes import POLYMORPHIC_FUNCTION_MODULE, loaded_class


def _is_tf_function(value: object) -> bool:
    function_class = loaded_class(POLYMORPHIC_FUNCTION_MODULE, "Function")
    return function_class is not None and function_class in class_mro(value)


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    arguments = function.args
    return [*arguments.posonlyargs, *arguments.args]


def _numpy_calls(value: ast.expr, parameters: set[str]) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(value)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "numpy"
        and not node.args
        and not node.keywords
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in parameters
    ]


def _call_site(name: str, context: ErrorContext) -> tuple[CellFrame, ast.stmt, ast.Call] | None:
    """The running cell's one-line statement that calls ``name(...)`` (outside any
    ``def``), and that call."""
    frames = context.frames()
    if not frames:
        return None
    frame = frames[-1]
    tree = frame.tree()
    if tree is None:
        return None
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if statement.lineno != statement.end_lineno:
            continue
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == name
                and not any(isinstance(a, ast.Starred) for a in node.args)
            ):
                return frame, statement, node
    return None


def _argument(call: ast.Call, index: int, parameter: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    return call.args[index] if index < len(call.args) else None


def computed_outside(context: ErrorContext) -> str | None:
    """The fix that computes the failing statement's value before the tf.function's call
    and passes it in; None when the statement does not allow it."""
    found = context.failing_name_assignment()
    if found is None:
        return None
    frame, tree, statement, target = found
    function = innermost_function(tree, frame.position.line)
    if function is None or function.lineno == statement.lineno:
        return None
    known, held = context.lookup(function.name, None)
    if not known or not _is_tf_function(held):
        return None
    parameters = _parameters(function)
    names = [p.arg for p in parameters]
    if target in names or function.args.vararg or function.args.kwarg:
        return None
    numpy_calls = _numpy_calls(statement.value, set(names))
    if not numpy_calls:
        return None
    read = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}
    local = bound_names(function) - set(names)
    if read & local:
        return None  # the value needs something the function computes: it stays inside
    used = [name for name in names if name in read]
    site = _call_site(function.name, context)
    if site is None:
        return None
    call_frame, call_statement, call = site
    arguments: dict[str, ast.expr] = {}
    for index, name in enumerate(names):
        if name in used:
            given = _argument(call, index, name)
            text = call_frame.segment(given) if given is not None else None
            if not text or "\n" in text:
                return None
            arguments[name] = given  # type: ignore[assignment]
    # The value outside: ``.numpy()`` dropped, each parameter the call's argument.
    inside_numpy = {id(c.func.value) for c in numpy_calls}  # type: ignore[attr-defined]
    replacements: list[tuple[ast.AST, str]] = [
        (c, call_frame.segment(arguments[c.func.value.id]) or "")  # type: ignore[attr-defined]
        for c in numpy_calls
    ]
    replacements += [
        (n, call_frame.segment(arguments[n.id]) or "")
        for n in ast.walk(statement.value)
        if isinstance(n, ast.Name) and n.id in arguments and id(n) not in inside_numpy
    ]
    outside_value = rewrite_all(frame, statement.value, replacements)
    # Whether the body reads a parameter the value read anywhere else: then it stays.
    elsewhere = {
        n.id
        for part in function.body
        if part is not statement
        for n in ast.walk(part)
        if isinstance(n, ast.Name) and n.id in used
    }
    dropped = [name for name in used if name not in elsewhere]
    kept_names = [name for name in names if name not in dropped]
    replaced = dropped[0] if len(dropped) == 1 else None
    new_names = [target if name == replaced else name for name in names]
    if replaced is None:
        new_names = [*kept_names, target] if not dropped else []
    if not new_names or outside_value is None or "\n" in outside_value:
        return None
    source_lines = frame.source().splitlines()
    header = source_lines[function.lineno - 1].strip() if function.lineno else ""
    if not header.startswith(("def ", "async def ")) or not header.endswith(":"):
        return None
    if function.end_lineno is None or function.args.defaults or function.args.kwonlyargs:
        return None
    prefix = "async def " if header.startswith("async ") else "def "
    new_header = f"{prefix}{function.name}({', '.join(new_names)}):"
    # The call: the replaced parameter's argument becomes the target, or it is added.
    if replaced is not None:
        new_call_statement = rewrite(call_frame, call_statement, arguments[replaced], target)
    else:
        call_text = call_frame.segment(call) or ""
        if not call_text.endswith(")"):
            return None
        new_call_statement = rewrite(
            call_frame, call_statement, call, f"{call_text[:-1]}, {target})"
        )
    shown = frame.segment(statement)
    call_shown = call_frame.segment(call_statement)
    if not new_call_statement or not shown or not call_shown:
        return None
    line = statement.lineno
    return (
        f"{code(shown)} (line {line}) reads only the function's arguments, so it needs no "
        f"graph: compute {code(target)} before the call, where "
        f"{' and '.join(code(call_frame.segment(arguments[n]) or n) for n in used)} "
        f"{'have' if len(used) > 1 else 'has'} values, and pass it in. Fix: define "
        f"{code(new_header)} and delete line {line}; then replace {code(call_shown)} by "
        f"{code(f'{target} = {outside_value}')} followed by {code(new_call_statement)}."
    )
