"""Gradients of several losses, taken one ``tape.gradient`` call each, then summed.

``g_a = tape.gradient(loss_a, ws)`` then ``g_b = tape.gradient(loss_b, ws)`` on one
non-persistent tape raises at the second call. When the two gradient lists are only
combined item by item afterwards, as a weighted sum (``[wa * a + wb * b for a, b in
zip(g_a, g_b)]``), ``persistent=True`` is not a fix that works in general: a loss that
does not reach some of the variables (another head's weights) gets None gradients there,
and ``wa * None`` raises next. The gradient is linear, so that sum is the gradient of the
same weighted sum of the losses: recorded as one total in the tape, one call gives it,
with zeros where a loss does not reach a variable. Read from the failing frame's source.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, code
from jupyterlab_tfcoach.monitor.errors.tape_statements import tape_block

# The name the fix gives the recorded total, unless the cell already uses it.
_TOTAL_NAMES = ("total_loss", "weighted_loss", "combined_loss")


@dataclass(frozen=True)
class _GradientCall:
    """``result = tape.gradient(target, sources)``."""

    statement: ast.Assign
    result: str
    target: ast.expr
    sources: ast.expr


def _gradient_call(statement: ast.AST, tape: str) -> _GradientCall | None:
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr == "gradient"
        and isinstance(statement.value.func.value, ast.Name)
        and statement.value.func.value.id == tape
        and len(statement.value.args) == 2
        and not statement.value.keywords
    ):
        return None
    call = statement.value
    return _GradientCall(statement, statement.targets[0].id, call.args[0], call.args[1])


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _linear(node: ast.expr, items: set[str]) -> bool:
    """Whether ``node`` is a sum of the ``items`` names, each times or over a factor that
    reads none of them: ``wa * a + wb * b``, ``a + b``, ``0.5 * (a - b)``."""
    if isinstance(node, ast.Name) and node.id in items:
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _linear(node.operand, items)
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, ast.Add | ast.Sub):
        return _linear(node.left, items) and _linear(node.right, items)
    if isinstance(node.op, ast.Mult):
        if not _names(node.left) & items:
            return _linear(node.right, items)
        return not _names(node.right) & items and _linear(node.left, items)
    if isinstance(node.op, ast.Div):
        return not _names(node.right) & items and _linear(node.left, items)
    return False


class _Substitute(ast.NodeTransformer):
    def __init__(self, by_name: dict[str, str]) -> None:
        self.by_name = by_name

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.by_name:
            return ast.copy_location(
                ast.parse(f"({self.by_name[node.id]})", mode="eval").body, node
            )
        return node


@dataclass(frozen=True)
class _Combination:
    """``name = [<linear in the items> for <items> in zip(<results>)]``."""

    statement: ast.Assign
    name: str
    element: ast.expr
    item_of: dict[str, str]  # the comprehension's item name -> the gradient result it walks


def _combination(statement: ast.AST, results: set[str]) -> _Combination | None:
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.ListComp)
        and len(statement.value.generators) == 1
    ):
        return None
    loop = statement.value.generators[0]
    zipped = loop.iter
    if not (
        not loop.ifs
        and isinstance(zipped, ast.Call)
        and isinstance(zipped.func, ast.Name)
        and zipped.func.id == "zip"
        and not zipped.keywords
        and all(isinstance(a, ast.Name) for a in zipped.args)
        and {a.id for a in zipped.args} == results  # type: ignore[attr-defined]
        and len(zipped.args) == len(results)
        and isinstance(loop.target, ast.Tuple)
        and len(loop.target.elts) == len(zipped.args)
        and all(isinstance(e, ast.Name) for e in loop.target.elts)
    ):
        return None
    items = [e.id for e in loop.target.elts]  # type: ignore[attr-defined]
    element = statement.value.elt
    if not (_names(element) >= set(items) and _linear(element, set(items))):
        return None
    item_of = {item: arg.id for item, arg in zip(items, zipped.args, strict=True)}  # type: ignore[attr-defined]
    return _Combination(statement, statement.targets[0].id, element, item_of)


def _assigned(scope: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of each name the scope binds."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.id))
    return found


def summed_gradients(frame: CellFrame, tape: str, failing: ast.Assign) -> str | None:
    """The entry's cause and fix when the failing ``<tape>.gradient`` call and earlier
    ones on the same tape take the same sources, and their results are only summed."""
    tree = frame.tree()
    source = frame.segment
    if tree is None:
        return None
    functions = frame.enclosing_functions()
    scope: ast.AST = functions[-1] if functions else tree
    if functions and not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    body: list[ast.stmt] = scope.body  # type: ignore[attr-defined]
    last = _gradient_call(failing, tape)
    if last is None or failing not in body:
        return None
    index = body.index(failing)
    calls = [last]
    for statement in reversed(body[:index]):
        found = _gradient_call(statement, tape)
        if found is None:
            break
        calls.insert(0, found)
    sources = {source(call.sources) for call in calls}
    if len(calls) < 2 or len(sources) != 1 or None in sources:
        return None
    results = {call.result for call in calls}
    targets = [source(call.target) for call in calls]
    if len(results) != len(calls) or any(t is None or "\n" in t for t in targets):
        return None
    combined = next(
        (c for s in body[index + 1 :] for c in [_combination(s, results)] if c is not None),
        None,
    )
    block = tape_block(tree, tape, calls[0].statement.lineno)  # type: ignore[arg-type]
    if combined is None or block is None or block not in body[:index]:
        return None
    # Between the tape block and the sum, none of the results is read for something else
    # and nothing the sum's factors read is bound again: the total moves into the tape.
    start = body.index(block) + 1
    between = body[start : body.index(combined.statement)]
    factors = _names(combined.element) - set(combined.item_of)
    rebinds = {name for s in between for _, name in _assigned(s)}
    if factors & rebinds:
        return None
    others = [s for s in between if s not in [c.statement for c in calls]]
    if any(_names(s) & results for s in others):
        return None
    target_of = {call.result: target for call, target in zip(calls, targets, strict=True)}
    total_expression = _Substitute(
        {item: target_of[result] for item, result in combined.item_of.items()}  # type: ignore[misc]
    ).visit(ast.parse(ast.unparse(combined.element), mode="eval").body)
    total = ast.unparse(total_expression)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    name = next((n for n in _TOTAL_NAMES if n not in used), None)
    sources_text = next(iter(sources))
    if name is None or sources_text is None or "\n" in sources_text:
        return None
    results_shown = " and ".join(code(call.result) for call in calls)
    first, end = calls[0].statement.lineno, combined.statement.end_lineno
    block_end = block.end_lineno or block.lineno
    return (
        f"{results_shown} are gradients of different losses "
        f"({', '.join(code(t) for t in targets)}) with respect to the same "
        f"{code(sources_text)}, and line {combined.statement.lineno} only adds them up, "
        f"weighted, into {code(combined.name)}. A persistent tape would let the second call "
        "run, but wherever a loss does not reach a variable (the weights of another "
        "output's layers) its gradient is None, and the weighted sum fails on it. A "
        "gradient is "
        "linear, so that sum is the gradient of the same weighted sum of the losses, and "
        "one gradient() call gives it (zeros where a loss does not reach a variable). Fix: "
        f"record the total as the last line of the {code(f'with ... as {tape}:')} block "
        f"(after line {block_end}), {code(f'{name} = {total}')}, and in place of lines "
        f"{first}-{end} write "
        f"{code(f'{combined.name} = {tape}.gradient({name}, {sources_text})')}."
    )
