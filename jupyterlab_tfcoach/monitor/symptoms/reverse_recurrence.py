"""Discounted returns accumulated in a loop that runs forwards in time.

A return (reward-to-go) is ``G_t = r_t + gamma * G_{t+1}``: it needs the FUTURE rewards,
so the running sum must start at the last step and walk back. Written in a loop that
runs from the first step (``for t in range(len(rewards))``, ``for r in rewards``), the
same line ``running = rewards[t] + gamma * running`` sums the PAST rewards instead:
for rewards ``[0, 0, 1]`` it gives ``[0, 0, 1]`` rather than ``[0.81, 0.9, 1]``, and
the actions that led to a late reward get no credit. Nothing raises.

Read from the cell's words (``intent_words.py``) and loops, inside functions too: a
``for`` loop whose body updates a running value from itself times a discount
(``acc = x + gamma * acc``, ``acc = acc * discount + x``; the discount's name says gamma,
discount, decay or lambda; an exponential average, whose other term is also scaled by
the factor, is not this) where the running value, what it is written into, or the
``def`` is named as a return (``returns``, ``G``, ``reward_to_go``, ``discounted``,
``advantages``), and the loop goes forwards: its iterable is not ``reversed(...)``, a
``range`` with a negative step or a ``[::-1]`` slice, and its body does not index from
the end (``rewards[n - 1 - t]``). The fix is the loop's header over ``reversed(...)``
(with ``insert(0, ...)`` for an ``append`` that builds the list).

The same loop run backwards, as it should, that ``append``s each return to a list
(``rets.append(acc)``) stores them last step first; when nothing after the loop in the
same scope (the ``def``, or the cell) reverses anything (no ``[::-1]``, ``reversed``,
``.reverse()``, ``flip``, and no ``insert(0, ...)``), the list is used in that order:
entry 0 is the last step's return, each step gets its mirror step's. The fix is
``rets.insert(0, acc)`` in place of the ``append``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    identifier_words,
    lines_matching,
    segment,
    statements_on,
    target_names,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, int_literal, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "reducing-tensors"
MAX_NOTES = 1
MAX_CELL_CHARS = 30_000
# A discount multiplied by something, then a ``for`` loop header.
_TRIGGER = word_gate(
    r"(?i:gamma|discount|decay|lmbda|(?<![a-z])lam(?:bda_|_)?(?![a-z]))\w*\s*\*"
    r"|\*\s*\w*(?i:gamma|discount|decay|lmbda|(?<![a-z])lam(?![a-z]))"
)
_DISCOUNT_TEXTS = ("gamma", "Gamma", "GAMMA", "discount", "DISCOUNT", "decay", "DECAY", "lam")
_LOOP = re.compile(r"(?m)^[ \t]*(?:async[ \t]+)?for\b")
_DISCOUNTS = frozenset({"gamma", "discount", "disc", "decay", "lam", "lmbda", "lambda"})
_RETURNS = frozenset(
    {
        "return",
        "returns",
        "ret",
        "rets",
        "g",
        "rtg",
        "togo",
        "go",
        "future",
        "discounted",
        "advantage",
        "advantages",
        "adv",
        "gae",
    }
)


def _is_discount(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return isinstance(name, str) and bool(set(identifier_words(name)) & _DISCOUNTS)


def _scaled_self(node: ast.AST, name: str) -> bool:
    """``gamma * acc`` or ``acc * gamma`` (the running value times the discount)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return False
    sides = (node.left, node.right)
    return any(isinstance(s, ast.Name) and s.id == name for s in sides) and any(
        _is_discount(s) for s in sides
    )


