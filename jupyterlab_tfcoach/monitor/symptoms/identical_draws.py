"""Repeated random draws that all came out the same, and why: the randomness is reset on
every pass, or the draw is a permutation that cannot change the statistic.

A learner repeats a random computation to read its spread: noise added to a batch many
times, a bootstrap of a test accuracy, a simulation run again. When every repetition gives
the same value, the spread is exactly 0 and the interval or uncertainty read from it says
there is none. Nothing raises. Two causes are read from the source once the symptom is seen
(``repeated_draws.py`` finds the value: a stack or a list of passes over ``range``, all
equal along the first axis; a Keras model run in inference mode is told there):

- the randomness is reset in each pass: a function the pass calls (or the loop's own
  body) makes a generator from a fixed seed (``tf.random.Generator.from_seed(7)``,
  ``np.random.default_rng(7)``, ``np.random.RandomState(7)``, ``keras.random.
  SeedGenerator(7)``) or sets the global seed (``tf.random.set_seed``,
  ``np.random.seed``, ``keras.utils.set_random_seed``, ``random.seed``), so every pass
  starts from the same state and draws the same numbers. The fix moves that statement
  out, to run once, above the function (or the loop), so the state advances;
- the draw is a permutation of every row (``tf.random.shuffle``, ``np.random.permutation``,
  a NumPy generator's ``permutation``): each row appears exactly once per pass, so a
  statistic that ignores the order (a mean, a sum, an accuracy) is the same for every pass.
  A resample, as a bootstrap means, draws the indices with replacement; the fix is that
  draw, with the same size (``tf.random.uniform((n,), minval=0, maxval=n,
  dtype=tf.int32)``, ``np.random.randint(0, n, size=n)``, ``rng.integers(0, n, size=n)``).

Told only when the cell reads a spread from the value (``std``, ``var``, ``percentile``,
``quantile``...): repetitions compared for equality are a reproducibility check, identical
on purpose, and a cell that seeds in its own loop body to check that is not told either
unless it reads a spread. Reads the cell's source, the user's function's source (as
IPython keeps it) and type names; nothing here runs user code or imports TensorFlow.
"""

from __future__ import annotations

import ast
import types
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import (
    SPREAD_REDUCTIONS,
    call_name,
    function_definition,
    parsed_source,
    source_segment,
)

RESET_SECTION = "reproducibility"
PERMUTATION_SECTION = "creating-slicing-reducing"
MAX_FUNCTION_CHARS = 200_000
# Calls that make a generator from a seed (with an argument) or set a global seed.
_SEEDED_MAKERS = frozenset({"from_seed", "default_rng", "RandomState", "SeedGenerator"})
_SEED_SETTERS = frozenset({"set_seed", "seed", "set_random_seed", "manual_seed"})
_PERMUTATIONS = frozenset({"shuffle", "permutation", "random_shuffle"})
# A peak-to-peak range read from the repetitions is a spread here too.
_SPREADS = SPREAD_REDUCTIONS | {"ptp"}
_EQUALITIES = frozenset({"array_equal", "allclose", "assert_allclose", "assert_array_equal"})


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def spread_read(code: CellCode, name: str) -> bool:
    """The cell reads a spread from ``name`` and never compares it for equality."""
    tree = parsed_source(code.source)
    if tree is None:
        return False
    spread = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = call_name(node)
            if called in _EQUALITIES and name in _names(node):
                return False
            if called in _SPREADS and name in _names(node):
                spread = True
        elif isinstance(node, ast.Compare) and name in _names(node):
            if any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
                return False
    return spread


def _seeding(statement: ast.stmt) -> ast.Call | None:
    """The seeding call a statement makes: ``g = Generator.from_seed(1)``, ``np.random.seed(1)``."""
    value = statement.value if isinstance(statement, ast.Assign | ast.Expr) else None
    if not isinstance(value, ast.Call):
        return None
    called = call_name(value)
    if called in _SEED_SETTERS and value.args:
        return value
    if called in _SEEDED_MAKERS and (value.args or value.keywords):
        return value
    return None


def _user_function(element: ast.AST, namespace: dict[str, Any]) -> list[tuple[str, Any]]:
    """The user's functions (plain or ``tf.function``) the element calls by name."""
    found: list[tuple[str, Any]] = []
    for node in ast.walk(element):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            value = namespace.get(node.func.id)
            if value is not None and node.func.id not in (n for n, _ in found):
                found.append((node.func.id, value))
    return found


def _definition(value: Any) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    function = value
    if type(value) is not types.FunctionType:
        attributes = instance_dict(value)
        function = attributes.get("_python_function") if attributes is not None else None
        if type(function) is not types.FunctionType:
            return None
    return function_definition(function.__code__, MAX_FUNCTION_CHARS)


