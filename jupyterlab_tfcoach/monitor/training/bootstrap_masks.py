"""A bootstrapped target masked by the done flag itself: kept only where the episode ended.

A temporal-difference target adds the discounted value of the next state unless the
episode ended there: ``r + gamma * next_value * (1 - done)``. Written
``r + gamma * next_value * done``, the bootstrap is kept only at the terminal steps (where
there is no next state) and dropped at every other one: the targets of ordinary steps are
the immediate reward alone and value never flows back from the goal. Nothing raises.

Read from the cell's source when it defines or runs it (a substring test for
``gamma``, ``discount``, ``done`` or ``terminal`` otherwise), per scope: a sum
``R + P`` where ``R`` is a name read as a reward (``r``, ``reward``, ``rewards``,
``rew``, with a suffix like ``r_b``), and ``P`` a product whose factors include a
discount (a name with ``gamma`` or ``discount``, or a number in (0, 1)) and a name read
as the done flag (``done``, ``dones``, ``d``, ``terminal``, ``terminals``,
``terminated``, ``d_b``) that the scope never rebinds (a flag turned into its complement
first, ``d = 1 - d``, is right). A factor ``(1 - done)``, ``not_done``, ``mask`` or
``alive`` is right and stays silent. The fix is the product with ``(1.0 - done)`` in
place of the flag.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    function_scopes,
    number_literal,
    parsed_source,
    scope_nodes,
)

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 64
_REWARD_WORDS = frozenset({"r", "rew", "reward", "rewards", "rs"})
_DISCOUNT_WORDS = frozenset({"gamma", "discount", "discounts"})
_DONE_WORDS = frozenset({"done", "dones", "d", "terminal", "terminals", "terminated", "term", "ds"})
_NEGATING_WORDS = frozenset({"not", "non", "mask", "masks", "alive", "cont", "continue"})
_SUFFIXES = frozenset({"b", "batch", "t", "tf", "np", "is", "next", "arr"})


def _words(name: str) -> list[str]:
    return [part for part in re.split(r"[_\d]+", name.lower()) if part]


def _core(name: str) -> set[str]:
    """The words of a name without batch suffixes (``d_b`` -> ``{"d"}``)."""
    return {w for w in _words(name) if w not in _SUFFIXES}


def _factors(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _discount(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return bool(set(_words(node.id)) & _DISCOUNT_WORDS)
    value = number_literal(node)
    return value is not None and 0 < value < 1


def _done_flag(node: ast.AST) -> bool:
    if not isinstance(node, ast.Name):
        return False
    core = _core(node.id)
    return bool(core) and core <= _DONE_WORDS and not core & _NEGATING_WORDS


def _reward(node: ast.AST) -> bool:
    if not isinstance(node, ast.Name):
        return False
    core = _core(node.id)
    return bool(core) and core <= _REWARD_WORDS


def _rebound(nodes: list[ast.AST], name: str) -> bool:
    for node in nodes:
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                return True
    return False


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[str] = []
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        for node in nodes:
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
                continue
            for reward, product in ((node.left, node.right), (node.right, node.left)):
                if not _reward(reward):
                    continue
                factors = _factors(product)
                if len(factors) < 3 or not any(_discount(f) for f in factors):
                    continue
                flags = [f for f in factors if _done_flag(f)]
                if len(flags) != 1:
                    continue
                flag = flags[0]
                assert isinstance(flag, ast.Name)
                if _rebound(nodes, flag.id):
                    continue
                written = ast.get_source_segment(source, node)
                if not written or "\n" in written:
                    continue
                fixed = _fixed(source, product, flag)
                if fixed is None:
                    continue
                reward_text = ast.get_source_segment(source, reward) or ""
                fix = (
                    f"{reward_text} + {fixed}"
                    if reward is node.left
                    else f"{fixed} + {reward_text}"
                )
                where = f" in `{scope.name}`" if isinstance(scope, ast.FunctionDef) else ""
                found.append(
                    f"The done mask is the wrong way round: `{written}`{where} multiplies "
                    f"the bootstrapped term by `{flag.id}`, which is 1 where the episode "
                    "ended, so the discounted next value is kept only at terminal steps "
                    "(where there is no next state) and dropped at every other one: the "
                    "targets of ordinary steps are the reward alone, and value never "
                    f"flows back from the goal. Nothing raises. Multiply by "
                    f"`(1.0 - {flag.id})`: `{fix}`."
                )
                break
    return tuple(found)


def _fixed(source: str, product: ast.AST, flag: ast.Name) -> str | None:
    text = ast.get_source_segment(source, product)
    start = ast.get_source_segment(source, flag)
    if not text or not start or getattr(product, "lineno", 0) != flag.lineno:
        return None
    offset = flag.col_offset - product.col_offset  # type: ignore[attr-defined]
    if offset < 0 or text[offset : offset + len(start)] != start:
        return None
    return f"{text[:offset]}(1.0 - {flag.id}){text[offset + len(start) :]}"


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS:
        return []
    lowered = source.lower()
    if not any(word in lowered for word in ("gamma", "discount", "done", "terminal")):
        return []
    return [reports.note(text, SECTION) for text in _texts(source)[:1]]
