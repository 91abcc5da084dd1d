"""An epsilon-greedy choice that explores when the draw is above epsilon.

Epsilon-greedy takes a random action with probability epsilon: ``if rand() < epsilon``.
Written ``if rand() > epsilon:`` before the random action, it explores with probability
``1 - epsilon``: greedy early on, when epsilon is near 1 and exploring matters, and almost
always random at the end, when the learned policy should act. Nothing raises.

Read from the cell's source when it defines or runs it (a substring test for ``eps``
otherwise), per scope: an ``if`` whose test compares a uniform draw in [0, 1)
(``np.random.rand()``, ``np.random.random()``, ``random.random()``, ``rng.random()``,
``tf.random.uniform(())``, called with no shape) with a name read as epsilon (``eps``,
``epsilon``, ``explore``, ``exploration`` among its words), draw above the name
(``rand() > eps``, ``eps < rand()``, ``>=``/``<=`` likewise), and whose body (not its
``else``) draws a random action (``randint``, ``randrange``, ``choice``, ``integers``,
``sample`` of an action space; not ``choice(..., p=policy)``) without an ``argmax``.
The greedy branch under ``>`` and the random one under ``<`` are right and stay silent.
The fix is the test with the comparison turned (``np.random.rand() < epsilon``).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, function_scopes, parsed_source, scope_nodes

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 64
_UNIFORM_DRAWS = frozenset({"rand", "random", "uniform", "random_sample"})
_EPSILON_WORDS = frozenset({"eps", "epsilon", "explore", "exploration"})
_RANDOM_ACTIONS = frozenset({"randint", "randrange", "choice", "integers", "sample"})
_GREEDY = frozenset({"argmax", "max"})


def _words(name: str) -> set[str]:
    return {part for part in re.split(r"[_\d.]+", name.lower()) if part}


def _uniform_draw(node: ast.AST) -> bool:
    """A call drawing one number in [0, 1): no positional shape, no bounds."""
    if not (isinstance(node, ast.Call) and call_name(node) in _UNIFORM_DRAWS):
        return False
    if not isinstance(node.func, ast.Attribute):
        return False
    if call_name(node) == "uniform":
        # ``tf.random.uniform(())``: an empty shape, default bounds.
        return (
            len(node.args) == 1
            and isinstance(node.args[0], ast.Tuple | ast.List)
            and not node.args[0].elts
            and not node.keywords
        )
    return not node.args and not node.keywords


def _epsilon(node: ast.AST) -> str | None:
    text = ast.unparse(node) if isinstance(node, ast.Name | ast.Attribute) else None
    if text is None:
        return None
    last = text.rsplit(".", 1)[-1]
    return text if _words(last) & _EPSILON_WORDS else None


def _draw_above(test: ast.AST) -> tuple[str, str] | None:
    """(the epsilon's text, the turned test) for ``draw > eps`` / ``eps < draw``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _uniform_draw(left) and isinstance(op, ast.Gt | ast.GtE):
        eps = _epsilon(right)
        if eps is not None:
            return eps, f"{ast.unparse(left)} < {eps}"
    if _uniform_draw(right) and isinstance(op, ast.Lt | ast.LtE):
        eps = _epsilon(left)
        if eps is not None:
            return eps, f"{eps} > {ast.unparse(right)}"
    return None


def _random_action(body: list[ast.stmt]) -> bool:
    # ``choice(n, p=policy)`` samples the policy: not a uniform random action.
    calls = [
        call_name(n)
        for statement in body
        for n in ast.walk(statement)
        if isinstance(n, ast.Call) and not any(k.arg == "p" for k in n.keywords)
    ]
    return any(c in _RANDOM_ACTIONS for c in calls) and not any(c in _GREEDY for c in calls)


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[str] = []
    for scope in function_scopes(tree):
        for node in scope_nodes(scope):
            if not isinstance(node, ast.If):
                continue
            reading = _draw_above(node.test)
            if reading is None or not _random_action(node.body):
                continue
            eps, turned = reading
            written = ast.unparse(node.test)
            where = f" in `{scope.name}`" if isinstance(scope, ast.FunctionDef) else ""
            found.append(
                f"Exploration the wrong way round: `if {written}:`{where} takes the random "
                f"action when the draw is above `{eps}`, that is with probability "
                f"1 - `{eps}`: almost never while `{eps}` is near 1 at the start, when "
                "exploring matters, and almost always once it has decayed, when the "
                "learned policy should act. Nothing raises. Explore with probability "
                f"`{eps}`: `if {turned}:`."
            )
    return tuple(found)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    lowered = source.lower()
    if len(source) > MAX_CELL_CHARS or ("eps" not in lowered and "explor" not in lowered):
        return []
    return [reports.note(text, SECTION) for text in _texts(source)[:1]]
