"""A loop of steps each taken from the starting values instead of the previous step's.

``fast = list(params)``, then in a loop ``grads = tape.gradient(loss, fast)`` and
``fast = [w - lr * g for w, g in zip(params, grads)]``: the gradient is taken at ``fast``
but subtracted from ``params``, so every pass starts again from ``params``. Several steps
amount to one step with the last gradient: a few-step adaptation (MAML's inner loop, a
hand-written fine-tuning) adapts much less than its step count says, and nothing raises.

Read from the source of the cell that writes the loop (``ast``, never run), per scope:
a ``for``/``while`` loop whose body binds ``G = <tape>.gradient(T, N)`` and, after it,
``N = <step>`` where the step reads ``G`` and another plain name ``M`` but not ``N``
(``[w - c * g for w, g in zip(M, G)]``, ``M - c * G``). Told only when ``N`` carries from
one pass to the next (the body binds it nowhere before the gradient), ``M`` stays the same
over the loop (the body never binds it), and ``N`` starts from ``M`` (its last binding
before the loop reads ``M``: ``N = list(M)``, ``N = M``, ``[tf.identity(w) for w in M]``).
A loop that starts each pass from ``M`` on purpose (``N = list(M)`` inside it: one step
per task) binds ``N`` before the gradient and stays silent. Told once per statement, in
the cell that defines it. The fix steps from ``N``: ``zip(N, G)`` (or ``N - c * G``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, function_scopes, parsed_source

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class Restart:
    function: str | None
    statement: str  # ``fast = [w - lr * g for w, g in zip(params, grads)]``
    fix: str
    line: int
    carried: str  # ``fast``
    start: str  # ``params``
    gradient: str  # ``grads = tape.gradient(loss, fast)``
    gradient_line: int


def _segment(source: str, node: ast.AST) -> str:
    return " ".join((ast.get_source_segment(source, node) or "").split())


def _nodes(statements: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of these statements, without the bodies of nested scopes."""
    found: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        found.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                visit(child)

    for statement in statements:
        if not isinstance(statement, _SCOPES):
            visit(statement)
    return found


def _stores(nodes: list[ast.AST], name: str) -> list[int]:
    return [
        node.lineno
        for node in nodes
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
    ]


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _gradient_of(node: ast.AST) -> tuple[str, str] | None:
    """``(G, N)`` of ``G = <tape>.gradient(T, N)``."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and call_name(node.value) == "gradient"
        and isinstance(node.value.func, ast.Attribute)
        and len(node.value.args) >= 2
        and isinstance(node.value.args[1], ast.Name)
    ):
        return None
    return node.targets[0].id, node.value.args[1].id


def _stepped_from(value: ast.expr, gradients: str, carried: str) -> ast.Name | None:
    """``M`` (its node) of ``[w - c * g for w, g in zip(M, G)]`` or ``M - c * G``."""
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        iterated = value.generators[0].iter
        if (
            isinstance(iterated, ast.Call)
            and call_name(iterated) == "zip"
            and len(iterated.args) == 2
            and all(isinstance(a, ast.Name) for a in iterated.args)
        ):
            first, second = iterated.args
            assert isinstance(first, ast.Name) and isinstance(second, ast.Name)
            if second.id == gradients and first.id != carried:
                return first
            if first.id == gradients and second.id != carried:
                return second
        return None
    if (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Sub | ast.Add)
        and isinstance(value.left, ast.Name)
        and value.left.id not in (carried, gradients)
        and gradients in _reads(value.right)
    ):
        return value.left
    return None


def _starts_from(scope_nodes: list[ast.AST], loop: ast.stmt, carried: str, start: str) -> bool:
    """Whether ``carried``'s last binding before ``loop`` reads ``start``."""
    last: ast.Assign | None = None
    for node in scope_nodes:
        if (
            isinstance(node, ast.Assign)
            and node.lineno < loop.lineno
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == carried
            and (last is None or node.lineno > last.lineno)
        ):
            last = node
    return last is not None and start in _reads(last.value)


def _loop_restarts(
    source: str, scope: ast.AST, scope_nodes: list[ast.AST], loop: ast.For | ast.While
) -> list[Restart]:
    body = _nodes(loop.body)
    found: list[Restart] = []
    for node in body:
        taken = _gradient_of(node)
        if taken is None:
            continue
        gradients, carried = taken
        assert isinstance(node, ast.Assign)
        if any(line < node.lineno for line in _stores(body, carried)):
            continue  # bound afresh in each pass before the gradient: meant
        for step in body:
            if not (
                isinstance(step, ast.Assign)
                and step.lineno > node.lineno
                and len(step.targets) == 1
                and isinstance(step.targets[0], ast.Name)
                and step.targets[0].id == carried
            ):
                continue
            start = _stepped_from(step.value, gradients, carried)
            if start is None or carried in _reads(step.value):
                continue
            if _stores(body, start.id) or not _starts_from(scope_nodes, loop, carried, start.id):
                continue
            statement = _segment(source, step)
            written = ast.get_source_segment(source, step)
            if not statement or written is None or "\n" in written:
                continue
            offset = start.col_offset - step.col_offset
            fix = written[:offset] + carried + written[offset + len(start.id) :]
            found.append(
                Restart(
                    getattr(scope, "name", None),
                    statement,
                    fix,
                    step.lineno,
                    carried,
                    start.id,
                    _segment(source, node),
                    node.lineno,
                )
            )
    return found


def restarts(source: str) -> list[Restart]:
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Restart] = []
    for scope in function_scopes(tree):
        scope_nodes = _nodes(list(getattr(scope, "body", [])))
        for loop in scope_nodes:
            if isinstance(loop, ast.For | ast.While):
                found.extend(_loop_restarts(source, scope, scope_nodes, loop))
    return found


class RestartedStepCheck:
    """Each step told once, in the cell that writes it."""

    def __init__(self) -> None:
        self._told: set[tuple[str | None, str]] = set()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if len(source) > MAX_CELL_CHARS or ".gradient(" not in source:
            return []
        found: list[Note] = []
        for restart in restarts(source):
            key = (restart.function, restart.statement)
            if key in self._told:
                continue
            self._told.add(key)
            where = f"line {restart.line}" + (
                f", in `{restart.function}`" if restart.function else ""
            )
            found.append(
                reports.note(
                    f"`{restart.statement}` ({where}) steps from `{restart.start}` while "
                    f"the gradient is taken at `{restart.carried}` (`{restart.gradient}`, "
                    f"line {restart.gradient_line}): every pass of the loop starts again "
                    f"from `{restart.start}`, so several steps amount to one step, taken "
                    f"with the last gradient, and more steps adapt no further. Step from "
                    f"the values the gradient was taken at: `{restart.fix}`.",
                    SECTION,
                )
            )
        return found


_CHECK = RestartedStepCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (the steps told so far: source text only)."""
    return _CHECK.notes(source, namespace)