def _running_update(statement: ast.AST) -> str | None:
    """The running value's name for ``acc = x + gamma * acc`` (either order)."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if not isinstance(target, ast.Name):
        return None
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    for mine, other in ((value.left, value.right), (value.right, value.left)):
        if _scaled_self(mine, target.id):
            reads = {n.id for n in ast.walk(other) if isinstance(n, ast.Name)}
            if target.id in reads or any(_is_discount(n) for n in ast.walk(other)):
                return None  # an average, not a discounted sum
            return target.id
    return None


def _backwards(iterable: ast.expr) -> bool:
    for node in ast.walk(iterable):
        if isinstance(node, ast.Call) and call_name(node) in ("reversed", "flip", "reverse"):
            return True
        if isinstance(node, ast.Call) and call_name(node) == "range" and len(node.args) == 3:
            step = int_literal(node.args[2])
            if step is None or step < 0:
                return True
        if isinstance(node, ast.Slice) and node.step is not None:
            step = int_literal(node.step)
            if step is None or step < 0:
                return True
    return False


def _reads_from_end(loop: ast.For) -> bool:
    """``rewards[n - 1 - t]`` or ``rewards[-t - 1]``: the body walks back itself."""
    variables = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for node in ast.walk(loop):
        if isinstance(node, ast.Subscript):
            for part in ast.walk(node.slice):
                if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Sub):
                    if any(isinstance(n, ast.Name) and n.id in variables for n in ast.walk(part)):
                        return True
                if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
                    if any(isinstance(n, ast.Name) and n.id in variables for n in ast.walk(part)):
                        return True
    return False


def _reverses(node: ast.AST) -> bool:
    """Whether ``node`` puts something back in order: ``[::-1]``, ``reversed(...)``,
    ``.reverse()``, ``flip``, ``insert(0, ...)``."""
    for part in ast.walk(node):
        if isinstance(part, ast.Call) and call_name(part) in (
            "reversed",
            "reverse",
            "flip",
            "flipud",
            "insert",
        ):
            return True
        if isinstance(part, ast.Slice) and part.step is not None:
            step = int_literal(part.step)
            if step is None or step < 0:
                return True
    return False


def _scope_after(
    tree: ast.Module, function: ast.FunctionDef | ast.AsyncFunctionDef | None, loop: ast.For
) -> list[ast.stmt]:
    """The statements of the loop's scope that start after the loop ends."""
    body = function.body if function is not None else tree.body
    end = loop.end_lineno or loop.lineno
    found: list[ast.stmt] = []
    for statement in body:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.stmt) and inner.lineno > end:
                found.append(inner)
    return found


