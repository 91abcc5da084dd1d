"""The tape statements an error entry reads back from the learner's cell: the statement
that bound some gradients from ``<tape>.gradient(target, sources)``, and the ``with ...
as <tape>:`` block before it. Shared by the dtype explainers (a gradient of the wrong
dtype) and the graph-cut reading (gradients all None), which read the same two
statements."""

from __future__ import annotations

import ast


def _stored_names(node: ast.AST) -> set[str]:
    return {
        inner.id
        for inner in ast.walk(node)
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)
    }


def gradient_statement(tree: ast.Module, name: str) -> tuple[ast.Assign, ast.Call] | None:
    """The statement binding ``name`` (``grad_w``, or ``grads`` of ``grads[0]``) from a
    ``<tape>.gradient(target, sources)`` call, with that call."""
    root = name.split("[", 1)[0].strip()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or root not in _stored_names(node):
            continue
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "gradient"
            and len(value.args) >= 2
            and isinstance(value.func.value, ast.Name)
        ):
            return node, value
    return None


def tape_block(tree: ast.Module, tape: str, before: int) -> ast.With | None:
    """The last ``with ... as <tape>:`` block that starts before line ``before``."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and node.lineno < before:
            for item in node.items:
                target = item.optional_vars
                if isinstance(target, ast.Name) and target.id == tape:
                    if found is None or node.lineno > found.lineno:
                        found = node
    return found
