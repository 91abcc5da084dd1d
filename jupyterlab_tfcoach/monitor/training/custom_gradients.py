"""A ``@tf.custom_gradient`` whose gradient function never uses its ``upstream`` argument.

TensorFlow calls the inner gradient function with ``upstream``, the gradient of the final
target with respect to the decorated function's output, and takes what it returns as the
gradient with respect to the inputs: by the chain rule, ``upstream * local_derivative``.
A function that returns only the local derivative (``def grad(upstream): return 1.0 /
x``) drops every factor from the operations after it: ``3.0 * safe_log(x)`` differentiates
as ``safe_log(x)`` would, a mean over a batch as a sum. The numbers look plausible and
nothing raises; it is right only when the output is the target itself.

Told in the cell that defines it, from its source: after a completed cell holding
``custom_gradient`` (one substring test otherwise), each function decorated with a name
ending in ``custom_gradient`` whose body defines the gradient function it returns second
(``return y, grad``; else its only inner ``def``), when that function's first parameter is
never read in its body. The fix is the gradient function's ``return`` with each returned
value multiplied by that parameter (written only when the gradient function takes nothing
else: one that also takes the variables returns their gradients as a second list).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import dotted_name, parsed_source

SECTION = "gradient-tape"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _decorated(function: ast.AST) -> bool:
    if not isinstance(function, _DEFS):
        return False
    for decorator in function.decorator_list:
        name = dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name and name.split(".")[-1] == "custom_gradient":
            return True
    return False


def _gradient_function(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.FunctionDef | None:
    """The inner ``def`` the decorated function returns second (``return y, grad``)."""
    inner = {node.name: node for node in function.body if isinstance(node, ast.FunctionDef)}
    if not inner:
        return None
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) == 2
            and isinstance(node.value.elts[1], ast.Name)
            and node.value.elts[1].id in inner
        ):
            return inner[node.value.elts[1].id]
    return next(iter(inner.values())) if len(inner) == 1 else None


def _reads(body: list[ast.stmt], name: str) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
        for statement in body
        for node in ast.walk(statement)
    )


def _fixed_return(grad: ast.FunctionDef, upstream: str) -> tuple[str, str] | None:
    """(the return as written, the return with each value times ``upstream``)."""
    if len(grad.args.args) + len(grad.args.kwonlyargs) > 1 or grad.args.kwarg:
        return None  # it takes the variables too: their gradients are a second list
    returns = [node for node in ast.walk(grad) if isinstance(node, ast.Return) and node.value]
    if len(returns) != 1:
        return None
    value = returns[0].value
    assert value is not None
    parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]

    def times(part: ast.expr) -> str:
        text = ast.unparse(part)
        simple = isinstance(part, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        return f"{upstream} * {text}" if simple else f"{upstream} * ({text})"

    return ast.unparse(returns[0]), "return " + ", ".join(times(part) for part in parts)


def _note(function: ast.FunctionDef | ast.AsyncFunctionDef, grad: ast.FunctionDef) -> Note:
    upstream = grad.args.args[0].arg
    text = (
        f"`{grad.name}`, the gradient function `{function.name}` returns under "
        f"`@tf.custom_gradient` (line {grad.lineno} of this cell), never uses `{upstream}`. "
        f"TensorFlow passes in `{upstream}` the gradient of the final target with respect "
        f"to `{function.name}`'s output, and takes what `{grad.name}` returns as the "
        f"gradient with respect to its inputs: by the chain rule, `{upstream}` times the "
        f"local derivative. Returning the local derivative alone drops every operation "
        f"after `{function.name}` from the gradient (a scale, a mean, the rest of a loss): "
        "the gradients are wrong whenever its output is not the target itself, and "
        "nothing raises."
    )
    fixed = _fixed_return(grad, upstream)
    if fixed is not None:
        written, fix = fixed
        text += f" Multiply by it: `{fix}` in place of `{written}`."
    else:
        text += f" Multiply each gradient it returns by `{upstream}`."
    return reports.note(text, SECTION)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "custom_gradient" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for function in ast.walk(tree):
        if not _decorated(function):
            continue
        assert isinstance(function, _DEFS)
        grad = _gradient_function(function)
        if grad is None or not grad.args.args:
            continue
        if _reads(grad.body, grad.args.args[0].arg):
            continue
        found.append(_note(function, grad))
        if len(found) >= MAX_NOTES:
            break
    return found
