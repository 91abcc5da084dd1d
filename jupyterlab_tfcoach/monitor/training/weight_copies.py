"""A weight copy that goes the wrong way: the trained model overwritten by its copy.

A target (or teacher, or averaged) network is refreshed from the model being trained:
``target.set_weights(online.get_weights())``. Written the other way round,
``online.set_weights(target.get_weights())``, inside the loop that trains ``online``, each
copy puts back the weights the untrained copy holds: every step of learning since the last
copy is thrown away, and the copy itself never changes. Nothing raises. The same holds for
a loop of assigns, ``for a, b in zip(online.weights, target.weights): a.assign(b)`` (or a
soft update ``a.assign(tau * b + (1 - tau) * a)``).

Read from the cell's source and the notebook functions it calls by name (``inspect``,
never called), after a completed cell: a copy ``A.set_weights(B.get_weights())`` (or the
assign loop into ``A`` from ``B``) inside a loop of the cell whose body trains ``A``
(``A.fit``, ``A.train_on_batch``, or ``A.trainable_variables`` given to
``tape.gradient``/``apply_gradients``/``minimize``, there or in a function the loop calls),
where nothing in the cell or those functions trains ``B`` and no statement of that loop copies
``A`` into ``B`` (keeping the best weights in ``B`` and restoring them is meant). ``A`` and ``B``
hold two Keras models; one model under both names is told by ``model_aliases``. A copy
before or after the training loop (starting from a pretrained model, restoring the best
weights) stays silent. The fix is the copy the other way.

``usage`` is also what ``model_aliases`` reads to tell one model used under two names.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.training.user_code import (
    MAX_CALLED_FUNCTIONS,
    method_source,
    notebook_function,
)

SECTION = "clone-model"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 64
_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})
# Every weight list of a model: the trainable ones and the same without ``trainable_``.
_WEIGHT_LISTS = _VARIABLE_LISTS | {name.removeprefix("trainable_") for name in _VARIABLE_LISTS}
_TRAINING_CALLS = frozenset({"fit", "train_on_batch"})
_UPDATE_CALLS = frozenset({"gradient", "apply_gradients", "minimize", "apply"})
_MODEL_CLASSES = frozenset({"Model", "Sequential", "Functional", "Layer"})


@dataclass(frozen=True)
class Copy:
    """One copy of ``source``'s weights into ``into``, as written."""

    into: str
    source: str
    statement: str  # the first line of the copy
    line: int
    fix: str
    loop: int | None  # the index of the cell's top-level loop it runs in, None outside


@dataclass
class Usage:
    """What a cell (with the notebook functions it calls) reads, trains and copies."""

    reads: set[str] = field(default_factory=set)
    # trained name -> how: ``train_step`` (the function that trains it), or "" for the cell
    trained: dict[str, str] = field(default_factory=dict)
    copies: list[Copy] = field(default_factory=list)
    callees: dict[str, set[str]] = field(default_factory=dict)  # function -> names it trains
    # top-level loop index -> (names it trains, names it calls)
    loops: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)


