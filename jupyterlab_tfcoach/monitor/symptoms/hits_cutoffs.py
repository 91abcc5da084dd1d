"""Hits@k (recall@k, precision@k) counted with ``<`` on ranks that start at 1.

A rank of 1 is the best place, so the hits at k are the ranks from 1 up to k included:
``np.mean(ranks <= k)``. Written ``np.mean(ranks < k)``, the ranks equal to k are left
out: hits@1 is 0 whatever the model does, and every other cut-off is too low. Nothing
raises.

Found after a cell that completed, from its source and the values its names hold. A cell
costs a few substring tests unless it holds ``<`` or ``>`` and a word of such a metric
(``hit``, ``recall``, ``precision``, or an ``@``). Then each comparison ``R < K`` (or
``K > R``) that is averaged or summed (``np.mean``, ``tf.reduce_mean``, ``.mean()``,
``np.sum``..., through casts) is read, when the cell names the metric (a name, a ``def``,
a print label or an f-string: ``hits``, ``hit_rate``, ``recall``, ``precision``, or an
``@``) and ``R``'s name says ranks (``rank``, ``position``). ``R`` and ``K`` are taken
where the statement runs: the namespace for the cell's top level, the arguments of the
cell's calls for a ``def``'s parameters, a loop or comprehension over literal numbers (or
a list of them) for a cut-off variable. Told only when the ranks are integers whose
smallest value is 1 (so they start at 1) and some cut-off K equals ranks that ``<``
drops; the note gives the figure for the smallest such K and the fix, the statement with
``<=`` (``>=``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import numpy_values, value_at
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    enclosing_functions,
    identifier_words,
    segment,
    text_words,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    int_literal,
    line_with_replacement,
    parsed_source,
)

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_CELL_CHARS = 30_000
_MAX_CUTOFFS = 64
_MAX_CALLS = 16
# Substrings one of which a cell must hold before it is parsed.
_METRIC_TEXTS = ("hit", "Hit", "HIT", "recall", "Recall", "precision", "Precision", "@")
_METRIC_WORDS = frozenset(
    {"hit", "hits", "hitrate", "hr", "recall", "recalls", "precision", "precisions"}
)
_RANK_WORDS = frozenset({"rank", "ranks", "ranked", "ranking", "rankings", "position", "positions"})
_AVERAGES = frozenset(
    {"mean", "nanmean", "average", "sum", "nansum", "count_nonzero", "reduce_mean", "reduce_sum"}
)
# Calls that pass a comparison on as numbers: ``tf.cast(r < k, tf.float32)``.
_SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)
_CASTS = frozenset({"cast", "astype", "float", "int", "asarray", "array", "to_float"})


def _compared(node: ast.AST) -> ast.Compare | None:
    """The comparison a reduction's operand is, through casts."""
    for _ in range(4):
        if isinstance(node, ast.Compare):
            return node
        if isinstance(node, ast.Call) and call_name(node) in _CASTS:
            if node.args and call_name(node) != "astype":
                node = node.args[0]
            elif isinstance(node.func, ast.Attribute):
                node = node.func.value
            else:
                return None
        else:
            return None
    return None


def _averaged_comparisons(tree: ast.AST) -> Iterator[ast.Compare]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and call_name(node) in _AVERAGES):
            continue
        operand: ast.AST | None = None
        if node.args:
            operand = node.args[0]
        elif isinstance(node.func, ast.Attribute):
            operand = node.func.value  # (ranks < k).mean()
        compare = _compared(operand) if operand is not None else None
        if compare is not None and len(compare.ops) == 1:
            yield compare


