"""An episode loop that never resets its environment (issue #25).

``obs = world.reset()`` once, then ``for ep in range(n): finished = False; while not
finished: obs, r, finished = world.step(a)``: every episode after the first starts where
the last one stopped (at the goal, or with a step counter past its limit), so it ends
after a step or two, and the logged returns and the training data say nothing about
playing from the start. Nothing raises.

Read from a completed cell's source (a cell without ``.reset(``, ``.step(`` and ``while
not`` costs three substring tests), inside its functions too: a ``for`` loop whose body
sets a flag (``finished = False``, or one name of a tuple assignment) and then runs
``while not finished:`` whose body calls ``<env>.step(...)``; the loop's body never
calls ``<env>.reset(...)`` nor passes ``<env>`` to another call (which may reset it),
and the same scope calls
``<env>.reset(...)`` before the loop. The note names the reset, the loop and the flag;
the fix moves the reset statement to the start of the loop's body.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source, source_segment

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000


def _method_call(node: ast.AST, method: str) -> str | None:
    """``env`` for ``env.step(...)`` (a name or attribute chain as written)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, (ast.Name, ast.Attribute))
    ):
        return ast.dump(node.func.value)
    return None


def _flag_loop(loop: ast.For) -> tuple[ast.While, str, ast.stmt] | None:
    """The ``while not flag:`` of the loop's body after a ``flag = False`` there."""
    flags: dict[str, ast.stmt] = {}
    for statement in loop.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
            pairs = [(target, value)]
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                pairs = list(zip(target.elts, value.elts, strict=False))
            for name, given in pairs:
                if isinstance(name, ast.Name) and isinstance(given, ast.Constant):
                    if given.value is False:
                        flags[name.id] = statement
        if (
            isinstance(statement, ast.While)
            and isinstance(statement.test, ast.UnaryOp)
            and isinstance(statement.test.op, ast.Not)
            and isinstance(statement.test.operand, ast.Name)
            and statement.test.operand.id in flags
        ):
            name = statement.test.operand.id
            return statement, name, flags[name]
    return None


def _passes(loop: ast.For, env: str) -> bool:
    """Whether the loop calls ``env.reset`` or gives ``env`` to any call but its step."""
    for node in ast.walk(loop):
        if not isinstance(node, ast.Call):
            continue
        if _method_call(node, "reset") == env:
            return True
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            if ast.dump(argument) == env:
                return True
    return False


def _scopes(tree: ast.Module) -> list[list[ast.stmt]]:
    bodies: list[list[ast.stmt]] = [tree.body]
    bodies += [
        node.body
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    return bodies


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if ".reset(" not in source or ".step(" not in source or "while not" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for body in _scopes(tree):
        resets: list[tuple[ast.stmt, str]] = []
        for statement in body:
            if isinstance(statement, ast.For):
                found = _flag_loop(statement)
                if found is None:
                    continue
                inner, flag, flag_statement = found
                steps = {
                    env
                    for node in ast.walk(inner)
                    if (env := _method_call(node, "step")) is not None
                }
                for reset, env in resets:
                    if env in steps and not _passes(statement, env):
                        return [_note(source, reset, statement, flag, flag_statement)]
            for node in ast.walk(statement):
                env = _method_call(node, "reset")
                if env is not None and not isinstance(statement, (ast.For, ast.While)):
                    resets.append((statement, env))
    return []


def _note(source: str, reset: ast.stmt, loop: ast.For, flag: str, flag_statement: ast.stmt) -> Note:
    reset_text = source_segment(source, reset) or ""
    header = source_segment(source, loop.iter) or ""
    target = source_segment(source, loop.target) or ""
    flag_text = source_segment(source, flag_statement) or f"{flag} = False"
    return reports.note(
        f"`{reset_text}` (line {reset.lineno} of this cell) runs once, before the loop "
        f"`for {target} in {header}:` (line {loop.lineno}). Each pass sets `{flag_text}` "
        f"and plays until `{flag}`, as if a new episode began, but the environment is never "
        "reset: after the first episode ends, the next one steps on from where it stopped "
        "(at the goal, or past its step limit), so it ends after a step or so and what is "
        "logged and trained on is not a played episode, without any error. Reset at the "
        f"start of every episode: move `{reset_text}` to the first line of the loop's body.",
        SECTION,
    )