def _trained_names(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr in _TRAINING_CALLS and isinstance(node.func.value, ast.Name):
            found.add(node.func.value.id)
        elif node.func.attr in _UPDATE_CALLS:
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                for inner in ast.walk(argument):
                    if (
                        isinstance(inner, ast.Attribute)
                        and inner.attr in _VARIABLE_LISTS
                        and isinstance(inner.value, ast.Name)
                    ):
                        found.add(inner.value.id)
    return found


def _first_line(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node) or ""
    return text.splitlines()[0] if text else ""


def _copies(source: str, tree: ast.Module) -> list[Copy]:
    loops: dict[int, int] = {}
    for index, statement in enumerate(tree.body):
        if isinstance(statement, ast.For | ast.While):
            for inner in ast.walk(statement):
                loops[id(inner)] = index
    found: list[Copy] = []
    for node in ast.walk(tree):
        # ``A.set_weights(B.get_weights())``
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "set_weights"
            and isinstance(node.func.value, ast.Name)
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Call)
            and call_name(node.args[0]) == "get_weights"
            and isinstance(node.args[0].func, ast.Attribute)
            and isinstance(node.args[0].func.value, ast.Name)
        ):
            into, origin = node.func.value.id, node.args[0].func.value.id
            if into != origin:
                found.append(
                    Copy(
                        into,
                        origin,
                        _first_line(source, node),
                        node.lineno,
                        f"{origin}.set_weights({into}.get_weights())",
                        loops.get(id(node)),
                    )
                )
        # ``for a, b in zip(A.weights, B.weights): a.assign(... b ...)``
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter) == "zip"
            and len(node.iter.args) == 2
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
            and all(isinstance(e, ast.Name) for e in node.target.elts)
        ):
            lists = node.iter.args
            owners = [
                a.value.id
                if isinstance(a, ast.Attribute)
                and a.attr in _WEIGHT_LISTS
                and isinstance(a.value, ast.Name)
                else None
                for a in lists
            ]
            first, second = (e.id for e in node.target.elts)  # type: ignore[attr-defined]
            if None in owners or owners[0] == owners[1]:
                continue
            for index, (into_var, from_var) in enumerate(((first, second), (second, first))):
                if _assigns_from(node, into_var, from_var):
                    into, origin = owners[index], owners[1 - index]
                    a_text = ast.get_source_segment(source, lists[0]) or ""
                    b_text = ast.get_source_segment(source, lists[1]) or ""
                    found.append(
                        Copy(
                            str(into),
                            str(origin),
                            _first_line(source, node),
                            node.lineno,
                            f"for {first}, {second} in zip({b_text}, {a_text}):",
                            loops.get(id(node)),
                        )
                    )
                    break
    return found


def _assigns_from(loop: ast.For, into_var: str, from_var: str) -> bool:
    for node in ast.walk(loop):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "assign"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == into_var
            and node.args
            and any(isinstance(n, ast.Name) and n.id == from_var for n in ast.walk(node.args[0]))
        ):
            return True
    return False


@dataclass(frozen=True)
class _CellFacts:
    """What a cell's own code reads, trains, copies and calls (cached by its source)."""

    reads: frozenset[str]
    trained: frozenset[str]
    copies: tuple[Copy, ...]
    called: frozenset[str]  # the names its statements outside any ``def`` call
    # per top-level statement index of a loop: (names it trains, names it calls)
    loops: tuple[tuple[int, frozenset[str], frozenset[str]], ...]