def _names_metric(tree: ast.AST) -> bool:
    """Whether the cell's names, labels or f-strings name hits, recall or precision."""
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Name):
            words = identifier_words(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            words = identifier_words(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "@" in node.value and len(node.value) < 200:
                return True
            words = text_words(node.value[:200])
        if any(word in _METRIC_WORDS for word in words):
            return True
    return False


class _Scopes:
    """Where a name used in a statement gets its values: the cell's loops and calls."""

    def __init__(self, tree: ast.Module, namespace: dict[str, Any]) -> None:
        self.tree = tree
        self.namespace = namespace
        self.owner = enclosing_functions(tree)

    def _calls_of(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        found = [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == function.name
        ]
        return found[:_MAX_CALLS]

    def _argument(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
    ) -> Iterator[tuple[ast.expr, ast.FunctionDef | ast.AsyncFunctionDef | None]]:
        """The expressions the cell's calls of ``function`` pass for parameter ``name``."""
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        for call in self._calls_of(function):
            given: ast.expr | None = None
            if name in params and params.index(name) < len(call.args):
                given = call.args[params.index(name)]
                if any(isinstance(a, ast.Starred) for a in call.args[: params.index(name) + 1]):
                    given = None
            for keyword in call.keywords:
                if keyword.arg == name:
                    given = keyword.value
            if given is not None:
                yield given, self.owner.get(id(call))

    def _is_parameter(self, function: ast.AST | None, name: str) -> bool:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        arguments = function.args
        return name in {a.arg for a in (*arguments.posonlyargs, *arguments.args)}

    def array_values(self, node: ast.expr, scope: ast.AST | None, depth: int = 0) -> Any | None:
        """A NumPy copy of the array or tensor a name holds where the statement runs."""
        if depth > 2 or not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        if isinstance(node, ast.Name) and self._is_parameter(scope, node.id):
            assert isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
            found = [
                self.array_values(given, owner, depth + 1)
                for given, owner in self._argument(scope, node.id)
            ]
            arrays = [value for value in found if value is not None]
            # Several calls given different arrays: which one the figure came from is unsure.
            return arrays[0] if len(arrays) == 1 else None
        if scope is not None:
            return None  # a local of a function: gone after the cell
        held = value_at(node, self.namespace, ast.unparse(node))
        return numpy_values(held) if held is not None else None

    def argument_text(self, node: ast.expr, scope: ast.AST | None) -> str | None:
        """The name the caller gave a parameter (``hits_at(test_ranks, k)``)."""
        if isinstance(node, ast.Name) and self._is_parameter(scope, node.id):
            assert isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
            given = [g for g, _ in self._argument(scope, node.id)]
            if len(given) == 1 and isinstance(given[0], ast.Name):
                return given[0].id
        return None

    def cutoffs(self, node: ast.expr, scope: ast.AST | None, depth: int = 0) -> list[int]:
        """The whole numbers a cut-off takes where the statement runs."""
        value = int_literal(node)
        if value is not None:
            return [value]
        if depth > 2 or not isinstance(node, ast.Name):
            return []
        name = node.id
        if self._is_parameter(scope, name):
            assert isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
            found: list[int] = []
            for given, owner in self._argument(scope, name):
                found.extend(self.cutoffs(given, owner, depth + 1))
            return found[:_MAX_CUTOFFS]
        looped = self._looped(name, scope)
        if looped is not None:
            return looped
        if scope is None:
            held = self.namespace.get(name)
            if type(held) is int:
                return [held]
        return []

    def _looped(self, name: str, scope: ast.AST | None) -> list[int] | None:
        """The numbers a ``for`` or comprehension over literal numbers binds to ``name``."""
        for node in ast.walk(scope if scope is not None else self.tree):
            if isinstance(node, (ast.For, ast.comprehension)):
                target, iterable = node.target, node.iter
            else:
                continue
            if not (isinstance(target, ast.Name) and target.id == name):
                continue
            if self.owner.get(id(node)) is not scope:
                continue
            return self._numbers(iterable)
        return None

    def _numbers(self, iterable: ast.expr) -> list[int] | None:
        if isinstance(iterable, (ast.Tuple, ast.List, ast.Set)):
            values = [int_literal(element) for element in iterable.elts]
            return [v for v in values if v is not None] if None not in values else None
        if isinstance(iterable, ast.Call) and call_name(iterable) == "range":
            bounds = [int_literal(a) for a in iterable.args]
            if iterable.args and None not in bounds and not iterable.keywords:
                numbers = list(range(*[b for b in bounds if b is not None]))
                return numbers[:_MAX_CUTOFFS]
            return None
        if isinstance(iterable, ast.Name):
            held = self.namespace.get(iterable.id)
            if type(held) in (list, tuple) and 0 < len(held) <= _MAX_CUTOFFS:
                if all(type(v) is int for v in held):
                    return list(held)
        return None


def _statement_of(tree: ast.Module, node: ast.AST) -> ast.stmt | None:
    """The innermost statement holding ``node``."""
    found: ast.stmt | None = None
    for candidate in ast.walk(tree):
        if isinstance(candidate, _SIMPLE_STATEMENTS):
            if any(inner is node for inner in ast.walk(candidate)):
                if found is None or candidate.lineno >= found.lineno:
                    found = candidate
    return found


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if "<" not in source and ">" not in source:
        return []
    if not any(text in source for text in _METRIC_TEXTS):
        return []
    lowered = source.lower()
    if "rank" not in lowered and "position" not in lowered:
        return []
    numpy = sys.modules.get("numpy")
    tree = parsed_source(source)
    if tree is None or numpy is None:
        return []
    comparisons = list(_averaged_comparisons(tree))
    if not comparisons or not _names_metric(tree):
        return []
    scopes = _Scopes(tree, namespace)
    lines = cell_lines(source)
    found: list[Note] = []
    for compare in comparisons:
        if len(found) >= MAX_NOTES:
            break
        op = compare.ops[0]
        if isinstance(op, ast.Lt):
            ranks, cutoff, fixed_op = compare.left, compare.comparators[0], "<="
        elif isinstance(op, ast.Gt):
            ranks, cutoff, fixed_op = compare.comparators[0], compare.left, ">="
        else:
            continue
        scope = scopes.owner.get(id(compare))
        ranks_text = segment(lines, ranks)
        if ranks_text is None:
            continue
        caller_text = scopes.argument_text(ranks, scope)
        words = identifier_words(ranks_text) + identifier_words(caller_text or "")
        if not any(word in _RANK_WORDS for word in words):
            continue
        values = scopes.array_values(ranks, scope)
        if values is None or values.size == 0 or values.dtype.kind not in "iuf":
            continue
        if values.dtype.kind == "f" and not bool(numpy.all(numpy.mod(values, 1) == 0)):
            continue
        if float(values.min()) != 1.0:
            continue  # ranks from 0 (where ``<`` is right), or none ranked first
        dropped = [
            (k, int(numpy.count_nonzero(values == k)))
            for k in sorted(set(scopes.cutoffs(cutoff, scope)))
            if k >= 1
        ]
        dropped = [(k, count) for k, count in dropped if count > 0]
        if not dropped:
            continue
        statement = _statement_of(tree, compare)
        cutoff_text = segment(lines, cutoff)
        compare_text = segment(lines, compare)
        written = segment(lines, statement) if statement is not None else None
        if statement is None or cutoff_text is None or compare_text is None or written is None:
            continue
        left, right = (
            (ranks_text, cutoff_text) if isinstance(op, ast.Lt) else (cutoff_text, ranks_text)
        )
        fixed = line_with_replacement(lines, statement, compare, f"{left} {fixed_op} {right}")
        if fixed is None:
            continue
        k, count = dropped[0]
        function = scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        where = f"line {statement.lineno} of this cell" + (
            f", in `{function.name}`" if function is not None else ""
        )
        shown = caller_text or ranks_text
        if k == 1:
            effect = (
                f"At the cut-off 1 the figure is 0 whatever the model does, although {count} "
                f"of the {values.size} ranks in `{shown}` are 1"
            )
        else:
            effect = (
                f"At the cut-off {k} the {count} ranks in `{shown}` equal to {k} are not counted"
            )
        found.append(
            reports.note(
                f"`{written}` ({where}) counts the ranks strictly below `{cutoff_text}`, but "
                f"the ranks start at 1 (the smallest in `{shown}` is 1): a rank equal to the "
                f"cut-off is still among the first `{cutoff_text}`, and `{compare_text}` "
                f"leaves it out. {effect}, so the figure at every cut-off comes out too low, "
                "without any error. Count the ranks up to the cut-off included: "
                f"`{fixed}`.",
                SECTION,
            )
        )
    return found