def _backward_append_note(
    tree: ast.Module,
    loop: ast.For,
    function: ast.FunctionDef | ast.AsyncFunctionDef | None,
    lines: list[str],
) -> Note | None:
    """A backward loop that appends each discounted return, the list never put back in
    time order after it."""
    update = next(
        ((s, name) for s in ast.walk(loop) if (name := _running_update(s)) is not None),
        None,
    )
    if update is None or any(_reverses(part) for part in loop.body):
        return None
    statement, running = update
    appends = [
        s
        for s in ast.walk(loop)
        if isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and call_name(s.value) == "append"
        and isinstance(s.value.func, ast.Attribute)
        and isinstance(s.value.func.value, ast.Name)
        and len(s.value.args) == 1
        and isinstance(s.value.args[0], ast.Name)
        and s.value.args[0].id == running
    ]
    if len(appends) != 1:
        return None
    append = appends[0]
    owner = append.value.func.value.id  # type: ignore[attr-defined]
    words = set(identifier_words(running)) | set(identifier_words(owner))
    if function is not None:
        words |= set(identifier_words(function.name))
    if not words & _RETURNS:
        return None
    after = _scope_after(tree, function, loop)
    read_after = any(isinstance(n, ast.Name) and n.id == owner for s in after for n in ast.walk(s))
    if not read_after or any(_reverses(s) for s in after):
        return None
    iterable = segment(lines, loop.iter)
    header = segment(lines, loop.target)
    append_text = segment(lines, append)
    update_text = segment(lines, statement)
    if iterable is None or header is None or append_text is None or update_text is None:
        return None
    where = f"line {loop.lineno} of this cell" + (
        f", in `{function.name}`" if function is not None else ""
    )
    return reports.note(
        f"The loop `for {header} in {iterable}:` ({where}) walks back from the last step, "
        f"as the discounted return `{update_text}` needs, but `{append_text}` stores the "
        f"returns in that backward order and `{owner}` is never put back in time order: "
        f"`{owner}[0]` is the return of the LAST step, so each step is credited with the "
        "return of its mirror step (for rewards [0, 0, 1] and gamma 0.9 it gives "
        "[1, 0.9, 0.81] rather than [0.81, 0.9, 1]), without any error. Keep the list in "
        f"time order: `{owner}.insert(0, {running})` in place of `{append_text}`.",
        SECTION,
    )


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "for" not in source:
        return []
    # Substring tests first (well under a microsecond), the regular expression after.
    if not any(word in source for word in _DISCOUNT_TEXTS) or _TRIGGER.search(source) is None:
        return []
    loops = lines_matching(_LOOP, source)
    if not loops:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = cell_lines(source)
    found: list[Note] = []
    for loop, function in statements_on(tree, loops):
        if len(found) >= MAX_NOTES:
            break
        if not isinstance(loop, ast.For):
            continue
        if _backwards(loop.iter):
            backward = _backward_append_note(tree, loop, function, lines)
            if backward is not None:
                found.append(backward)
            continue
        if _reads_from_end(loop):
            continue
        update = next(
            (
                (s, name)
                for s in ast.walk(loop)
                if (name := _running_update(s)) is not None and s is not loop
            ),
            None,
        )
        if update is None:
            continue
        statement, running = update
        appends = [
            s
            for s in ast.walk(loop)
            if isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and call_name(s.value) == "append"
            and any(isinstance(a, ast.Name) and a.id == running for a in s.value.args)
        ]
        writes = [
            name
            for s in ast.walk(loop)
            if isinstance(s, (ast.Assign, ast.Expr))
            for name in target_names(s)
        ]
        words = set(identifier_words(running))
        for name in writes:
            words |= set(identifier_words(name))
        if function is not None:
            words |= set(identifier_words(function.name))
        if not words & _RETURNS:
            continue
        iterable = segment(lines, loop.iter)
        header = segment(lines, loop.target)
        update_text = segment(lines, statement)
        if iterable is None or header is None or update_text is None:
            continue
        wrapped = (
            f"reversed(list({iterable}))"
            if isinstance(loop.iter, ast.Call) and call_name(loop.iter) in ("enumerate", "zip")
            else f"reversed({iterable})"
        )
        fixed = f"for {header} in {wrapped}:"
        extra = ""
        if appends:
            append_text = segment(lines, appends[0])
            owner = appends[0].value.func
            owner_text = segment(lines, owner.value) if isinstance(owner, ast.Attribute) else None
            if append_text is None or owner_text is None:
                continue
            extra = (
                f", and `{owner_text}.insert(0, {running})` in place of `{append_text}` so "
                "the list stays in time order"
            )
        where = f"line {loop.lineno} of this cell" + (
            f", in `{function.name}`" if function is not None else ""
        )
        found.append(
            reports.note(
                f"The loop `for {header} in {iterable}:` ({where}) runs forwards in time, "
                f"but `{update_text}` is the discounted return, G_t = r_t + gamma * G_(t+1): "
                "each step's return needs the rewards that come AFTER it. Run from the first "
                f"step, `{running}` adds up the past rewards instead (for rewards [0, 0, 1] "
                "and gamma 0.9 it gives [0, 0, 1] rather than [0.81, 0.9, 1]), so early "
                "actions get no credit for a later reward, without any error. Walk the steps "
                f"from the last one: `{fixed}`{extra}.",
                SECTION,
            )
        )
    return found