def _called_names(node: ast.AST) -> set[str]:
    return {
        n.func.id
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _cell_facts(source: str, skip_line: int | None) -> _CellFacts | None:
    tree = parsed_source(source)
    if tree is None:
        return None
    skipped: set[int] = set()
    for statement in tree.body:
        if skip_line is not None and statement.lineno == skip_line:
            skipped.update(id(n) for n in ast.walk(statement))
    # A function the cell defines but does not call runs later: told where it runs.
    called_anywhere = _called_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name not in called_anywhere:
                skipped.update(id(n) for n in ast.walk(node))
    reads = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in skipped
    }
    trained: set[str] = set()
    called: set[str] = set()
    loops: list[tuple[int, frozenset[str], frozenset[str]]] = []
    for index, statement in enumerate(tree.body):
        if id(statement) in skipped:
            continue
        trained |= _trained_names(statement)
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        # Only the calls the cell itself runs: a function a ``def`` of the cell calls is
        # one step further from this cell's code.
        called |= _called_names(statement)
        if isinstance(statement, ast.For | ast.While):
            loops.append(
                (index, frozenset(_trained_names(statement)), frozenset(_called_names(statement)))
            )
    return _CellFacts(
        frozenset(reads),
        frozenset(trained),
        tuple(_copies(source, tree)),
        frozenset(called),
        tuple(loops),
    )


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _function_facts(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names a notebook function's source reads, and those it trains."""
    tree = parsed_source(source)
    if tree is None:
        return frozenset(), frozenset()
    reads = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return frozenset(reads), frozenset(_trained_names(tree))


def usage(source: str, namespace: Mapping[str, Any], skip_line: int | None = None) -> Usage:
    """The names the cell reads (outside its top-level statement at ``skip_line``),
    trains and copies, the notebook functions its own statements call by name included
    (one level; not those called from a ``def`` of the cell)."""
    found = Usage()
    facts = _cell_facts(source, skip_line)
    if facts is None:
        return found
    found.reads = set(facts.reads)
    found.trained = dict.fromkeys(facts.trained, "")
    found.copies = list(facts.copies)
    found.loops = {index: (trains, calls) for index, trains, calls in facts.loops}
    for name in sorted(facts.called)[: 4 * MAX_CALLED_FUNCTIONS]:
        if len(found.callees) >= MAX_CALLED_FUNCTIONS:
            break
        function = notebook_function(namespace.get(name))
        method = method_source(function) if function is not None else None
        if method is None:
            continue
        reads, trains = _function_facts(method.source)
        found.reads |= reads
        found.callees[name] = set(trains)
        for trained in trains:
            found.trained.setdefault(trained, name)
    return found


def _trained_in(loop: int, name: str, found: Usage) -> str | None:
    """How the loop at ``loop`` trains ``name``: "" directly, a function's name through
    it; None."""
    trains, calls = found.loops.get(loop, (frozenset(), frozenset()))
    if name in trains:
        return ""
    for called in sorted(calls):
        if name in found.callees.get(called, ()):
            return called
    return None


def keras_model(value: Any) -> bool:
    """A Keras model or layer (by its classes' names and modules, nothing called)."""
    try:
        kinds = type(value).__mro__
    except Exception:
        return False
    return any(
        k.__name__ in _MODEL_CLASSES and k.__module__.startswith(("keras", "tf_keras"))
        for k in kinds
    )


def reversed_copy(found: Usage, copy: Copy) -> str | None:
    """How the loop around ``copy`` trains its destination, when its source is never
    trained nor given the destination's weights; None when the copy is not reversed."""
    if copy.loop is None or copy.source in found.trained:
        return None
    if any(
        c.into == copy.source and c.source == copy.into and c.loop == copy.loop
        for c in found.copies
    ):
        return None  # the best weights kept in ``source`` and put back, in the loop: meant
    return _trained_in(copy.loop, copy.into, found)


def copy_text(copy: Copy, through: str) -> str:
    how = f" (through `{through}`)" if through else ""
    return (
        f"`{copy.statement.strip()}` (line {copy.line}) runs inside the loop that trains "
        f"`{copy.into}`{how}, and copies into it the weights of `{copy.source}`, which "
        f"nothing trains: every copy throws away what `{copy.into}` learned since the "
        f"last one, and `{copy.source}` keeps its first weights."
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS:
        return []
    if "get_weights" not in source and ("assign" not in source or "zip" not in source):
        return []
    facts = _cell_facts(source, None)
    if facts is None or not any(c.loop is not None for c in facts.copies):
        return []
    found = usage(source, namespace)
    for copy in found.copies:
        into, origin = namespace.get(copy.into), namespace.get(copy.source)
        if into is origin or not keras_model(into) or not keras_model(origin):
            continue  # one model under two names: ``model_aliases`` tells it
        through = reversed_copy(found, copy)
        if through is None:
            continue
        return [
            reports.note(
                f"Weights copied the wrong way: {copy_text(copy, through)} Nothing raises. "
                f"Refresh the copy from the trained model instead: `{copy.fix}`.",
                SECTION,
            )
        ]
    return []
