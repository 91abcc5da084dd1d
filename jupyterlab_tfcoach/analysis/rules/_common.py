"""Small AST helpers several rules share."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from jupyterlab_tfcoach.analysis.model import Path, Scope

# ``in_eager_only_branch`` is re-exported for the rules: it lives in traced.py, next to the
# tf.function lookups that also need it.
from jupyterlab_tfcoach.analysis.traced import BY_DATASET, BY_KERAS, TraceReach
from jupyterlab_tfcoach.analysis.traced import in_eager_only_branch as in_eager_only_branch

if TYPE_CHECKING:
    from jupyterlab_tfcoach.analysis.context import RuleContext

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


def dotted_parts(node: ast.AST) -> tuple[str, list[str]] | None:
    """``np.random.normal`` -> (``np``, [``random``, ``normal``]); None unless a chain of
    attributes on a plain name."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return node.id, attrs[::-1]


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


def traced_function_label(reach: TraceReach) -> str:
    """The traced function, named with what traces it: ``tf.function `step```,
    ``Keras-traced `Scale.call``` (a compiled model's ``fit`` runs it in a tf.function),
    ``Dataset.map function `scale```."""
    function = reach.function
    if reach.by == BY_KERAS and function.class_scope is not None:
        return f"Keras-traced `{function.class_scope.name}.{function.name}`"
    if reach.by == BY_DATASET:
        return f"Dataset.map function {function_label(function)}"
    return f"tf.function {function_label(function)}"


def traced_code(reach: TraceReach, what: str) -> str:
    """Where ``what`` (a snippet in backticks) runs, to open a message with.

    ``"`print(...)` in tf.function `step`"`` in the tf.function's own body;
    ``"`helper` is called from tf.function `step`, so `print(...)` in it"`` in a helper.
    """
    caller = traced_function_label(reach)
    if reach.helper is None:
        return f"{what} in {caller}"
    return f"{function_label(reach.helper)} is called from {caller}, so {what} in it"


# "trace", "traced", "tracing", "retracing", ...: the words of a deliberate trace counter.
TRACE_WORD = re.compile(r"\b(?:re)?trac(?:e|ed|es|ing)\b", re.IGNORECASE)


def names_tracing(identifier: str) -> bool:
    """``num_traces``, ``trace_count``, ``retracingCalls``: an identifier with a trace word.

    Underscores and camelCase humps are word breaks here, as spaces are in prose.
    """
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier).replace("_", " ")
    return TRACE_WORD.search(words) is not None


def guarded_by_is_none(path: Path, target: ast.AST) -> bool:
    """Under ``if <target> is None:`` or ``if not <target>:`` (``target`` a name,
    ``self.attr`` or an item such as ``cache[0]``).

    The documented create-once idiom: the assignment runs on the first trace only, and
    later traces see the stored object.
    """
    for block in path:
        owner = block.owner
        if block.kind != "if" or block.branch != 0 or not isinstance(owner, ast.If):
            continue
        test = owner.test
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            tested = test.left
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            tested = test.operand
        else:
            continue
        # An item of a container: the guard on one slot covers filling the others with it
        # (``if cache[0] is None: cache[0] = a; cache[1] = b``).
        if same_reference(tested, target) or (
            isinstance(tested, ast.Subscript)
            and isinstance(target, ast.Subscript)
            and ast.dump(tested.value) == ast.dump(target.value)
        ):
            return True
    return False


Span = tuple[tuple[int, int], tuple[int, int]]  # (line, column) of the first and last statement


def init_scope_spans(ctx: RuleContext) -> list[Span]:
    """Source spans of the bodies of ``with tf.init_scope():`` statements.

    ``tf.init_scope`` lifts its body out of the graph being traced: the explicit way to do
    one-time, trace-time work, so Python state changed there is meant to change once.
    One walk of the tree, and only in files that call ``tf.init_scope`` at all.
    """
    calls = {id(site.node) for site in ctx.calls_to("tf.init_scope")}
    if not calls:
        return []
    spans = []
    for node in ast.walk(ctx.model.tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
            id(item.context_expr) in calls for item in node.items
        ):
            first, last = node.body[0], node.body[-1]
            spans.append(
                (
                    (first.lineno, first.col_offset),
                    (last.end_lineno or last.lineno, last.end_col_offset or 0),
                )
            )
    return spans


def in_spans(node: ast.AST, spans: list[Span]) -> bool:
    position = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return any(start <= position <= end for start, end in spans)


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope (a module or a function), not those of the functions, classes
    or lambdas defined in it: each of those is a scope of its own."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
