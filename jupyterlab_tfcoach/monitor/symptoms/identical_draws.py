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

Two views made from one draw (``shared_draw_notes``, after a cell whose text unpacks a
tuple: ``WANTED``): a cell binds two or more names at once, ``a, b = f(x)`` from the
learner's function or ``a, b = e1, e2``, the function's returned tuple (or the cell's)
builds them from expressions that both read one name bound, in the same function (or at
the cell's top level), to a random draw (``noise = tf.random.normal(...)``,
``eps = rng.normal(...)``), and after the cell the two names hold equal float values
(NumPy arrays or eager tensors, not constant). Two augmented views, two noisy copies of a
batch, a perturbation and its twin are then one value twice: a consistency or contrastive
loss between them is exactly 0, with no signal. The fix writes the draw into each
expression, so each draws its own numbers. Two different draws differ and stay silent;
equal values with no shared draw behind them (``return x, x``) are not told.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.syntax import (
    SPREAD_REDUCTIONS,
    call_name,
    function_definition,
    parsed_source,
    reference_path,
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
VIEWS_SECTION = "reproducibility"
# A cell line that binds two or more names at once (``v1, v2 = ...``).
WANTED = re.compile(r"^[ \t]*\(?[ \t]*\w+[ \t]*,[ \t]*\w+[\w \t,]*\)?[ \t]*=(?!=)", re.M)
MAX_VIEW_ELEMENTS = 1_000_000
MAX_VIEWS = 4
_FLOATS = ("float", "bfloat", "half")
# What a generator's draw is called (``rng.normal``, ``gen.uniform``); any call whose
# dotted name holds ``random`` (``tf.random.normal``, ``np.random.rand``) is a draw too.
_DRAW_METHODS = frozenset(
    {"normal", "uniform", "standard_normal", "truncated_normal", "integers", "laplace"}
)


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


# ------------------------------------------------------------ views made from one draw
def _is_draw(node: ast.AST) -> bool:
    """A call that draws random numbers: ``tf.random.normal(...)``, ``rng.normal(...)``."""
    if not isinstance(node, ast.Call):
        return False
    path = reference_path(node.func)
    if path is None:
        return False
    if path[-1] in _SEEDED_MAKERS or "Generator" in path:
        return False  # a generator, not numbers drawn from it
    return "random" in path[:-1] or (path[-1] in _DRAW_METHODS and len(path) > 1)


def _draws_in(scope: list[ast.stmt]) -> dict[str, ast.Assign]:
    """``name = <draw>`` statements of a body (not nested functions), by name, the last."""
    found: dict[str, ast.Assign] = {}
    pending: list[ast.AST] = list(scope)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _is_draw(node.value)
        ):
            found[node.targets[0].id] = node
        pending.extend(ast.iter_child_nodes(node))
    return found


def _returned(definition: ast.FunctionDef | ast.AsyncFunctionDef, size: int) -> ast.Tuple | None:
    """The tuple of ``size`` values the function's only ``return`` gives back."""
    returns = [
        node
        for statement in definition.body
        for node in ast.walk(statement)
        if isinstance(node, ast.Return)
    ]
    if len(returns) != 1:
        return None
    value = returns[0].value
    return value if isinstance(value, ast.Tuple) and len(value.elts) == size else None


def _line_of(source: str, node: ast.AST) -> str | None:
    text = source_segment(source, node)
    return text if text is not None and "\n" not in text else None


def _with_draw(source: str, expression: ast.expr, name: str, draw: str) -> str | None:
    """The expression's text with each read of ``name`` replaced by the draw's text."""
    if getattr(expression, "lineno", None) != getattr(expression, "end_lineno", None):
        return None
    lines = source.splitlines()
    row = expression.lineno - 1
    if not 0 <= row < len(lines):
        return None
    line = lines[row].encode("utf-8")
    start, end = expression.col_offset, expression.end_col_offset
    if end is None:
        return None
    reads = sorted(
        (n for n in ast.walk(expression) if isinstance(n, ast.Name) and n.id == name),
        key=lambda n: n.col_offset,
        reverse=True,
    )
    text = line[start:end]
    for read in reads:
        if read.end_col_offset is None:
            return None
        left, right = read.col_offset - start, read.end_col_offset - start
        text = text[:left] + draw.encode("utf-8") + text[right:]
    return text.decode("utf-8")


def _equal_floats(first: Any, second: Any) -> int | None:
    """The number of values when two float arrays or eager tensors hold the same values
    (of one shape, not all one number); None otherwise. Shapes and dtypes are compared
    before any value is copied."""
    numpy = sys.modules.get("numpy")
    if numpy is None or first is None or second is None:
        return None
    one, other = describe("", first), describe("", second)
    if one is None or other is None or one.shape is None or one.shape != other.shape:
        return None
    if not ((one.dtype or "").startswith(_FLOATS) and (other.dtype or "").startswith(_FLOATS)):
        return None
    left = held_array(first, MAX_VIEW_ELEMENTS, _FLOATS)
    if left is None or left.size < 2:
        return None
    right = held_array(second, MAX_VIEW_ELEMENTS, _FLOATS)
    if right is None or right.shape != left.shape:
        return None
    if not numpy.array_equal(left, right) or numpy.all(left == left.flat[0]):
        return None
    return int(left.size)


def shared_draw_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    """Names the cell binds together (``a, b = ...``) holding equal values built from one
    random draw."""
    for statement in code.nodes:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
            and 2 <= len(statement.targets[0].elts) <= MAX_VIEWS
            and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)
        ):
            continue
        targets = [e.id for e in statement.targets[0].elts if isinstance(e, ast.Name)]
        note = _shared_draw_note(code, statement, targets, namespace)
        if note is not None:
            return [note]
    return []


