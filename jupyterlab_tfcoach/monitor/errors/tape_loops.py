"""A tape recorded once, before a loop that takes a gradient and changes the weights.

``with tf.GradientTape() as tape: loss = f(ws)`` written before ``for step in ...:``,
whose body calls ``tape.gradient(loss, ws)`` and then rebinds ``ws`` (``ws = [w - lr * g
...]``) or updates variables (``assign_sub``, ``apply_gradients``): the second iteration
raises "A non-persistent GradientTape can only be used to compute one set of gradients".
``persistent=True`` is the wrong fix here: the tape would still hold the one forward pass
made before the loop, so the loss would never be computed again for the new weights (and
rebound tensors, never recorded, get None gradients). Each step needs its own recording:
the ``with`` block moves into the loop. Read from the failing frame's source only.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, code

# Calls that change variables in place: after one, the recorded loss is stale.
_UPDATES = frozenset({"assign", "assign_add", "assign_sub", "apply_gradients", "minimize"})


def tape_names(statement: ast.With) -> list[str]:
    """The names a ``with tf.GradientTape() as tape:`` binds (``syntax.tape_names``,
    which this package cannot import: ``syntax`` imports it)."""
    found: list[str] = []
    for item in statement.items:
        call = item.context_expr
        if not (isinstance(call, ast.Call) and isinstance(item.optional_vars, ast.Name)):
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "GradientTape":
            found.append(item.optional_vars.id)
    return found


def _loops_around(tree: ast.AST, line: int) -> list[ast.For | ast.While]:
    """The loops whose body holds ``line``, outermost first."""
    found: list[ast.For | ast.While] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While) and node.body:
            end = node.end_lineno or node.lineno
            if node.body[0].lineno <= line <= end:
                found.append(node)
    found.sort(key=lambda loop: loop.lineno)
    return found


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _changed_in(loop: ast.For | ast.While, names: set[str]) -> str | None:
    """A name of ``names`` the loop body binds again, or the update call it makes."""
    for statement in loop.body:
        for node in ast.walk(statement):
            targets: list[ast.AST] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id in names:
                        return name.id
    for statement in loop.body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _UPDATES
            ):
                return f".{node.func.attr}(...)"
    return None


def _tape_block(tree: ast.AST, tape: str, before: int) -> ast.With | None:
    """The last ``with tf.GradientTape() as <tape>:`` that ends before line ``before``."""
    found: ast.With | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.With)
            and tape in tape_names(node)
            and (node.end_lineno or node.lineno) < before
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found


def recorded_before_loop(frame: CellFrame, tape: str, call: ast.Call) -> str | None:
    """The entry's cause and fix when ``call`` (``<tape>.gradient(target, sources)``, the
    second use of the tape) runs in a loop that changes what the tape recorded before it."""
    tree = frame.tree()
    if tree is None or len(call.args) < 2:
        return None
    line = frame.position.line
    for loop in reversed(_loops_around(tree, line)):
        block = _tape_block(tree, tape, loop.lineno)
        if block is None:
            continue
        if any(isinstance(node, ast.With) and tape in tape_names(node) for node in ast.walk(loop)):
            return None  # a tape made in the loop as well: another story
        read = _names_read(call.args[0]) | _names_read(call.args[1])
        if isinstance(loop, ast.For) and _names_read(loop.target) & read:
            return None  # ``for v in ws: tape.gradient(loss, v)``: one recording, per item
        changed = _changed_in(loop, read)
        if changed is None:
            return None
        source_lines = frame.source().splitlines()
        header = source_lines[block.lineno - 1].strip() if block.lineno <= len(source_lines) else ""
        loop_header = (
            source_lines[loop.lineno - 1].strip() if loop.lineno <= len(source_lines) else ""
        )
        if not header.endswith(":") or not loop_header.endswith(":"):
            return None
        end = block.end_lineno or block.lineno
        lines = f"lines {block.lineno}-{end}" if end > block.lineno else f"line {block.lineno}"
        what = (
            f"the loop rebinds {code(changed)}"
            if not changed.startswith(".")
            else f"the loop updates the weights ({code(changed)})"
        )
        return (
            f"{code(tape)} recorded the forward pass once, before {code(loop_header)} "
            f"({lines}), and {what}: each step needs a gradient of that step's loss, so "
            f"the computation must be recorded again at every step. A persistent tape "
            f"would not do it: it keeps the one recording made before the loop (tensors "
            f"rebound later were never recorded, and get None gradients). Fix: move the "
            f"{code(header)} block ({lines}) into the loop, as the first statements of "
            f"its body, so that every step records its own forward pass on the current "
            f"weights."
        )
    return None