def reset_text(
    code: CellCode,
    name: str,
    element: ast.AST,
    loop_body: list[ast.stmt],
    namespace: dict[str, Any],
) -> str | None:
    """What resets the randomness in every pass, and the fix; None when nothing does."""
    for function_name, value in _user_function(element, namespace):
        found = _definition(value)
        if found is None:
            continue
        source, definition = found
        parameters = {a.arg for a in definition.args.args + definition.args.kwonlyargs}
        for statement in definition.body:
            call = _seeding(statement)
            if call is None or parameters & _names(call):
                continue  # a seed from the call's arguments changes from pass to pass
            written = source_segment(source, statement)
            if written is None or "\n" in written:
                continue
            return (
                f"`{function_name}` {_what(call)} on every call (`{written}` in "
                f"`{function_name}`): each call starts again from the same state and draws "
                "the same numbers. Make it once, outside, and let its state advance. "
                f"Fix: move `{written}` out of `{function_name}`, above its `def`, so it "
                "runs once."
            )
    for statement in loop_body:
        call = _seeding(statement)
        written = code.segment(statement) if call is not None else None
        if written is None:
            continue
        return (
            f"the loop {_what(call)} in every pass (`{written}`, line {statement.lineno} of "
            f"this cell): each pass starts again from the same state and draws the same "
            f"numbers. Fix: move `{written}` above the loop, so it runs once."
        )
    return None


def _what(call: ast.Call) -> str:
    if call_name(call) in _SEED_SETTERS:
        return "sets the global seed again"
    return "makes a new generator from a fixed seed"


def permutation_text(
    code: CellCode,
    element: ast.AST,
    loop_body: list[ast.stmt],
    namespace: dict[str, Any],
) -> str | None:
    """The permutation each pass draws, why it cannot change the statistic, the fix."""
    places: list[ast.AST] = [*loop_body, element]
    for place in places:
        for node in ast.walk(place):
            if not (
                isinstance(node, ast.Call)
                and call_name(node) in _PERMUTATIONS
                and len(node.args) == 1
                and not node.keywords
                and isinstance(node.func, ast.Attribute)
            ):
                continue
            drawn = code.segment(node)
            fix = _resample(code, node, namespace)
            if drawn is None or fix is None:
                continue
            statement = next(
                (s for s in loop_body if any(n is node for n in ast.walk(s))),
                None,
            )
            written = code.segment(statement) if statement is not None else None
            fixed = code.replaced_in(statement, node, fix) if statement is not None else None
            where = f"`{written}`" if written is not None else f"`{drawn}`"
            return (
                f"{where} draws a permutation: every row appears exactly once in each "
                f"pass, only in another order, so a statistic that ignores the order (a mean, "
                f"a sum, an accuracy) is the same in every pass. A resample (a bootstrap) "
                f"draws as many indices WITH replacement. Fix: `{fixed or fix}`."
            )
    return None


def _resample(code: CellCode, call: ast.Call, namespace: dict[str, Any]) -> str | None:
    """The draw with replacement of the same size, in the cell's own names."""
    argument = call.args[0]
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = code.segment(func.value)
    size = _range_size(code, argument)
    if owner is None:
        return None
    if call_name(call) in ("shuffle", "random_shuffle"):
        if size is None:
            return None  # a shuffled array of data: no size to write
        return f"{owner}.uniform(({size},), minval=0, maxval={size}, dtype={_tf(owner)}.int32)"
    whole = size or _integer_argument(code, argument, namespace)
    if whole is None:
        return None
    held = namespace.get(func.value.id) if isinstance(func.value, ast.Name) else None
    if held is not None and type(held).__name__ == "Generator":
        return f"{owner}.integers(0, {whole}, size={whole})"
    return f"{owner}.randint(0, {whole}, size={whole})"


def _tf(owner: str) -> str:
    return owner.split(".", 1)[0]


def _range_size(code: CellCode, node: ast.AST) -> str | None:
    """``n`` for ``tf.range(n)`` / ``np.arange(n)`` / ``range(n)``."""
    if (
        isinstance(node, ast.Call)
        and call_name(node) in ("range", "arange")
        and len(node.args) == 1
        and not node.keywords
    ):
        return code.segment(node.args[0])
    return None


def _integer_argument(code: CellCode, node: ast.AST, namespace: dict[str, Any]) -> str | None:
    """The argument's text when it is a count (an int, a name holding one, ``len(x)``)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return code.segment(node)
    if isinstance(node, ast.Name) and type(namespace.get(node.id)) is int:
        return node.id
    if isinstance(node, ast.Call) and call_name(node) == "len":
        return code.segment(node)
    return None