def _shared_draw_note(
    code: CellCode, statement: ast.Assign, targets: list[str], namespace: dict[str, Any]
) -> Note | None:
    # The symptom first (shapes, then values): most cells unpack unequal values.
    equal = [
        (i, j, count)
        for i in range(len(targets))
        for j in range(i + 1, len(targets))
        if (count := _equal_floats(namespace.get(targets[i]), namespace.get(targets[j])))
    ]
    if not equal:
        return None
    value = statement.value
    function_name: str | None = None
    if isinstance(value, ast.Tuple) and len(value.elts) == len(targets):
        source, built, scope = code.source, value, [n for n in code.nodes if n is not statement]
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        found = _definition(namespace.get(value.func.id))
        if found is None:
            return None
        source, definition = found
        returned = _returned(definition, len(targets))
        if returned is None:
            return None
        function_name, built, scope = value.func.id, returned, list(definition.body)
    else:
        return None
    draws = _draws_in(scope)
    if not draws:
        return None
    for i, j, count in equal:
        # Views are one expression written twice in the hope of two draws; two different
        # computations of one draw (``dense_step(x, w), graph_step(x, w)``) agreeing is
        # what a comparison is for.
        if ast.dump(built.elts[i]) != ast.dump(built.elts[j]):
            continue
        shared = [
            n
            for n in sorted(_names(built.elts[i]) & _names(built.elts[j]))
            if n in draws and n not in targets
        ]
        if shared:
            # The noise, not a random input both views start from: a draw shaped from
            # another shared name (``tf.shape(frames)``), else the last one bound.
            drawn = max(
                shared,
                key=lambda n: (bool(_names(draws[n].value) & set(shared)), draws[n].lineno),
            )
            return _views_note(
                source,
                built,
                (targets[i], targets[j]),
                drawn,
                draws[drawn],
                count,
                function_name,
                code.segment(statement),
            )
    return None


def _views_note(
    source: str,
    built: ast.Tuple,
    names: tuple[str, str],
    drawn: str,
    draw: ast.Assign,
    count: int,
    function_name: str | None,
    statement: str | None,
) -> Note | None:
    draw_text = _line_of(source, draw)
    draw_call = _line_of(source, draw.value)
    built_text = ", ".join(t for t in (_line_of(source, e) for e in built.elts) if t)
    if draw_text is None or draw_call is None or not built_text:
        return None
    rewritten = [_with_draw(source, e, drawn, draw_call) for e in built.elts]
    fixed = ", ".join(t for t in rewritten if t is not None)
    complete = all(t is not None for t in rewritten)
    first, second = names
    fix: str | None = None
    if function_name is not None:
        where = f"`{function_name}` returns `{built_text}`"
        fix = f"return {fixed}" if complete else None
    else:
        where = f"the cell computes `{statement or built_text}`"
        fix = f"{first}, {second} = {fixed}" if complete and len(built.elts) == 2 else None
    text = (
        f"`{first}` and `{second}` hold the same values (all {count} of them equal): {where}, "
        f"and both read `{drawn}`, a single random draw (`{draw_text}`). A draw is a value "
        "like any other: reading its name twice reads the same numbers, so the two are one "
        "value twice, and anything that compares them (a consistency or contrastive loss) "
        "is exactly 0 and teaches nothing. Draw afresh for each one"
    )
    text += (
        f". Fix: `{fix}`."
        if fix
        else f": call the draw once per view instead of reading `{drawn}` twice."
    )
    return reports.note(text, VIEWS_SECTION)
