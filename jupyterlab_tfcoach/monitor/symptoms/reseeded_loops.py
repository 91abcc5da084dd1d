"""A loop of repetitions that sets the global seed to a constant in every pass.

``for t in range(n_tasks): np.random.seed(1000); task = sample_task(); ...`` means "fixed
test tasks, comparable between runs", but the seed is set again at the start of every
pass: each pass draws exactly the same numbers, and the n "tasks", bootstrap rounds or
noisy trials are one draw repeated. Averages over them describe a single draw. Nothing
raises.

The symptom, after a completed cell holding ``seed(``: a name the cell's top level binds
(``a = ...`` or ``a, b, c = ...``) holds a list, tuple or 1-D NumPy array of at least
``MIN_ITEMS`` floats that are all equal. The cause, read from the cell's source (its top
level and the functions it defines): a ``for`` loop whose own body sets the global seed
(``np.random.seed``, ``tf.random.set_seed``, ``random.seed``,
``keras.utils.set_random_seed``) to a value that does not read the loop's name, and whose
body never reads that name either (passes meant as repetitions; a sweep over settings that
re-seeds so each setting sees the same data reads its loop name and stays silent). The fix
moves the seeding above the loop, so it runs once.
"""

from __future__ import annotations

import ast
import numbers
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "reproducibility"
WANTED = re.compile(r"seed\(")
MIN_ITEMS = 3
MAX_ITEMS = 100_000
_SEED_SETTERS = frozenset({"set_seed", "seed", "set_random_seed"})


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _equal_floats(value: Any) -> int | None:
    """How many equal floats ``value`` holds (a list, tuple or 1-D NumPy array), or None."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(value) is getattr(numpy, "ndarray", None):
        if value.ndim != 1 or value.dtype.kind != "f" or not MIN_ITEMS <= value.size <= MAX_ITEMS:
            return None
        first = value[0]
        return int(value.size) if bool((value == first).all()) and first == first else None
    if type(value) not in (list, tuple) or not MIN_ITEMS <= len(value) <= MAX_ITEMS:
        return None
    floating = getattr(numpy, "floating", float) if numpy is not None else float
    items: list[float] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, float | floating):
            return None
        if not isinstance(item, numbers.Real):
            return None
        items.append(float(item))
    first = items[0]
    if first != first or any(item != first for item in items):
        return None
    return len(items)


def _bound_names(tree: ast.Module) -> list[tuple[str, ast.Assign]]:
    found: list[tuple[str, ast.Assign]] = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                elements = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                found.extend((e.id, statement) for e in elements if isinstance(e, ast.Name))
    return found


def _made_by(name: str, binding: ast.Assign, loop: ast.For, function: str | None) -> bool:
    """Whether the loop made ``name``'s values: the loop's function called where ``name``
    is bound, or (a loop of the cell) ``name`` appended to or built in the loop."""
    if function is not None:
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == function
            for n in ast.walk(binding.value)
        )
    return name in set().union(*(_names(statement) for statement in loop.body)) or bool(
        _names(binding.value) & set().union(*(_names(s) for s in loop.body))
    )


def _reseeding_loop(tree: ast.Module) -> tuple[ast.For, ast.stmt, str | None] | None:
    """A ``for`` loop over repetitions whose own body seeds with a constant, and the
    function it is in (None: the cell's top level)."""
    owner: dict[int, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For):
            owner.setdefault(id(node), None)
    for definition in ast.walk(tree):
        if isinstance(definition, ast.FunctionDef):
            for node in ast.walk(definition):
                if isinstance(node, ast.For):
                    owner[id(node)] = definition.name  # the innermost: walked last
    for loop in ast.walk(tree):
        if isinstance(loop, ast.For):
            function = owner.get(id(loop))
            loop_names = _names(loop.target)
            read = set().union(*(_names(statement) for statement in loop.body))
            if loop_names & read:
                continue
            for statement in loop.body:
                value = statement.value if isinstance(statement, ast.Expr) else None
                if (
                    isinstance(value, ast.Call)
                    and call_name(value) in _SEED_SETTERS
                    and value.args
                    and "random" in ast.unparse(value.func)
                ):
                    return loop, statement, function
    return None


def reseeded_loop_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    tree = parsed_source(code.source)
    if tree is None:
        return []
    found = _reseeding_loop(tree)
    if found is None:
        return []
    loop, statement, function = found
    symptom: tuple[str, int] | None = None
    for name, binding in _bound_names(tree):
        count = _equal_floats(namespace.get(name))
        if count is not None and _made_by(name, binding, loop, function):
            symptom = (name, count)
            break
    if symptom is None:
        return []
    seeding = code.segment(statement)
    header = code.segment(loop.iter)
    target = code.segment(loop.target)
    if seeding is None or header is None or target is None:
        return []
    name, count = symptom
    where = f" in `{function}`" if function else ""
    return [
        reports.note(
            f"`{name}` holds {count} equal values: `{seeding}`{where} runs at the start of "
            f"every pass of `for {target} in {header}:` (line {statement.lineno} of this "
            f"cell), so each pass starts again from the same random state and draws the "
            f"same numbers, and the {count} passes are one draw repeated. Nothing raises. "
            f"Set the seed once, so the passes differ and stay reproducible. Fix: move "
            f"`{seeding}` above the loop (before line {loop.lineno}), so it runs once.",
            SECTION,
        )
    ]
