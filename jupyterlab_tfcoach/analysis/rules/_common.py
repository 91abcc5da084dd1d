"""Small AST helpers several rules share."""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.model import Path, Scope

# Binary operators and their source text. The first eight are arithmetic, the
# operators TensorFlow tensors overload for math (mixed dtypes fail there).
OPERATOR_TEXT: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
}
ARITHMETIC_OPERATORS = frozenset(list(OPERATOR_TEXT)[:8])

# Expressions that never need parentheses when spliced into a larger expression.
_ATOMS = (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Dict)


def number_literal(node: ast.AST) -> int | float | None:
    """``3`` / ``-0.5`` -> the number; bools, strings and everything else -> None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return sign * node.value
    return None


def same_reference(a: ast.AST, b: ast.AST) -> bool:
    """``w`` and ``w``, or ``self.w`` and ``self.w``."""
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):
        return a.attr == b.attr and same_reference(a.value, b.value)
    return False


def parenthesized(text: str, node: ast.AST) -> str:
    """``text`` (the source of ``node``), wrapped in parentheses unless it is an atom."""
    return text if isinstance(node, _ATOMS) else f"({text})"


def function_label(scope: Scope) -> str:
    return f"`{scope.name}`"


# Calls that are true only when a tf.function body runs eagerly (``run_functions_eagerly``).
_EAGER_CHECKS = frozenset({"tf.executing_eagerly", "tf.config.functions_run_eagerly"})


def _eager_check(imports: TFImports, test: ast.expr) -> bool:
    return isinstance(test, ast.Call) and imports.resolve(test.func) in _EAGER_CHECKS


def in_eager_only_branch(imports: TFImports, path: Path) -> bool:
    """Inside ``if tf.executing_eagerly():`` (or the ``else`` of its negation).

    While tracing the test is False, so that code never runs in the graph: eager-only
    debugging there (``print``, ``.numpy()``) is correct.
    """
    for block in path:
        owner = block.owner
        if block.kind != "if" or not isinstance(owner, ast.If):
            continue
        test = owner.test
        if block.branch == 0 and _eager_check(imports, test):
            return True
        if (
            block.branch == 1
            and isinstance(test, ast.UnaryOp)
            and isinstance(test.op, ast.Not)
            and _eager_check(imports, test.operand)
        ):
            return True
    return False
